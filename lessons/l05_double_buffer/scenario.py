"""Lesson 5 scenario: the double-buffered Hard-Swish kernel on one vector core, four tiles.

Also the check's cases, the single-buffered baseline it measures the speed-up against (run here, in
the grader, from the lesson's own single-buffered kernel), and the truth of the question.
"""

from __future__ import annotations

import numpy as np

from engine import Simulation, asc
from engine.aicore.tiling import balanced_tiling, get_block_range
from lessons.hostkit import kernel_us, run_vector_kernel, uniform
from lessons.selectors import trace_lane_facts

from . import solution

BLOCKS = 8
CASES = (("main", BLOCKS * 8 * solution.TILE, BLOCKS), ("tail", 30_000, 1))  # (name, total, blocks)


def inputs(name: str, total: int) -> np.ndarray:
    return uniform(sum(map(ord, name)), total, -4.0, 4.0)


def expected(x: np.ndarray) -> np.ndarray:
    """The vector unit's fp16 arithmetic, in the reference order."""
    t = np.maximum(x + np.float16(3), np.float16(0))
    t = np.minimum(t, np.float16(6)) * np.float16(1.0 / 6.0)
    return t * x


def run(sim: Simulation, kernel, name: str, total: int, blocks: int) -> np.ndarray:
    x = inputs(name, total) if sim.numerics else np.zeros(total, np.float16)
    return run_vector_kernel(sim, kernel, [x], total, blocks, total)


@asc.jit(kernel_type=asc.KernelType.AIV_ONLY)
def hard_swish_single(x: asc.GlobalAddress, y: asc.GlobalAddress, total: int):
    """The baseline: the same kernel with one slot per queue (and the same tile length)."""
    tiling = balanced_tiling(total, asc.get_block_num())
    start, end = get_block_range(tiling, asc.get_block_idx())
    length = end - start
    x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, length)
    y_gm.set_global_buffer(y + start, length)
    pipe = asc.TPipe()
    in_q, out_q = asc.TQue(asc.TPosition.VECIN, 1), asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=in_q, num=1, len=solution.TILE * asc.half.sizeof())
    pipe.init_buffer(que=out_q, num=1, len=solution.TILE * asc.half.sizeof())
    for offset in range(0, length, solution.TILE):
        count = min(solution.TILE, length - offset)
        solution.copy_in(x_gm[offset:], in_q, count)
        solution.compute(in_q, out_q, count)
        solution.copy_out(y_gm[offset:], out_q, count)


def baseline_us() -> float:
    """Kernel time of the single-buffered kernel on the main case (timing only)."""
    sim = Simulation(numerics=False)
    run(sim, hard_swish_single, *CASES[0])
    return kernel_us(sim.finish())


def scenario(sim: Simulation) -> dict:
    y = run(sim, solution.hard_swish, "scenario", 4 * solution.TILE, 1)
    return {"correct": bool(np.array_equal(y, expected(inputs("scenario", 4 * solution.TILE))))}


def truth_busiest_pipe() -> str:
    sim = Simulation()
    scenario(sim)
    t = sim.finish().trace
    facts = trace_lane_facts(t)
    busy = {}
    work = (t.kind == 5) | (t.kind == 6)  # MOVE, COMPUTE
    for pipe in ("MTE2", "VECTOR", "MTE3"):
        lanes = [i for i, f in enumerate(facts) if f.kind == "pipe" and f.pipe == pipe]
        sel = work & np.isin(t.lane, lanes)
        busy[pipe] = int((t.end[sel] - t.start[sel]).sum())
    return max(busy, key=busy.get)
