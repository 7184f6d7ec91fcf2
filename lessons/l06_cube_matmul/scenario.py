"""Lesson 6 scenario: a 128 x 128 x 128 matmul on one Cube core, through L1 (NZ), L0A (ZZ) / L0B (ZN), the Cube,
L0C (NZ) and the fixpipe (NZ -> ND).

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
    return seeded(sum(map(ord, name)), m, n, k)


def seeded(seed: int, m: int, n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """A (m x k) and B (k x n), fp16 in [-1, 1], from ``seed``."""
    return uniform(seed, m * k).reshape(m, k), uniform(seed + 1, k * n).reshape(k, n)


# -- hidden cases (lessons/hidden.py): drawn when the check runs, never shown ------------------------------------
def _odd(rng: np.random.Generator, lo: int, hi: int) -> int:
    """A size in [lo, hi) that is not a multiple of 16 and leaves no block of one row (64-row blocks)."""
    while True:
        v = int(rng.integers(lo, hi))
        if v % 16 and v % 64 != 1:
            return v


def draw_odd(rng: np.random.Generator) -> dict:
    """M, N and K none a multiple of 16: every tile padded to whole fractals."""
    return {
        "m": _odd(rng, 17, 160),
        "n": _odd(rng, 17, 160),
        "k": _odd(rng, 17, 200),
        "seed": int(rng.integers(1, 1 << 20)),
    }


def draw_one_row(rng: np.random.Generator) -> dict:
    """An M that leaves a block of one row (64 x a + 1): mmad's m = 1 would be GEMV."""
    m = 64 * int(rng.integers(1, 3)) + 1
    return {
        "m": m,
        "n": 16 * int(rng.integers(2, 6)),
        "k": 16 * int(rng.integers(2, 8)),
        "seed": int(rng.integers(1, 1 << 20)),
    }


def expected(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a.astype(np.float32) @ b.astype(np.float32)


def tolerance(ref: np.ndarray, k: int) -> float:
    return matmul_tolerance(ref, k, "fp32")


def run(sim: Simulation, kernel, name: str, m: int, n: int, k: int) -> np.ndarray:
    return run_inputs(sim, kernel, *inputs(name, m, n, k))


def run_inputs(sim: Simulation, kernel, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C = A @ B (fp32) by ``kernel`` on one core."""
    (m, k), n = a.shape, b.shape[1]
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


def truth_l0a_place() -> str:
    """Where in L0A the fractal holding A[16:32, 48:64] landed, counted in fractals from the first one: read
    from the run's trace (which L1 fractal each load moved where), not from the layout's definition."""
    sim = Simulation()
    scenario(sim)
    run = sim.finish()
    t = run.trace
    l1 = t.detail_of(int(named_rows(run, "data_copy GM->L1 ND2NZ")[0])).dst  # A[0:64, 0:64] as NZ
    rows_of_fractals = l1.row_bytes // FRACTAL_BYTES  # fractals in one column of fractals
    wanted = l1.start + (3 * rows_of_fractals + 1) * FRACTAL_BYTES  # fractal (1, 3): column 3, row 1
    loads = [t.detail_of(int(r)) for r in named_rows(run, "load_data L1->L0A")]
    first = loads[0].dst.start
    for d in loads[:rows_of_fractals]:  # the first K slice's loads, a row of fractals each
        src, dst = d.srcs[0], d.dst
        starts = [src.start + i * src.stride for i in range(src.rows)] if src.rows > 1 else [src.start]
        if wanted in starts:
            return str((dst.start + starts.index(wanted) * FRACTAL_BYTES - first) // FRACTAL_BYTES)
    raise AssertionError("no load moved A[16:32, 48:64] into L0A")


FRACTAL_BYTES = 512  # one 16 x 16 fp16 fractal
