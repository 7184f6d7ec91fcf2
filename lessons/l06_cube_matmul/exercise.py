"""Lesson 6 exercise: C = A @ B on one Cube core, in the Cube's own data layouts.

The kernel below walks C base block by base block and K slice by K slice, with its queues in place. The data
path between them is yours, and every step of it must leave the data in the layout the next one reads:
to_nz brings a tile from GM (ND) into L1 as NZ; multiply_accumulate loads A into L0A as ZZ and B into L0B as
ZN and has the Cube accumulate their product into L0C (which it keeps as NZ); write_back sends the finished
block through the fixpipe back to GM as ND. Lesson 6's text and steps say what each layout is and which
parameter struct moves data into it; asc.Nd2NzParams, asc.LoadData2DParams, asc.MmadParams and
asc.FixpipeParamsV220 are CANN's structs with pyasc's field names. A wrong layout stops the kernel with an
error naming the layout expected and the one found. The inputs are fp16, the accumulation and C are fp32.
Check it with:  ascendsim lesson check 6

第 6 课练习：在一个 Cube 核上、以 Cube 自己的数据排布计算 C = A @ B。
下面的核函数已经按基本块遍历 C、按 K 分片遍历 K，队列也都已就绪。中间的数据通路由你来写，而且每一步都必须把数据放成
下一步读取的排布：to_nz 把分块从 GM（ND）搬入 L1 并转成 NZ；multiply_accumulate 把 A 以 ZZ 载入 L0A、把 B 以 ZN 载入
L0B，再让 Cube 把它们的乘积累加到 L0C（L0C 中是 NZ）；write_back 把完成的块经 fixpipe 以 ND 写回 GM。每种排布是什么、
用哪个参数结构体把数据搬进去，见第 6 课的正文和步骤；asc.Nd2NzParams、asc.LoadData2DParams、asc.MmadParams 和
asc.FixpipeParamsV220 就是 CANN 的结构体，字段名与 pyasc 相同。排布错误时核函数会报错，并指出期望的排布和实际的排布。
输入为 fp16，累加和 C 为 fp32。
检查：ascendsim lesson check 6
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
    # TODO (1 line): one data_copy that converts the tile to NZ on its way into l1. The columns of fractals
    #   it writes must sit far enough apart in L1 for every row of the tile, counted in whole fractals.


def multiply_accumulate(a1, b1, a2, b2, acc, rows, cols, kk, first):
    """L1 -> L0A (ZZ) and L0B (ZN) on MTE1, then acc (+)= A_tile @ B_tile on the Cube."""
    a_l1, b_l1 = a1.deque(), b1.deque()
    a_l0 = a2.alloc_tensor(asc.half)
    # TODO (about 3 lines): fill a_l0 with A's tile as ZZ: L1 keeps it as NZ, and each load_data call moves
    #   whole 16 x 16 fractals, so think about where the fractals of one row of ZZ sit in L1.
    a2.enque(a_l0)
    b_l0 = b2.alloc_tensor(asc.half)
    # TODO (about 3 lines): fill b_l0 with B's tile as ZN, from its NZ copy in L1.
    b2.enque(b_l0)
    a_l0, b_l0 = a2.deque(), b2.deque()
    # TODO (1 or 2 lines): have the Cube add a_l0 @ b_l0 to acc, overwriting acc on the first K slice only
    #   (as `first` says). Every block size the loops produce must work.
    a2.free_tensor(a_l0)
    b2.free_tensor(b_l0)
    a1.free_tensor(a_l1)
    b1.free_tensor(b_l1)


def write_back(co1, c_gm, rows, cols, n):
    """L0C (NZ, fp32) -> C in GM (ND, fp32) through the fixpipe; ``c_gm`` starts at the block's first element."""
    acc = co1.deque()
    # TODO (1 line): send the rows x cols block to C through the fixpipe, back from NZ to ND (C's rows are n
    #   elements long), fp32 kept.
    co1.free_tensor(acc)


# Predict before you run: A[0:64, 0:64] sits in L0A as ZZ, 16 fractals of 16 x 16 numbered 0, 1, 2, ... in the
# order they sit in memory. Which number is the fractal holding A[16:32, 48:64]? "3", "7", "13" or "16".
PREDICTIONS = {"l0a_place": None}  # TODO
