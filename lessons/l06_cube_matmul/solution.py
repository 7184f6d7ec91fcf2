"""Lesson 6 reference solution: C = A @ B on one Cube core, GM -> L1 -> L0A/L0B -> Cube -> L0C -> GM."""

from engine import asc

BM, BN, BK = 64, 64, 64  # base block: multiples of the Cube's 16 x 16 x 16 fractal


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
            acc = co1.alloc_tensor(asc.float32, shape=(BM, BN))
            for k0 in range(0, k, BK):
                kk = min(BK, k - k0)
                a_l1 = a1.alloc_tensor(asc.half, shape=(BM, BK))
                asc.data_copy(a_l1.tile(0, 0, rows, kk), a_gm.tile(m0, k0, rows, kk, k))  # MTE2: GM -> L1
                a1.enque(a_l1)
                b_l1 = b1.alloc_tensor(asc.half, shape=(BK, BN))
                asc.data_copy(b_l1.tile(0, 0, kk, cols), b_gm.tile(k0, n0, kk, cols, n))
                b1.enque(b_l1)
                multiply_accumulate(a1, b1, a2, b2, acc, rows, cols, kk, first=(k0 == 0))
            co1.enque(acc)
            write_back(co1, c_gm, m0, n0, rows, cols, n)


def multiply_accumulate(a1, b1, a2, b2, acc, rows, cols, kk, first):
    """L1 -> L0A / L0B on MTE1, then acc (+)= A_tile @ B_tile on the Cube."""
    a_l1, b_l1 = a1.deque(), b1.deque()
    a_l0 = a2.alloc_tensor(asc.half, shape=(BM, BK))
    asc.load_data(a_l0, a_l1.tile(0, 0, rows, kk))
    a2.enque(a_l0)
    b_l0 = b2.alloc_tensor(asc.half, shape=(BK, BN))
    asc.load_data(b_l0, b_l1.tile(0, 0, kk, cols))
    b2.enque(b_l0)
    a_l0, b_l0 = a2.deque(), b2.deque()
    asc.mmad(acc, a_l0, b_l0, asc.MmadParams(rows, cols, kk, cmatrix_init_val=first))
    a2.free_tensor(a_l0)
    b2.free_tensor(b_l0)
    a1.free_tensor(a_l1)
    b1.free_tensor(b_l1)


def write_back(co1, c_gm, m0, n0, rows, cols, n):
    """The finished fp32 block leaves L0C through the fixpipe, into its place in C."""
    acc = co1.deque()
    asc.fixpipe(c_gm.tile(m0, n0, rows, cols, n), acc, asc.FixpipeParams(rows, cols))
    co1.free_tensor(acc)


PREDICTIONS = {"mmad_count": "8"}
