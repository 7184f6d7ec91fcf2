"""Lesson 4 scenario: relu(a*x + b) on one core, 60 003 elements in tiles planned for the UB (two full, one tail).

Also the cases of the check and the truth of the question (tiles half as long).
"""

from __future__ import annotations

import numpy as np

from engine import Simulation
from lessons.hostkit import kernel_us, run_vector_kernel, uniform

UB_BYTES = 196608  # ascend910b1: 192 KiB of UB per vector core
QUEUES, BUFFER_NUM = 2, 2  # VECIN x and VECOUT y, double-buffered
A, B = 0.5, -0.25
PLAN_CASES = (  # (length, ub_bytes, dtype_bytes, queues, buffer_num)
    (100_000, 196608, 2, 2, 2),
    (65536, 196608, 2, 2, 2),
    (24576, 196608, 2, 2, 2),
    (24577, 196608, 2, 2, 2),
    (1, 196608, 2, 2, 1),
    (50, 196608, 4, 3, 2),
    (1_000_003, 196608, 4, 2, 1),
    (12345, 262144, 2, 3, 2),
    (999, 196608, 2, 4, 2),
    (300_000, 196608, 1, 2, 2),
)
KERNEL_CASES = (("main", 8 * 60_003, 8), ("odd", 100_001, 3), ("small", 1000, 4))  # (name, total, blocks)


def max_tile(ub_bytes: int, dtype_bytes: int, queues: int, buffer_num: int) -> int:
    return ub_bytes // (queues * buffer_num) // 32 * 32 // dtype_bytes


def inputs(name: str, total: int) -> np.ndarray:
    return uniform(sum(map(ord, name)), total, -2.0, 2.0)


def expected(x: np.ndarray) -> np.ndarray:
    return np.maximum(x * np.float16(A) + np.float16(B), np.float16(0))


def run_case(sim: Simulation, kernel, plan_fn, total: int, blocks: int, x: np.ndarray, tile: int | None = None):
    """The host side: plan the tiles for the longest block's share, launch, return y."""
    per_block = -(-total // blocks)
    tile_length = tile or plan_fn(per_block, UB_BYTES, 2, QUEUES, BUFFER_NUM).tile_length
    xy = (("x", x.shape), ("y", x.shape))
    return run_vector_kernel(sim, kernel, [x], total, blocks, total, tile_length, BUFFER_NUM, A, B, tensors=xy)


def scenario(sim: Simulation) -> dict:
    from .solution import plan_tiles, relu_axpb

    x = scenario_inputs()["x"]
    y = run_case(sim, relu_axpb, plan_tiles, x.size, 1, x)
    return {"correct": bool(np.array_equal(y, expected(x)))}


def scenario_inputs() -> dict:
    return {"x": inputs("scenario", 60_003)}


def truth_halve_tile() -> str:
    """Eight full tiles on one core (the scenario's core count), with full and half-length tiles.

    One core, because there nothing hides a load's fixed cost; on eight cores this load-heavy kernel
    asks HBM for more than its 1.6 TB/s, and the shared link, not the tile, sets the pace."""
    from .solution import relu_axpb

    times = []
    full = max_tile(UB_BYTES, 2, QUEUES, BUFFER_NUM)
    for tile in (full, full // 2):
        sim = Simulation(numerics=False)
        x = np.zeros(8 * full, np.float16)
        run_case(sim, relu_axpb, None, x.size, 1, x, tile)
        times.append(kernel_us(sim.finish()))
    if abs(times[1] - times[0]) <= 0.02 * times[0]:
        return "about the same"
    return "slower" if times[1] > times[0] else "faster"
