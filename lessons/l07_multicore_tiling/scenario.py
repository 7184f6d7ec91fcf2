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


def mmads(tiling: TCubeTiling) -> int:
    return -(-tiling.M // tiling.baseM) * -(-tiling.N // tiling.baseN) * -(-tiling.Ka // tiling.baseK)


def problem(tiling, shape: tuple[int, int, int]) -> str | None:
    """Why ``tiling`` cannot be run for ``shape`` on ascend910b1 (a constraint it breaks), or None."""
    if not isinstance(tiling, TCubeTiling):
        return f"make_tiling returned {type(tiling).__name__}, not a TCubeTiling"
    try:
        validate(tiling, load_profile("ascend910b1"))
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
