"""Lesson 6 scenario: a 128 x 128 x 128 matmul on one Cube core, through L1, L0A/L0B, the Cube, L0C and the fixpipe.

Also the check's shapes and tolerance, and the truth of the question.
"""

from __future__ import annotations

import numpy as np

from engine import Simulation
from engine.scenarios.kernels import matmul_tolerance
from lessons.checks import named_rows
from lessons.hostkit import run_vector_kernel, uniform

CASES = (("main", 128, 96, 160), ("square", 64, 64, 64), ("tall", 48, 80, 112))  # (name, m, n, k)


def inputs(name: str, m: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    seed = sum(map(ord, name))
    return uniform(seed, m * k).reshape(m, k), uniform(seed + 1, k * n).reshape(k, n)


def expected(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a.astype(np.float32) @ b.astype(np.float32)


def tolerance(ref: np.ndarray, k: int) -> float:
    return matmul_tolerance(ref, k, "fp32")


def run(sim: Simulation, kernel, name: str, m: int, n: int, k: int) -> np.ndarray:
    a, b = inputs(name, m, n, k)
    abc = (("A", (m, k)), ("B", (k, n)), ("C", (m, n)))
    c = run_vector_kernel(
        sim, kernel, [a.reshape(-1), b.reshape(-1)], m * n, 1, m, n, k, out_dtype=np.float32, tensors=abc
    )
    return c.reshape(m, n)


def scenario(sim: Simulation) -> dict:
    from .solution import matmul_cube

    c = run(sim, matmul_cube, "scenario", 128, 128, 128)
    ref = expected(*inputs("scenario", 128, 128, 128))
    return {"correct": bool(np.max(np.abs(c - ref)) <= tolerance(ref, 128))}


def scenario_inputs() -> dict:
    a, b = inputs("scenario", 128, 128, 128)
    return {"A": a, "B": b}


def truth_mmad_count() -> str:
    sim = Simulation()
    scenario(sim)
    return str(len(named_rows(sim.finish(), "mmad")))
