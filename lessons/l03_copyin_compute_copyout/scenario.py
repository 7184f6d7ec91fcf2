"""Lesson 3 scenario: y = relu(a*x + b) on 2 vector cores, two tiles each, CopyIn -> Compute -> CopyOut.

Also the seeded cases the check grades on (shared by ``drive`` in the child and ``check`` in the
grader, so the grader recomputes the expected numbers itself), how to draw its hidden cases
(``draw_<kind>``, :mod:`lessons.hidden`) and the truth of the question.
"""

from __future__ import annotations

import numpy as np

from engine import Simulation, TilingContext
from lessons.hostkit import run_vector_kernel, uniform
from lessons.selectors import lane_facts, resolve

A, B = 0.5, -0.25  # exact in fp16
CASES = (  # (name, total elements, blocks, seed): totals split evenly into multiples of 16 elements
    ("main", 8 * 10240, 8, 3),
    ("one_core", 3 * 4096, 1, 4),
)


def draw_unaligned(rng: np.random.Generator) -> dict:
    """Hidden: a length that is not a multiple of 16 elements, on 3 to 7 cores (some shares end mid-32-byte block)."""
    blocks = int(rng.integers(3, 8))
    total = int(rng.integers(2000, 12000))
    total += 0 if total % 16 else int(rng.integers(1, 16))
    return {"total": total, "blocks": blocks, "seed": int(rng.integers(10, 1 << 20))}


def draw_few(rng: np.random.Generator) -> dict:
    """Hidden: fewer elements than cores (8 to 16 cores): the host's tiling launches one block of under 32 bytes."""
    blocks = int(rng.integers(8, 17))
    return {"total": int(rng.integers(1, blocks)), "blocks": blocks, "seed": int(rng.integers(10, 1 << 20))}


def inputs(seed: int, total: int) -> np.ndarray:
    return uniform(seed, total, -2.0, 2.0)


def expected(x: np.ndarray) -> np.ndarray:
    """The vector unit's arithmetic: fp16 multiply, fp16 add, then max with 0."""
    return np.maximum(x * np.float16(A) + np.float16(B), np.float16(0))


def run_case(sim: Simulation, program, x: np.ndarray, cores: int, tensors: tuple = ()) -> np.ndarray:
    """The host side: the program's tiling function fills its TilingData for ``cores`` cores, the kernel is
    launched on the block count it chose with the raw tiling buffer as its last argument; returns y."""
    context = TilingContext()
    program.relu_tiling(context, x.size, cores, A, B)
    raw = context.get_raw_tiling_data()
    return run_vector_kernel(sim, program.relu_axpb, [x], x.size, context.get_block_dim(), raw, tensors=tensors)


def scenario(sim: Simulation) -> dict:
    from . import solution

    x = scenario_inputs()["x"]
    y = run_case(sim, solution, x, 2, tensors=(("x", x.shape), ("y", x.shape)))
    return {"correct": bool(np.array_equal(y, expected(x)))}


def scenario_inputs() -> dict:
    return {"x": inputs(0, 2 * 2 * 4096)}


def truth_load_pipe() -> str:
    sim = Simulation()
    scenario(sim)
    trace = sim.finish().trace
    row = resolve(trace, {"kind": "MOVE", "name": "data_copy GM->UB"})
    lane = trace.lanes[int(trace.lane[row])]
    return lane_facts(lane).pipe
