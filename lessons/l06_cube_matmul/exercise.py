"""Lesson 6 exercise: C = A @ B on one Cube core: load_data, mmad, fixpipe.

The kernel below brings tiles of A and B from GM into L1 (MTE2). Write the rest of the data path:
multiply_accumulate moves the L1 tiles into L0A and L0B with load_data (MTE1) and multiplies them
into the L0C accumulator with mmad (the Cube); write_back moves the finished fp32 block from L0C to
C in GM with fixpipe. The inputs are fp16, the accumulation and C are fp32.
Check it with:  ascendsim lesson check 6

第 6 课练习：在一个 Cube 核上计算 C = A @ B：load_data、mmad、fixpipe。
下面的核函数已经把 A 和 B 的分块从 GM 搬入 L1（MTE2）。请写出其余的数据通路：multiply_accumulate 用 load_data
（MTE1）把 L1 中的分块搬入 L0A 和 L0B，再用 mmad（Cube）相乘并累加到 L0C；write_back 用 fixpipe 把完成的 fp32
分块从 L0C 写到 GM 中的 C。输入为 fp16，累加和 C 为 fp32。
检查：ascendsim lesson check 6
"""

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
    # TODO (about 12 lines): move the A tile (rows x kk) from L1 into an L0A tensor of a2 and the B tile
    #   (kk x cols) into an L0B tensor of b2 on MTE1, through their queues as write_back and the caller do,
    #   then have the Cube accumulate their product into acc (overwriting it on the first K slice only,
    #   as `first` says), and give the L0 slots back. Lesson 6's steps show each instruction.
    a1.free_tensor(a_l1)
    b1.free_tensor(b_l1)


def write_back(co1, c_gm, m0, n0, rows, cols, n):
    """The finished fp32 block leaves L0C through the fixpipe, into its place in C."""
    acc = co1.deque()
    # TODO (1 line): write the finished rows x cols block of acc into its place in C, through the fixpipe.
    co1.free_tensor(acc)


# Predict before you run: how many mmad instructions does a 128 x 128 x 128 matmul issue with this
# kernel's 64 x 64 x 64 base blocks? "2", "4", "8" or "16".
PREDICTIONS = {"mmad_count": None}  # TODO
