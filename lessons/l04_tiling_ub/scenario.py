"""Lesson 4 scenario: relu(a*x + b) on one core, 60 003 elements in tiles planned for the UB (one full, one tail).

Also the host's tiling function the check launches with (it calls the trainee's plan_tiles), the cases of the
check and the truth of the question (tiles half as long).
"""

from __future__ import annotations

import numpy as np

from engine import Simulation, TilingContext
from lessons.hostkit import BLOCK_BYTES, kernel_us, run_vector_kernel, split_cores, uniform

UB_BYTES = 196608  # ascend910b1: 192 KiB of UB per vector core
QUEUES = 2  # VECIN x and VECOUT y, one tile each
A, B = 0.5, -0.25
PLAN_CASES = (  # (length, ub_bytes, dtype_bytes, queues)
    (100_000, 196608, 2, 2),
    (98304, 196608, 2, 2),
    (49152, 196608, 2, 2),
    (49153, 196608, 2, 2),
    (1, 196608, 2, 2),
    (50, 196608, 4, 3),
    (1_000_003, 196608, 4, 2),
    (12345, 196608, 2, 3),
    (999, 196608, 2, 4),
    (300_000, 196608, 1, 2),
)
KERNEL_CASES = (("main", 8 * 60_003, 8), ("odd", 100_001, 3), ("small", 1000, 4))  # (name, total, blocks)


def _seed(rng: np.random.Generator) -> int:
    return int(rng.integers(10, 1 << 20))


def draw_other_ub(rng: np.random.Generator) -> dict:
    """Hidden: another chip, ascend310p3, whose UB holds 256 KiB (the host's tiling passes the chip's UB size)."""
    return {
        "total": int(rng.integers(150_000, 400_000)),
        "blocks": int(rng.integers(2, 7)),
        "seed": _seed(rng),
        "profile": "ascend310p3",
    }


def draw_short(rng: np.random.Generator) -> dict:
    """Hidden: every core's share shorter than one tile (a few thousand elements on 5 to 16 cores)."""
    return {"total": int(rng.integers(2000, 40_000)), "blocks": int(rng.integers(5, 17)), "seed": _seed(rng)}


def draw_tail_cores(rng: np.random.Generator) -> dict:
    """Hidden: big and small cores, each share a few full tiles and a tail (3 to 7 cores)."""
    blocks = int(rng.integers(3, 8))
    total = blocks * int(rng.integers(100_000, 200_000)) + int(rng.integers(17, 16 * blocks))
    total += 0 if -(-total // 16) % blocks else 16  # data blocks that do not divide evenly: big and small cores
    return {"total": total, "blocks": blocks, "seed": _seed(rng)}


def max_tile(ub_bytes: int, dtype_bytes: int, queues: int) -> int:
    return ub_bytes // queues // BLOCK_BYTES * BLOCK_BYTES // dtype_bytes


def inputs(name: str, total: int, seed: int | None = None) -> np.ndarray:
    return uniform(sum(map(ord, name)) if seed is None else seed, total, -2.0, 2.0)


def expected(x: np.ndarray) -> np.ndarray:
    return np.maximum(x * np.float16(A) + np.float16(B), np.float16(0))


def relu_tiling(
    context: TilingContext, total: int, cores: int, program, plan_fn=None, ub_bytes: int = UB_BYTES
) -> None:
    """The host's tiling function: lesson 2's split of the (32-byte padded) data over the cores, then a tile plan
    per core length from ``plan_fn`` (the program's plan_tiles) for a UB of ``ub_bytes`` (the chip's), into the
    program's ReluTilingData."""
    plan_fn = plan_fn or program.plan_tiles
    split = split_cores(total, 2, cores)
    tiling = program.ReluTilingData(former_num=split.former_num, former_length=split.former_length)
    tiling.tail_length = split.tail_length
    for kind, length in (("former", split.former_length), ("tail", split.tail_length)):
        plan = plan_fn(length, ub_bytes, 2, QUEUES)
        tiling.tile_length = plan.tile_length
        setattr(tiling, f"{kind}_tile_num", plan.tile_count)
        setattr(tiling, f"{kind}_last_tile", plan.tail_length)
    tiling.a, tiling.b = A, B
    context.set_block_dim(split.block_dim)
    tiling.save_to_buffer(context.get_raw_tiling_data())


def run_case(sim: Simulation, program, total: int, blocks: int, x: np.ndarray, plan_fn=None):
    """The host side: tile for the chip's UB, launch on the tiling's block count, return y."""
    context = TilingContext()
    relu_tiling(context, total, blocks, program, plan_fn, sim.profile.buffers.ub)
    xy = (("x", x.shape), ("y", x.shape))
    raw = context.get_raw_tiling_data()
    return run_vector_kernel(
        sim, program.relu_axpb, [x], total, context.get_block_dim(), raw, tensors=xy, align=BLOCK_BYTES
    )


def scenario(sim: Simulation) -> dict:
    from . import solution

    x = scenario_inputs()["x"]
    y = run_case(sim, solution, x.size, 1, x)
    return {"correct": bool(np.array_equal(y, expected(x)))}


def scenario_inputs() -> dict:
    return {"x": inputs("scenario", 60_003)}


def fixed_plan(tile: int):
    """A plan_tiles that always uses ``tile`` (the question's comparison)."""
    from .solution import TilePlan

    def plan(length: int, *_):
        count = -(-length // tile)
        return TilePlan(tile, count, length - (count - 1) * tile)

    return plan


def truth_halve_tile() -> str:
    """Eight full tiles on one core (the scenario's core count), with full and half-length tiles.

    One core, because there nothing hides a load's fixed cost; on eight cores this load-heavy kernel
    asks HBM for more than its 1.6 TB/s, and the shared link, not the tile, sets the pace."""
    from . import solution

    times = []
    full = max_tile(UB_BYTES, 2, QUEUES)
    for tile in (full, full // 2):
        sim = Simulation(numerics=False)
        x = np.zeros(8 * full, np.float16)
        run_case(sim, solution, x.size, 1, x, fixed_plan(tile))
        times.append(kernel_us(sim.finish()))
    if abs(times[1] - times[0]) <= 0.02 * times[0]:
        return "about the same"
    return "slower" if times[1] > times[0] else "faster"
