"""Host tiling: the seed's balanced 1-D partition (section 3.1).

Given N elements and a preferred block size B: K = ceil(N / B) blocks, capped at the hardware's
maximum; the first N % K blocks take one element more than the others, so block sizes differ by at
most one and the ranges cover [0, N) exactly once. (The seed's version divides by zero for N = 0
and lets a block end past N; here N = 0 gives one empty block.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MAX_HARDWARE_BLOCK_SIZE = 1 << 31


@dataclass(frozen=True)
class TilingResult:
    total_size: int
    block_size: int
    num_blocks: int
    base_chunk: int
    remainder: int


def compute_optimal_tiling(total_size: int, preferred_block_size: int, max_blocks: int) -> TilingResult:
    """The seed's ``compute_optimal_tiling``, with its edge cases fixed."""
    for name, value, low in (
        ("total_size", total_size, 0),
        ("preferred_block_size", preferred_block_size, 1),
        ("max_blocks", max_blocks, 1),
    ):
        if not isinstance(value, int) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    block_size = min(preferred_block_size, MAX_HARDWARE_BLOCK_SIZE)
    ideal = max(1, math.ceil(total_size / block_size))
    num_blocks = min(ideal, max_blocks)
    return TilingResult(total_size, block_size, num_blocks, total_size // num_blocks, total_size % num_blocks)


def balanced_tiling(total_size: int, num_blocks: int) -> TilingResult:
    """Split ``total_size`` over exactly ``num_blocks`` blocks (some may be empty if there are too few elements)."""
    if not isinstance(num_blocks, int) or num_blocks < 1:
        raise ValueError(f"num_blocks must be an integer >= 1, got {num_blocks!r}")
    return TilingResult(
        total_size,
        max(1, math.ceil(total_size / num_blocks)),
        num_blocks,
        total_size // num_blocks,
        total_size % num_blocks,
    )


def get_block_range(tiling: TilingResult, block_id: int) -> tuple[int, int]:
    """``[start, end)`` of block ``block_id``: the first ``remainder`` blocks hold ``base_chunk + 1``."""
    if not 0 <= block_id < tiling.num_blocks:
        raise ValueError(f"block_id must be in [0, {tiling.num_blocks}), got {block_id}")
    base, rem = tiling.base_chunk, tiling.remainder
    if block_id < rem:
        start = block_id * (base + 1)
        return start, start + base + 1
    start = rem * (base + 1) + (block_id - rem) * base
    return start, start + base
