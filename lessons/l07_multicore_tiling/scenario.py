"""Lesson 7 scenario: a 1024 x 1024 x 1024 matmul on 24 Cube cores with the hand-made tiling.

Also the check's shapes, the host program it runs the trainee's tiling with (the shipped tiled matmul
kernel, engine.kernels.matmul.matmul_tiled) and the truth of the question (12 cores against 24).
"""

from __future__ import annotations

import numpy as np

from engine import Simulation, load_profile
from engine.aicore.matmul_tiling import TCubeTiling, TilingError, validate
from engine.scenarios.kernels import matmul_tolerance
from lessons.hostkit import kernel_us, run_vector_kernel, uniform

SMALL = (256, 384, 320)  # numerics
BIG = (4096, 4096, 4096)  # timing only: the % of peak
CORES = 24  # ascend910b1's Cube cores


def inputs(m: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    return uniform(7, m * k).reshape(m, k), uniform(8, k * n).reshape(k, n)


def expected(m: int, n: int, k: int) -> np.ndarray:
    a, b = inputs(m, n, k)
    return a.astype(np.float32) @ b.astype(np.float32)


def tolerance(ref: np.ndarray, k: int) -> float:
    return matmul_tolerance(ref, k, "fp16")


MAX_MMADS = 200_000  # a tiling that needs more mmads than this is far from the target: not simulated
MAX_HIDDEN_MMADS = 20_000  # ... on a hidden case, which runs with numerics


# -- hidden cases (lessons/hidden.py): drawn when the check runs, never shown ------------------------------------
def _uneven(rng: np.random.Generator) -> int:
    while True:
        v = int(rng.integers(100, 700))
        if v % 16:
            return v


def draw_uneven(rng: np.random.Generator) -> dict:
    """M, N and K none a multiple of 16, on the 24 cores of ascend910b1."""
    return {"m": _uneven(rng), "n": _uneven(rng), "k": _uneven(rng), "profile": "ascend910b1", "cores": 24}


def draw_other_chip(rng: np.random.Generator) -> dict:
    """A chip with fewer Cube cores, ascend910b3's 20 (source: INI), and C of 6 x 4 base blocks of 128 x 256 (or
    4 x 6), work that 24 cores would take one block each of."""
    m = 128 * 6 - 16 * int(rng.integers(0, 4))
    n = 256 * 4 - 16 * int(rng.integers(0, 4))
    if rng.integers(0, 2):
        m, n = n, m
    return {"m": m, "n": n, "k": 16 * int(rng.integers(8, 24)), "profile": "ascend910b3", "cores": 20}


def mmads(tiling: TCubeTiling) -> int:
    return -(-tiling.M // tiling.baseM) * -(-tiling.N // tiling.baseN) * -(-tiling.Ka // tiling.baseK)


def problem(tiling, shape: tuple[int, int, int], profile: str = "ascend910b1") -> str | None:
    """Why ``tiling`` cannot be run for ``shape`` on ``profile`` (a constraint it breaks), or None."""
    if not isinstance(tiling, TCubeTiling):
        return f"make_tiling returned {type(tiling).__name__}, not a TCubeTiling"
    try:
        validate(tiling, load_profile(profile))
        if (tiling.M, tiling.N, tiling.Ka) != shape:
            raise TilingError(
                "M, N, Ka",
                f"must be the shape asked for {shape}",
                (tiling.M, tiling.N, tiling.Ka),
                f"必须是要求的形状 {shape}",
            )
    except (TilingError, AttributeError, TypeError) as exc:
        return str(exc)
    return None


def run(sim: Simulation, tiling: TCubeTiling) -> np.ndarray:
    """C = A @ B (fp16 out) with the shipped tiled kernel on ``tiling.usedCoreNum`` cores."""
    from engine.kernels.matmul import matmul_tiled

    m, n, k = tiling.M, tiling.N, tiling.Ka
    if sim.numerics:
        a, b = inputs(m, n, k)
    else:
        a, b = np.zeros((m, k), np.float16), np.zeros((k, n), np.float16)
    abc = (("A", (m, k)), ("B", (k, n)), ("C", (m, n)))
    c = run_vector_kernel(
        sim, matmul_tiled, [a.reshape(-1), b.reshape(-1)], m * n, tiling.usedCoreNum, tiling, tensors=abc
    )
    return c.reshape(m, n)


def scenario_run(sim: Simulation) -> np.ndarray:
    """C of the scenario's 1024^3 run with the reference tiling."""
    from .solution import make_tiling

    return run(sim, make_tiling(1024, 1024, 1024, CORES))


def scenario(sim: Simulation) -> dict:
    from .solution import make_tiling

    c = run(sim, make_tiling(1024, 1024, 1024, CORES))
    ref = expected(1024, 1024, 1024)
    return {"correct": bool(np.max(np.abs(c.astype(np.float32) - ref)) <= tolerance(ref, 1024))}


def scenario_inputs() -> dict:
    a, b = inputs(1024, 1024, 1024)
    return {"A": a, "B": b}


def truth_half_cores() -> str:
    from .solution import make_tiling

    times = []
    for cores in (CORES, CORES // 2):
        sim = Simulation(numerics=False)
        run(sim, make_tiling(*BIG, cores))
        times.append(kernel_us(sim.finish()))
    ratio = times[1] / times[0]
    return "about 2x" if ratio >= 1.75 else ("about 1.5x" if ratio >= 1.25 else "about the same")


def truth_l0c_block() -> str:
    """How many NZ fractals, and bytes, the scenario's first mmad writes into L0C (a 128 x 256 block of C)."""
    from lessons.checks import named_rows

    sim = Simulation(numerics=False)
    scenario_run(sim)
    run = sim.finish()
    dst = run.trace.detail_of(int(named_rows(run, "mmad")[0])).dst
    nbytes = dst.rows * dst.row_bytes
    return f"{nbytes // 1024} fractals, {nbytes // 1024} KiB"  # an L0C fractal: 16 x 16 fp32, 1 KiB
