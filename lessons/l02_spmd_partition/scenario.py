"""Lesson 2 scenario: z = 2x over 10 001 fp16 elements on 7 vector cores, tiled on the host in 32-byte data blocks:
626 blocks (the last one part-filled) = 3 big cores of 90 blocks and 4 small cores of 89.

Also the seeded cases of the check and the truth of the question (49 blocks on 48 vector cores).
"""

from __future__ import annotations

import numpy as np

from engine import Simulation, TilingContext
from lessons.hostkit import kernel_us, run_vector_kernel, uniform

DTYPES = {2: np.float16, 4: np.float32}
PURE_CASES = (  # (N, bytes per element, cores): the tiling function and block_range, called directly
    (10_001, 2, 7),
    (1999, 2, 8),  # CANN's tail-core example: 125 data blocks on 8 cores
    (2048, 2, 8),
    (1904, 2, 8),
    (5, 2, 7),
    (17, 2, 48),
    (768, 2, 48),
    (1000, 4, 7),
    (65536, 2, 24),
    (100_003, 4, 48),
    (33, 1, 4),
)
KERNEL_CASES = (  # (name, N, bytes per element, cores): the kernel launched with the tiling
    ("b1", 5000, 2, 1),
    ("b7", 50_001, 2, 7),
    ("b24", 48_017, 2, 24),
    ("main", 100_003, 2, 48),
    ("f32", 30_001, 4, 20),
    ("tiny7", 5, 2, 7),
    ("tiny48", 17, 2, 48),
)
TINY = ("tiny7", "tiny48")


def _seed(rng: np.random.Generator) -> int:
    return int(rng.integers(10, 1 << 20))


def draw_unaligned(rng: np.random.Generator) -> dict:
    """Hidden: an fp16 length that fills no whole number of 32-byte data blocks, on 3 to 47 cores."""
    total = int(rng.integers(2000, 120_000))
    total += 0 if total % 16 else int(rng.integers(1, 16))
    return {"total": total, "size": 2, "cores": int(rng.integers(3, 48)), "seed": _seed(rng)}


def draw_few(rng: np.random.Generator) -> dict:
    """Hidden: fewer 32-byte data blocks than cores (8 to 48 cores)."""
    cores = int(rng.integers(8, 49))
    return {"total": int(rng.integers(1, 16 * cores - 15)), "size": 2, "cores": cores, "seed": _seed(rng)}


def draw_fp32(rng: np.random.Generator) -> dict:
    """Hidden: 4-byte elements (8 to a data block), any length, on 5 to 48 cores."""
    return {"total": int(rng.integers(3000, 60_000)), "size": 4, "cores": int(rng.integers(5, 49)), "seed": _seed(rng)}


def draw_other_chip(rng: np.random.Generator) -> dict:
    """Hidden: another chip, ascend910b4, whose 40 vector cores the tiling function is told of."""
    total = int(rng.integers(20_000, 200_000))
    return {"total": total, "size": 2, "cores": 40, "seed": _seed(rng), "profile": "ascend910b4"}


def inputs(name: str, total: int, dtype_bytes: int = 2, seed: int | None = None) -> np.ndarray:
    return uniform(sum(map(ord, name)) if seed is None else seed, total, -100.0, 100.0, DTYPES[dtype_bytes])


def tiled(tiling_fn, total: int, dtype_bytes: int, cores: int) -> TilingContext:
    """The host's tiling of one launch: a fresh context, filled by ``tiling_fn``."""
    context = TilingContext()
    tiling_fn(context, total, dtype_bytes, cores)
    return context


def run_scale(sim: Simulation, kernel, tiling_fn, total: int, dtype_bytes: int, cores: int, x: np.ndarray):
    """Tile on the host, launch on the block count the tiling chose, return z."""
    context = tiled(tiling_fn, total, dtype_bytes, cores)
    raw = context.get_raw_tiling_data()
    return run_vector_kernel(sim, kernel, [x], total, context.get_block_dim(), raw, out_dtype=DTYPES[dtype_bytes])


def scenario(sim: Simulation) -> dict:
    from .solution import scale_kernel, scale_tiling

    x = inputs("scenario", 10_001)
    z = run_scale(sim, scale_kernel, scale_tiling, x.size, 2, 7, x)
    return {"correct": bool(np.array_equal(z, x * np.float16(2)))}


def truth_second_wave() -> str:
    from .solution import scale_kernel, scale_tiling

    times = []
    for cores in (48, 49):
        sim = Simulation(numerics=False)
        x = np.zeros(48 * 65536, np.float16)
        run_scale(sim, scale_kernel, scale_tiling, x.size, 2, cores, x)
        times.append(kernel_us(sim.finish()))
    ratio = times[1] / times[0]
    return "slower" if ratio > 1.1 else ("faster" if ratio < 0.9 else "about the same")
