"""Lesson 7 reference solution: a TCubeTiling chosen by hand for C = A @ B on many Cube cores."""

from engine.aicore.matmul_tiling import TCubeTiling

BASE_M, BASE_N, BASE_K = 128, 256, 64  # the base block recommended for the 910B's L0A / L0B / L0C
L1_BYTES = 512 * 1024
FP16 = 2


def _up(x: int, multiple: int) -> int:
    return -(-x // multiple) * multiple


def make_tiling(m: int, n: int, k: int, cores: int) -> TCubeTiling:
    """Split C into a grid of core regions with the fewest base blocks on the busiest core; double-buffer
    L1 and L0; stream K through L1 in the deepest step that fits."""
    best = None
    for m_cores in range(1, cores + 1):
        for n_cores in range(1, cores // m_cores + 1):
            single_m = _up(-(-m // m_cores), 16)
            single_n = _up(-(-n // n_cores), 16)
            blocks = -(-single_m // BASE_M) * -(-single_n // BASE_N)
            used = -(-m // single_m) * -(-n // single_n)
            key = (blocks, used)  # fewest blocks per core, then fewest cores for that
            if best is None or key < best[0]:
                best = (key, single_m, single_n, used)
    _, single_m, single_n, used = best
    step = 1
    while step < 8 and 2 * (BASE_M * BASE_K + BASE_K * BASE_N) * (2 * step) * FP16 <= L1_BYTES:
        step *= 2  # double the K step while two slots of A and B chunks of that depth fit L1
    return TCubeTiling(
        usedCoreNum=used,
        M=m,
        N=n,
        Ka=k,
        Kb=k,
        singleCoreM=single_m,
        singleCoreN=single_n,
        singleCoreK=k,
        baseM=BASE_M,
        baseN=BASE_N,
        baseK=BASE_K,
        depthA1=2 * step,  # base blocks of A held in L1: two slots (ping, pong) of stepKa blocks each
        depthB1=2 * step,
        stepM=1,
        stepN=1,
        stepKa=step,
        stepKb=step,
        isBias=0,
        iterateOrder=0,
        dbL0A=2,
        dbL0B=2,
        dbL0C=1,
    )


PREDICTIONS = {"half_cores": "about 1.5x", "l0c_block": "128 fractals, 128 KiB"}
