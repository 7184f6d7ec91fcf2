"""Lesson 11 reference solution: C = LeakyReLU(A @ B) on each AI core's Cube and its two Vector cores (MIX 1:2).

The AIC computes the base blocks of its region of C and leaves each, fp32, in one of its GM workspace slots (the
host's t.slots, two here); the two AIVs of the same AI core each read half of the block's rows back, apply LeakyReLU,
cast to fp16 and write C. Cross-core flags (mode 2) hand the slots back and forth: READY + slot (AIC -> both AIVs)
after the fixpipe wrote the slot, FREE + slot (each AIV -> AIC) after the AIV's reads of the slot.
"""

from engine import TilingContext, asc

READY, FREE = 0, 4  # cross-core flag ids: READY + slot (AIC -> AIVs), FREE + slot (AIVs -> AIC); ids 0..7
CHUNK = 8192  # fp32 elements an AIV moves through UB at a time (32 KiB)
BASE_M, BASE_N, BASE_K = 128, 256, 64  # lesson 7's base block
MAX_K = 256  # a block's rows of A and columns of B fit L1 whole, twice: (128 + 256) x 256 x 2 B x 2 = 384 KiB
F = 16  # rows (and fp16 columns) of one fractal


class MatmulLeakyReluTilingData(asc.TilingData):  # BEGIN_TILING_DATA_DEF(MatmulLeakyReluTilingData)
    m = asc.Field(asc.uint32)
    n = asc.Field(asc.uint32)
    k = asc.Field(asc.uint32)
    single_core_m = asc.Field(asc.uint32)  # each AI core's rows of C (all N columns)
    base_m = asc.Field(asc.uint32)  # one base block: base_m x base_n, base_k of K per mmad
    base_n = asc.Field(asc.uint32)
    base_k = asc.Field(asc.uint32)
    slots = asc.Field(asc.uint32)  # fp32 base blocks of GM workspace per AI core (1 to 4)
    alpha = asc.Field(asc.float32)  # LeakyReLU's slope for x < 0


