"""Lesson 2 scenario: z = 2x over 10 000 elements on 7 blocks (7 does not divide 10 000: a remainder of 4).

Also the seeded cases of the check and the truth of the question (49 blocks on 48 vector cores).
"""

from __future__ import annotations

import numpy as np

from engine import Simulation
from lessons.hostkit import kernel_us, run_vector_kernel, uniform

PURE_CASES = (
    (10, 4),
    (12, 4),
    (1, 1),
    (3, 2),
    (5, 7),
    (7, 7),
    (17, 48),
    (48, 48),
    (1000, 7),
    (65536, 24),
    (100003, 48),
)
KERNEL_CASES = (  # (name, N, blocks)
    ("b1", 5000, 1),
    ("b7", 50001, 7),
    ("b24", 48017, 24),
    ("main", 100003, 48),
    ("tiny7", 5, 7),
    ("tiny48", 17, 48),
)
TINY = ("tiny7", "tiny48")


def inputs(name: str, total: int) -> np.ndarray:
    return uniform(sum(map(ord, name)), total, -100.0, 100.0)


def run_scale(sim: Simulation, kernel, tiling_fn, total: int, blocks: int, x: np.ndarray) -> np.ndarray:
    return run_vector_kernel(sim, kernel, [x], total, blocks, tiling_fn(total, blocks))


def scenario(sim: Simulation) -> dict:
    from .solution import compute_tiling, scale_kernel

    x = inputs("scenario", 10_000)
    z = run_scale(sim, scale_kernel, compute_tiling, x.size, 7, x)
    return {"correct": bool(np.array_equal(z, x * np.float16(2)))}


def truth_second_wave() -> str:
    from .solution import compute_tiling, scale_kernel

    times = []
    for blocks in (48, 49):
        sim = Simulation(numerics=False)
        x = np.zeros(48 * 65536, np.float16)
        run_scale(sim, scale_kernel, compute_tiling, x.size, blocks, x)
        times.append(kernel_us(sim.finish()))
    ratio = times[1] / times[0]
    return "slower" if ratio > 1.1 else ("faster" if ratio < 0.9 else "about the same")
