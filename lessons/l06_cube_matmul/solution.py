"""Lesson 6 reference solution: C = A @ B on one Cube core, in the Cube's own data layouts.

GM (ND) -> L1 (NZ, data_copy with Nd2NzParams) -> L0A (ZZ) / L0B (ZN) (load_data with LoadData2DParams,
one row of fractals per call) -> Cube (mmad) -> L0C (NZ) -> GM (ND, fixpipe with FixpipeParamsV220).
"""

from engine import asc

BM, BN, BK = 64, 64, 64  # base block: multiples of the Cube's 16 x 16 x 16 fractal
F = 16  # rows (and fp16 columns) of one fractal


def up16(x: int) -> int:
    return -(-x // F) * F


@asc.jit(kernel_type=asc.KernelType.AIC_ONLY)
def matmul_cube(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, m: int, n: int, k: int):
    """C[m, n] (fp32) = A[m, k] (fp16) @ B[k, n] (fp16), base block by base block, K slice by K slice."""
    a_gm, b_gm, c_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a, m * k)
    b_gm.set_global_buffer(b, k * n)
    c_gm.set_global_buffer(c, m * n)
    pipe = asc.TPipe()
    a1, b1 = asc.TQue(asc.TPosition.A1, 1), asc.TQue(asc.TPosition.B1, 1)  # L1
    a2, b2 = asc.TQue(asc.TPosition.A2, 1), asc.TQue(asc.TPosition.B2, 1)  # L0A, L0B
    co1 = asc.TQue(asc.TPosition.CO1, 1)  # L0C
    pipe.init_buffer(que=a1, num=1, len=BM * BK * asc.half.sizeof())
    pipe.init_buffer(que=b1, num=1, len=BK * BN * asc.half.sizeof())
    pipe.init_buffer(que=a2, num=1, len=BM * BK * asc.half.sizeof())
    pipe.init_buffer(que=b2, num=1, len=BK * BN * asc.half.sizeof())
    pipe.init_buffer(que=co1, num=1, len=BM * BN * asc.float32.sizeof())
    for m0 in range(0, m, BM):
        for n0 in range(0, n, BN):
            rows, cols = min(BM, m - m0), min(BN, n - n0)
            acc = co1.alloc_tensor(asc.float32)
            for k0 in range(0, k, BK):
                kk = min(BK, k - k0)
                a_l1 = a1.alloc_tensor(asc.half)
                to_nz(a_l1, a_gm[m0 * k + k0 :], rows, kk, k)  # MTE2: A's tile, GM (ND) -> L1 (NZ)
                a1.enque(a_l1)
                b_l1 = b1.alloc_tensor(asc.half)
                to_nz(b_l1, b_gm[k0 * n + n0 :], kk, cols, n)  # MTE2: B's tile
                b1.enque(b_l1)
                multiply_accumulate(a1, b1, a2, b2, acc, rows, cols, kk, first=(k0 == 0))
            co1.enque(acc)
            write_back(co1, c_gm[m0 * n + n0 :], rows, cols, n)


def to_nz(l1, gm, rows, cols, width):
    """GM -> L1: the rows x cols tile that starts at ``gm`` (rows ``width`` elements apart) becomes NZ."""
    asc.data_copy(l1, gm, asc.Nd2NzParams(1, rows, cols, 0, width, up16(rows), 1, 0))


def multiply_accumulate(a1, b1, a2, b2, acc, rows, cols, kk, first):
    """L1 -> L0A (ZZ) and L0B (ZN) on MTE1, then acc (+)= A_tile @ B_tile on the Cube."""
    a_l1, b_l1 = a1.deque(), b1.deque()
    m1, n1, k1 = up16(rows) // F, up16(cols) // F, up16(kk) // F
    a_l0 = a2.alloc_tensor(asc.half)
    for i in range(m1):  # NZ -> ZZ: row i of A's fractals, each a column of m1 fractals further on in L1
        asc.load_data(a_l0[i * k1 * F * F :], a_l1[i * F * F :], asc.LoadData2DParams(0, k1, m1))
    a2.enque(a_l0)
    b_l0 = b2.alloc_tensor(asc.half)
    for i in range(k1):  # NZ -> ZN: row i of B's fractals, each fractal transposed on the way
        asc.load_data(b_l0[i * n1 * F * F :], b_l1[i * F * F :], asc.LoadData2DParams(0, n1, k1, if_transpose=True))
    b2.enque(b_l0)
    a_l0, b_l0 = a2.deque(), b2.deque()
    m = F if rows == 1 else rows  # m = 1 would put the Cube in GEMV mode, which reads L0A as ND
    asc.mmad(acc, a_l0, b_l0, asc.MmadParams(m, cols, kk, cmatrix_init_val=first))
    a2.free_tensor(a_l0)
    b2.free_tensor(b_l0)
    a1.free_tensor(a_l1)
    b1.free_tensor(b_l1)


def write_back(co1, c_gm, rows, cols, n):
    """L0C (NZ, fp32) -> C in GM (ND, fp32) through the fixpipe; ``c_gm`` starts at the block's first element."""
    acc = co1.deque()
    asc.fixpipe(c_gm, acc, asc.FixpipeParamsV220(cols, rows, up16(rows), n))
    co1.free_tensor(acc)


PREDICTIONS = {"l0a_place": "7"}
