"""Lesson 5 scenario: the double-buffered Hard-Swish kernel on one vector core, four tiles.

Also the check's cases, the single-buffered baseline it measures the speed-up against (run here, in
the grader, from the lesson's own single-buffered kernel), and the truths of the questions.

Why 8 cores and 16 tiles per core (measured on ascend910b1): a tile costs MTE2 0.38 us (48 KiB at
220 GB/s plus the HBM latency), V 0.54 us (five instructions of 192 repeats) and MTE3 0.27 us, so a
double-buffered core runs at V's pace and could reach (0.38 + 0.54) / 0.54 = 1.7x; sixteen tiles
make the pipeline's fill and drain small (1.62x). Eight cores moving 96 KiB per 0.54 us need
1.46 TB/s of HBM, under the 1.6 TB/s it sustains; from 12 cores on HBM sets the pace and double
buffering stops paying (the second question).
"""

from __future__ import annotations

import numpy as np

from engine import Simulation, TilingContext, asc
from lessons.hostkit import BLOCK_BYTES, kernel_us, run_vector_kernel, uniform
from lessons.selectors import trace_lane_facts

TILE = 24576  # elements per tile, the exercise's and the reference's (48 KiB of fp16)
BLOCKS = 8  # vector cores of the check's main case
TILES = 16  # tiles per core
MANY_BLOCKS = 16  # the second question: the same work per core on twice the cores
CASES = (("main", BLOCKS * TILES * TILE, BLOCKS), ("tail", 30_000, 1))  # (name, total, blocks)


def inputs(name: str, total: int) -> np.ndarray:
    return uniform(sum(map(ord, name)), total, -4.0, 4.0)


def _uneven(total: int, blocks: int) -> int:
    """``total``, or 16 more: a length whose 32-byte data blocks do not divide evenly over ``blocks`` cores."""
    return total if -(-total // 16) % blocks else total + 16


def draw_tail(rng: np.random.Generator) -> dict:
    """Hidden: big and small cores, shares of a few tiles and a tail that is no whole tile (2 to 7 cores)."""
    blocks = int(rng.integers(2, 8))
    total = blocks * int(rng.integers(2 * TILE + 1, 4 * TILE)) + int(rng.integers(1, 200))
    return {"total": _uneven(total, blocks), "blocks": blocks}


def draw_short(rng: np.random.Generator) -> dict:
    """Hidden: a tile or less per core, big and small cores (4 to 16 cores)."""
    blocks = int(rng.integers(4, 17))
    return {"total": _uneven(int(rng.integers(blocks * 100, blocks * TILE - 16)), blocks), "blocks": blocks}


def expected(x: np.ndarray) -> np.ndarray:
    """The vector unit's fp16 arithmetic, in the reference order."""
    t = np.maximum(x + np.float16(3), np.float16(0))
    t = np.minimum(t, np.float16(6)) * np.float16(1.0 / 6.0)
    return t * x


def run(sim: Simulation, kernel, tiling_fn, name: str, total: int, blocks: int) -> np.ndarray:
    """The host side: the tiling function fills a context for ``blocks`` cores, the kernel runs with it."""
    x = inputs(name, total) if sim.numerics else np.zeros(total, np.float16)
    context = TilingContext()
    tiling_fn(context, total, blocks)
    raw = context.get_raw_tiling_data()
    xy = (("x", x.shape), ("y", x.shape))
    return run_vector_kernel(sim, kernel, [x], total, context.get_block_dim(), raw, tensors=xy, align=BLOCK_BYTES)


@asc.jit(kernel_type=asc.KernelType.AIV_ONLY)
def hard_swish_single(x: asc.GlobalAddress, y: asc.GlobalAddress, tiling: asc.TilingAddress):
    """The baseline: the same kernel with one slot per queue (and the same tiles)."""
    from . import solution

    t = asc.get_tiling_data(tiling)
    idx = asc.get_block_idx()
    if idx < t.former_num:
        start, tiles, last = idx * t.former_length, t.former_tile_num, t.former_last_tile
    else:
        start = t.former_num * t.former_length + (idx - t.former_num) * t.tail_length
        tiles, last = t.tail_tile_num, t.tail_last_tile
    length = (tiles - 1) * t.tile_length + last
    x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, length)
    y_gm.set_global_buffer(y + start, length)
    pipe = asc.TPipe()
    in_q, out_q = asc.TQue(asc.TPosition.VECIN, 1), asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=in_q, num=1, len=t.tile_length * asc.half.sizeof())
    pipe.init_buffer(que=out_q, num=1, len=t.tile_length * asc.half.sizeof())
    for i in range(tiles):
        count = t.tile_length if i < tiles - 1 else last
        solution.copy_in(x_gm[i * t.tile_length :], in_q, count)
        solution.compute(in_q, out_q, count)
        solution.copy_out(y_gm[i * t.tile_length :], out_q, count)


def _kernel_us(kernel, blocks: int) -> float:
    from .solution import hard_swish_tiling

    sim = Simulation(numerics=False)
    run(sim, kernel, hard_swish_tiling, "main", blocks * TILES * TILE, blocks)
    return kernel_us(sim.finish())


def baseline_us() -> float:
    """Kernel time of the single-buffered kernel on the main case (timing only)."""
    return _kernel_us(hard_swish_single, BLOCKS)


def scenario(sim: Simulation) -> dict:
    from . import solution

    y = run(sim, solution.hard_swish, solution.hard_swish_tiling, "scenario", 4 * TILE, 1)
    return {"correct": bool(np.array_equal(y, expected(scenario_inputs()["x"])))}


def scenario_inputs() -> dict:
    return {"x": inputs("scenario", 4 * TILE)}


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


def truth_many_cores() -> str:
    """Does double buffering still pay 1.5x with 16 tiles on each of 16 cores (twice the HBM traffic)?"""
    from . import solution

    speedup = _kernel_us(hard_swish_single, MANY_BLOCKS) / _kernel_us(solution.hard_swish, MANY_BLOCKS)
    return "yes" if speedup >= 1.5 else "no"
