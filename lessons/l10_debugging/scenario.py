"""Lesson 10 scenario: the exercise's program as given, with its race and its deadlock (and its bottleneck).

Also the check's input, the reference kernel time the performance target is derived from (run here,
in the grader, with the fixed program) and the truth of the question.
"""

from __future__ import annotations

import numpy as np

from engine import Simulation
from lessons.hostkit import kernel_us, uniform

N = 48 * 4 * 8192  # four tiles per vector core when all 48 work


def inputs(total: int = N, seed: int = 10) -> np.ndarray:
    return uniform(seed, total, -2.0, 2.0)


def draw_odd_length(rng: np.random.Generator) -> dict:
    """Hidden: another length, no whole number of tiles per core nor of 32-byte data blocks."""
    total = int(rng.integers(100_000, 1_000_000))
    return {"total": total + (0 if total % 16 else 1), "seed": int(rng.integers(11, 1 << 20))}


def draw_other_chip(rng: np.random.Generator) -> dict:
    """Hidden: another chip, ascend910b4, with 40 vector cores."""
    return {
        "total": int(rng.integers(200_000, 1_600_000)),
        "seed": int(rng.integers(11, 1 << 20)),
        "profile": "ascend910b4",
    }


def expected(x: np.ndarray) -> np.ndarray:
    return np.maximum(x * np.float16(0.5) + np.float16(-0.25), np.float16(0))


def scenario(sim: Simulation) -> dict:
    from . import exercise

    y = exercise.run(sim.acl, inputs())
    return {"correct": y is not None and bool(np.array_equal(y, expected(inputs())))}


def _kernel_us(cores: int) -> float:
    from . import solution

    sim = Simulation(numerics=False)
    solution.run(sim.acl, np.zeros(N, np.float16), cores)
    return kernel_us(sim.finish())


def reference_kernel_us() -> float:
    """The fixed program's kernel time (48 blocks)."""
    return _kernel_us(48)


def truth_blocks_speedup() -> str:
    ratio = _kernel_us(1) / _kernel_us(48)
    return "about 48x" if ratio >= 40 else "well under 48x"