def matmul_leaky_relu_tiling(
    context: TilingContext, m: int, n: int, k: int, cores: int, alpha: float, slots: int = 2
) -> int:
    """Host side: C split over at most ``cores`` AI cores by rows of base blocks; returns the GM workspace the
    kernel needs in bytes (``slots`` fp32 base blocks per AI core)."""
    if not 1 <= k <= MAX_K or not 1 <= slots <= 4:
        raise ValueError(f"k must be 1..{MAX_K} and slots 1..4, got k={k}, slots={slots}")
    rows_of_blocks = -(-m // BASE_M)
    single_m = -(-rows_of_blocks // min(cores, rows_of_blocks)) * BASE_M
    used = -(-m // single_m)
    tiling = MatmulLeakyReluTilingData(m=m, n=n, k=k, single_core_m=single_m, slots=slots, alpha=alpha)
    tiling.base_m, tiling.base_n, tiling.base_k = BASE_M, BASE_N, BASE_K
    context.set_block_dim(used)  # MIX 1:2: one block is one AI core's group of 1 AIC + 2 AIVs
    tiling.save_to_buffer(context.get_raw_tiling_data())
    return used * slots * BASE_M * BASE_N * asc.float32.sizeof()


def up16(x: int) -> int:
    return -(-x // F) * F


def window(height, width, m_start, k_start, rows, cols):
    """L1 -> L0 of the ``rows x cols`` window at (``m_start``, ``k_start``) of an NZ matrix ``height`` rows high and
    ``width`` columns wide: the image-to-column load used as a matmul load (a 1 x 1 filter over one row)."""
    return asc.LoadData3DParamsV2(
        l1_h=1,
        l1_w=height,
        channel_size=width,
        k_extension=cols,
        m_extension=rows,
        k_start_pt=k_start,
        m_start_pt=m_start,
    )


@asc.jit(kernel_type=asc.KernelType.MIX_AIC_1_2)
def matmul_leaky_relu(
    a: asc.GlobalAddress,
    b: asc.GlobalAddress,
    c: asc.GlobalAddress,
    workspace: asc.GlobalAddress,
    tiling: asc.TilingAddress,
):
    t = asc.get_tiling_data(tiling)
    block = asc.get_block_idx()
    m0 = block * t.single_core_m
    rows = min(t.single_core_m, t.m - m0)
    blocks = [  # (first row, first column, rows, columns) of each base block of this AI core's rows of C
        (bm, bn, min(t.base_m, m0 + rows - bm), min(t.base_n, t.n - bn))
        for bm in range(m0, m0 + rows, t.base_m)
        for bn in range(0, t.n, t.base_n)
    ]
    slot_elems = t.base_m * t.base_n
    work = asc.GlobalTensor()  # this AI core's fp32 slots
    work.set_global_buffer(workspace + block * t.slots * slot_elems, t.slots * slot_elems)
    if asc.ascend_is_aic():
        cube_part(t, a, b, work, blocks)
    else:
        vector_part(t, c, work, blocks)


def cube_part(t, a, b, work, blocks):
    """The AIC: every base block through L1/L0 to L0C, then the fixpipe writes it (fp32, ND) to a workspace slot."""
    a_gm, b_gm = asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a, t.m * t.k)
    b_gm.set_global_buffer(b, t.k * t.n)
    pipe = asc.TPipe()
    a1, b1 = asc.TQue(asc.TPosition.A1, 2), asc.TQue(asc.TPosition.B1, 2)  # L1, two blocks' worth
    a2, b2 = asc.TQue(asc.TPosition.A2, 2), asc.TQue(asc.TPosition.B2, 2)  # L0A, L0B, double-buffered
    co1 = asc.TQue(asc.TPosition.CO1, 1)  # L0C: one 128 x 256 fp32 block fills it
    pipe.init_buffer(que=a1, num=2, len=t.base_m * up16(t.k) * asc.half.sizeof())
    pipe.init_buffer(que=b1, num=2, len=up16(t.k) * t.base_n * asc.half.sizeof())
    pipe.init_buffer(que=a2, num=2, len=t.base_m * t.base_k * asc.half.sizeof())
    pipe.init_buffer(que=b2, num=2, len=t.base_k * t.base_n * asc.half.sizeof())
    pipe.init_buffer(que=co1, num=1, len=t.base_m * t.base_n * asc.float32.sizeof())
    for i, (bm, bn, mr, nc) in enumerate(blocks):
        slot = i % t.slots
        matmul_block(t, a_gm[bm * t.k :], b_gm[bn:], (a1, b1, a2, b2), co1, mr, nc)
        if i >= t.slots:  # the slot held block i - slots: both AIVs must have read it before the fixpipe overwrites it
            asc.cross_core_wait_flag(FREE + slot)
        acc = co1.deque()
        asc.fixpipe(work[slot * t.base_m * t.base_n :], acc, asc.FixpipeParamsV220(nc, mr, up16(mr), t.base_n))
        co1.free_tensor(acc)
        asc.cross_core_set_flag(READY + slot, pipe=asc.PipeID.PIPE_FIX)  # once the fixpipe has written it
    for i in range(max(0, len(blocks) - t.slots), len(blocks)):
        asc.cross_core_wait_flag(FREE + i % t.slots)  # every set of the AIVs is taken before the kernel ends


def matmul_block(t, a_gm, b_gm, queues, co1, mr, nc):
    """One base block, lesson 7's way: A's mr rows and B's nc columns GM (ND) -> L1 (NZ), then K slice by K slice
    L1 -> L0A (ZZ) / L0B (ZN) and mmad into a fresh L0C tensor (NZ), left enqueued on ``co1``."""
    a1, b1, a2, b2 = queues
    m16, n16, k16 = up16(mr), up16(nc), up16(t.k)
    a_l1 = a1.alloc_tensor(asc.half)
    asc.data_copy(a_l1, a_gm, asc.Nd2NzParams(1, mr, t.k, 0, t.k, m16, 1, 0))
    a1.enque(a_l1)
    b_l1 = b1.alloc_tensor(asc.half)
    asc.data_copy(b_l1, b_gm, asc.Nd2NzParams(1, t.k, nc, 0, t.n, k16, 1, 0))
    b1.enque(b_l1)
    a_l1, b_l1 = a1.deque(), b1.deque()
    acc = co1.alloc_tensor(asc.float32)
    for k0 in range(0, t.k, t.base_k):
        kk = min(t.base_k, t.k - k0)
        a_l0 = a2.alloc_tensor(asc.half)
        asc.load_data(a_l0, a_l1, window(m16, k16, 0, k0, m16, up16(kk)))  # A's m16 x kk window
        a2.enque(a_l0)
        b_l0 = b2.alloc_tensor(asc.half)
        asc.load_data(b_l0, b_l1, window(k16, n16, k0, 0, up16(kk), n16))  # B's kk x n16 window
        b2.enque(b_l0)
        a_l0, b_l0 = a2.deque(), b2.deque()
        m = F if mr == 1 else mr  # m = 1 would put the Cube in GEMV mode, which reads L0A as ND
        asc.mmad(acc, a_l0, b_l0, asc.MmadParams(m, nc, kk, cmatrix_init_val=k0 == 0))
        a2.free_tensor(a_l0)
        b2.free_tensor(b_l0)
    a1.free_tensor(a_l1)
    b1.free_tensor(b_l1)
    co1.enque(acc)


def vector_part(t, c, work, blocks):
    """An AIV: its half of each base block's rows, workspace -> UB -> LeakyReLU -> fp16 -> C."""
    c_gm = asc.GlobalTensor()
    c_gm.set_global_buffer(c, t.m * t.n)
    pipe = asc.TPipe()
    in_q, out_q = asc.TQue(asc.TPosition.VECIN, 2), asc.TQue(asc.TPosition.VECOUT, 2)
    tmp_buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(que=in_q, num=2, len=CHUNK * asc.float32.sizeof())
    pipe.init_buffer(que=out_q, num=2, len=CHUNK * asc.half.sizeof())
    pipe.init_buffer(buf=tmp_buf, num=CHUNK * asc.float32.sizeof())
    tmp = tmp_buf.get(asc.float32)
    for i, (bm, bn, mr, nc) in enumerate(blocks):
        slot = i % t.slots
        upper = (mr + 1) // 2  # AIV 0 takes the upper half of the rows (the extra one when mr is odd)
        r0, my_rows = (0, upper) if asc.get_subblockidx() == 0 else (upper, mr - upper)
        asc.cross_core_wait_flag(READY + slot)  # the Cube's block is in the slot
        step = max(1, CHUNK // nc)
        for r in range(r0, r0 + my_rows, step):
            n_rows = min(step, r0 + my_rows - r)
            src = work.tile(slot * t.base_m + r, 0, n_rows, nc, t.base_n)  # rows of the slot
            dst = c_gm.tile(bm + r, bn, n_rows, nc, t.n)  # the same rows of C
            leaky_relu_rows(in_q, out_q, tmp, src, dst, n_rows * nc, t.alpha)
        asc.cross_core_set_flag(FREE + slot, pipe=asc.PipeID.PIPE_MTE2)  # once my reads of the slot are done


def leaky_relu_rows(in_q, out_q, tmp, src, dst, count, alpha):
    """A tile of ``count`` fp32 values (whole rows): GM -> UB, max(x, alpha * x), cast to fp16, UB -> GM."""
    x = in_q.alloc_tensor(asc.float32)
    asc.data_copy(x, src)
    in_q.enque(x)
    x = in_q.deque()
    asc.muls(tmp, x, alpha, count)
    asc.max(x, x, tmp, count)  # LeakyReLU, for 0 <= alpha <= 1
    y = out_q.alloc_tensor(asc.half)
    asc.cast(y, x, "CAST_ROUND", count)
    in_q.free_tensor(x)
    out_q.enque(y)
    y = out_q.deque()
    asc.data_copy(dst, y)
    out_q.free_tensor(y)


PREDICTIONS = {"one_slot": "about the same", "workspace_bytes": "256 KiB"}
