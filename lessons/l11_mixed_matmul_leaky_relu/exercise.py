"""Lesson 11 exercise: C = LeakyReLU(A @ B) on each AI core's Cube (AIC) and its two Vector cores (AIV), MIX 1:2.

The host tiling (matmul_leaky_relu_tiling) and the data paths are written: the AIC computes each base block of its
region of C and the fixpipe leaves it, fp32, in one of the GM workspace slots the host gave this AI core
(t.slots, two here); each AIV reads rows of the block back into UB, applies LeakyReLU, casts to fp16 and
writes C. What is missing is the cooperation: the three cores run at the same time and nothing orders them.
Write (the TODOs say where):
  1. in vector_part, which rows of each block this AIV takes: AIV 0 and AIV 1 (asc.get_subblockidx()) share
     every block, each about half of its rows, every row read exactly once (about 2 lines);
  2. the cross-core flags (asc.cross_core_set_flag / asc.cross_core_wait_flag, mode 2), so that an AIV never
     reads a slot before the fixpipe has written it, the fixpipe never overwrites a slot before both AIVs have
     read what it held, no core waits for a flag nobody will set, and the Cube still computes the next block
     while the vectors work on this one (about 6 lines in all, on both sides).
The check runs 512 x 2048 x 256 on ascend910b1 and hidden cases (their kinds are listed in the lesson, their
values never shown), and reads the race detector: a slot read or overwritten out of order is a finding.
Check it with:  ascendsim lesson check 11

第 11 课练习：在每个 AI Core 的 Cube 核（AIC）和它的两个 Vector 核（AIV）上计算 C = LeakyReLU(A @ B)，MIX 1:2。
主机 tiling（matmul_leaky_relu_tiling）和数据通路都已写好：AIC 计算它那部分 C 的每个基本块，fixpipe 把它以 fp32
写入主机分给这个 AI Core 的某个 GM workspace 槽位（t.slots，这里是两个）；每个 AIV 把块的若干行读回 UB，做
LeakyReLU，转成 fp16 并写入 C。缺的是协作：三个核同时运行，没有任何东西约束它们的先后。请写出（位置见 TODO）：
  1. 在 vector_part 中，这个 AIV 负责每个块的哪些行：AIV 0 和 AIV 1（asc.get_subblockidx()）共同处理每个块，
     各处理约一半的行，每一行恰好读一次（约 2 行代码）；
  2. 跨核 flag（asc.cross_core_set_flag / asc.cross_core_wait_flag，模式 2），使 AIV 绝不在 fixpipe 写完之前读取
     槽位，fixpipe 绝不在两个 AIV 都读完之前覆盖槽位，没有核去等一个不会再被 set 的 flag，并且向量核处理这个块时
     Cube 仍在计算下一个块（两侧合计约 6 行代码）。
检查在 ascend910b1 上运行 512 x 2048 x 256 以及隐藏用例（其类型列在课程中，具体数值从不显示），并读取数据竞争
检测器的结果：槽位被乱序读取或覆盖都会被报告。
检查：ascendsim lesson check 11
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
        # TODO (about 2 lines): the slot may still hold an earlier block the AIVs are reading
        acc = co1.deque()
        asc.fixpipe(work[slot * t.base_m * t.base_n :], acc, asc.FixpipeParamsV220(nc, mr, up16(mr), t.base_n))
        co1.free_tensor(acc)
        # TODO (1 line): the AIVs may now read the slot
    # TODO (about 2 lines): take every signal the AIVs will still send before the kernel ends (good practice: a set
    # nobody waits for stays in its counter; the check does not judge it)


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
        # TODO (about 2 lines): this AIV's rows r0 .. r0 + my_rows - 1 of the block's mr rows; as given, both AIVs
        # take all of them
        r0, my_rows = 0, mr
        # TODO (1 line): the Cube's block must be in the slot before this AIV reads it
        step = max(1, CHUNK // nc)
        for r in range(r0, r0 + my_rows, step):
            n_rows = min(step, r0 + my_rows - r)
            src = work.tile(slot * t.base_m + r, 0, n_rows, nc, t.base_n)  # rows of the slot
            dst = c_gm.tile(bm + r, bn, n_rows, nc, t.n)  # the same rows of C
            leaky_relu_rows(in_q, out_q, tmp, src, dst, n_rows * nc, t.alpha)
        # TODO (1 line): tell the Cube this AIV's reads of the slot are done


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


# Predict before you run: at 512 x 2048 x 256 (4 AI cores, 8 base blocks each), how much longer does the kernel
# take with one workspace slot per AI core instead of two? "about the same", "about 1.3x" or "about 2x".
# And: how many bytes of GM traffic does one 128 x 256 base block cost on its way through the workspace (the
# fixpipe's writes and the AIVs' reads together)? "64 KiB", "128 KiB", "256 KiB" or "512 KiB".
PREDICTIONS = {"one_slot": None, "workspace_bytes": None}  # TODO
