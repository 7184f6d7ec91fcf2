"""Lesson 7 exercise: a TCubeTiling for C = A @ B on 24 Cube cores that reaches 70 % of the Cube's peak.

make_tiling(m, n, k, cores) returns the TCubeTiling the shipped kernel (engine.kernels.matmul.
matmul_tiled) runs with: how C is split over the cores (singleCoreM x singleCoreN regions), the base
block each mmad computes (baseM x baseN, baseK of K per mmad), how deep K streams through L1
(stepKa, stepKb) and which buffers are doubled (dbL0A, dbL0B; depthA1 and depthB1 count the base blocks
L1 holds, as in CANN, so a doubled L1 is depthA1 = 2 x stepKa; the base sizes are whole 16 x 16 fractals,
the unit of lesson 6's layouts). The stub below is
valid but uses one core with small blocks. Choose the numbers yourself; the limits are in lesson 7's
text and engine/aicore/matmul_tiling.py validates them.
Check it with:  ascendsim lesson check 7

第 7 课练习：为 24 个 Cube 核上的 C = A @ B 设计一个能达到 Cube 峰值 70 % 的 TCubeTiling。
make_tiling(m, n, k, cores) 返回自带核函数（engine.kernels.matmul.matmul_tiled）使用的 TCubeTiling：C 如何划分到
各个核（singleCoreM x singleCoreN 的区域）、每条 mmad 计算的基本块（baseM x baseN，每次 baseK 的 K）、K 以多深的
步长流经 L1（stepKa、stepKb），以及哪些缓冲区做双缓冲（dbL0A、dbL0B；depthA1、depthB1 与 CANN 一样表示 L1 中
基本块的份数，所以 L1 双缓冲时 depthA1 = 2 x stepKa；基本块的大小都是完整的 16 x 16 分形，即第 6 课各种排布的单位）。
下面的桩代码是合法的，
但只用一个核和很小的块。请自己选择这些数值；限制条件见第 7 课正文，engine/aicore/matmul_tiling.py 会检查它们。
检查：ascendsim lesson check 7
"""

from engine.aicore.matmul_tiling import TCubeTiling


def make_tiling(m: int, n: int, k: int, cores: int) -> TCubeTiling:
    """The tiling of C[m, n] = A[m, k] @ B[k, n] (fp16 in, fp32 accumulation, fp16 C) on up to `cores` cores."""
    # TODO (about 25 lines): split C over the cores, pick the base block and the K step, double-buffer.
    return TCubeTiling(
        usedCoreNum=1,
        M=m,
        N=n,
        Ka=k,
        Kb=k,
        singleCoreM=m,
        singleCoreN=n,
        singleCoreK=k,
        baseM=64,
        baseN=64,
        baseK=64,
        depthA1=1,
        depthB1=1,
        stepM=1,
        stepN=1,
        stepKa=1,
        stepKb=1,
        isBias=0,
        iterateOrder=0,
        dbL0A=1,
        dbL0B=1,
        dbL0C=1,
    )


# Predict before you run: at 4096^3, how much longer does a good tiling take on 12 cores than on 24?
# "about 2x", "about 1.5x" or "about the same".
# And: how much of L0C does one 128 x 256 fp32 block of C take, as NZ fractals? "64 fractals, 64 KiB",
# "128 fractals, 64 KiB", "128 fractals, 128 KiB" or "256 fractals, 128 KiB".
PREDICTIONS = {"half_cores": None, "l0c_block": None}  # TODO
