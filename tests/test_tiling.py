"""Host tiling: the balanced partition (property-tested) and the matmul tiling's constraints."""

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import asc, load_profile
from engine.aicore.matmul_tiling import (
    MultiCoreMatmulTiling,
    TilingError,
    auto_tiling,
    l1_bytes,
    make_tiling,
    validate,
)
from engine.aicore.tiling import balanced_tiling, compute_optimal_tiling, get_block_range

PROFILE = load_profile("ascend910b1")


@given(total=st.integers(0, 10**7), preferred=st.integers(1, 10**6), max_blocks=st.integers(1, 65535))
def test_partition_covers_everything_once_and_is_balanced(total, preferred, max_blocks):
    t = compute_optimal_tiling(total, preferred, max_blocks)
    assert 1 <= t.num_blocks <= max_blocks
    ranges = [get_block_range(t, b) for b in range(t.num_blocks)]
    assert ranges[0][0] == 0 and ranges[-1][1] == total
    assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))  # contiguous, no overlap
    sizes = [e - s for s, e in ranges]
    assert max(sizes) - min(sizes) <= 1
    assert all(size >= 0 for size in sizes)


@given(total=st.integers(0, 10**6), blocks=st.integers(1, 4096))
def test_balanced_tiling_uses_exactly_the_blocks_asked(total, blocks):
    t = balanced_tiling(total, blocks)
    ranges = [get_block_range(t, b) for b in range(blocks)]
    assert sum(e - s for s, e in ranges) == total
    assert max(e - s for s, e in ranges) - min(e - s for s, e in ranges) <= 1


def test_partition_rejects_bad_input():
    with pytest.raises(ValueError, match="max_blocks must be an integer >= 1, got 0"):
        compute_optimal_tiling(10, 4, 0)
    with pytest.raises(ValueError, match=r"block_id must be in \[0, 3\), got 3"):
        get_block_range(compute_optimal_tiling(10, 4, 3), 3)


def api(base=None, dim=24, shape=(1024, 1024, 1024), buffer_num=2):
    t = MultiCoreMatmulTiling(PROFILE)
    t.set_dim(dim)
    t.set_a_type(asc.half)
    t.set_b_type(asc.half)
    t.set_c_type(asc.half)
    t.set_shape(*shape)
    t.set_buffer_num(buffer_num)
    if base:
        t.set_fix_split(*base)
    return t


@pytest.mark.parametrize(
    ("kwargs", "field", "text"),
    [
        ({"base": (256, 256, 128)}, "baseM*baseK*2*dbL0A", "must fit L0A (65536 B), got 131072 B"),
        ({"base": (64, 256, 128)}, "baseN*baseK*2*dbL0B", "must fit L0B (65536 B), got 131072 B"),
        ({"base": (256, 256, 32)}, "baseM*baseN*4*dbL0C", "must fit L0C (131072 B), got 262144 B"),
        ({"base": (100, 64, 64)}, "baseM", "must be a multiple of 16, got 100"),
        ({"dim": 30}, "dim", "must be in 1..24 (Cube cores of ascend910b1), got 30"),
        ({"buffer_num": 3}, "buffer_num", "must be 1 or 2, got 3"),
    ],
)
def test_constraint_violations_name_field_limit_value(kwargs, field, text):
    with pytest.raises(TilingError) as info:
        api(**kwargs).get_tiling()
    assert info.value.field == field
    assert text in str(info.value)


def test_l1_capacity_is_checked():
    t = make_tiling(1024, 1024, 4096, 24, (128, 256, 64), 2, 8, 4, 6, 0)
    with pytest.raises(TilingError, match=r"must fit L1 \(524288 B\), got 786432 B"):
        validate(t, PROFILE)


def test_auto_tiling_is_valid_and_uses_the_cores():
    tiling, scored = auto_tiling(PROFILE, 8192, 8192, 8192)
    validate(tiling, PROFILE)
    assert tiling.usedCoreNum == 24 and scored > 100
    assert (tiling.baseM * tiling.baseN) >= 128 * 128  # big blocks for a big matmul
    assert tiling.dbL0A == tiling.dbL0B == tiling.depthA1 == 2


def test_core_regions_cover_c_once():
    tiling, _ = auto_tiling(PROFILE, 1000, 777, 64)
    covered = [[0] * 777 for _ in range(1000)]
    for b in range(tiling.usedCoreNum):
        m0, n0, rows, cols = tiling.core_region(b)
        for i in range(m0, m0 + rows):
            for j in range(n0, n0 + cols):
                covered[i][j] += 1
    assert all(v == 1 for row in covered for v in row)


@pytest.mark.parametrize(
    ("base", "buffer_num", "steps"),
    [
        ((128, 256, 64), 2, (8, 4)),  # ADK matmul_high_performance case 5 / matmul_basic_api_high_performance
        ((256, 128, 64), 2, (4, 8)),  # the same rule with the operands' sizes swapped
        ((128, 128, 64), 1, (8, 8)),  # one slot each: 8 is the deepest step the tiler knows
        ((64, 64, 64), 2, (8, 8)),
    ],
)
def test_a_fixed_base_block_stages_l1_as_the_published_samples_do(base, buffer_num, steps):
    """SetFixSplit with nothing else: A and B each fill half of L1 in their slots (the published samples'
    layout), so 128 x 256 x 64 moves 8 K slices of A and 4 of B per GM -> L1 copy."""
    tiling = api(base=base, shape=(2048, 2048, 4096), buffer_num=buffer_num).get_tiling()
    assert (tiling.stepKa, tiling.stepKb) == steps
    assert (tiling.depthA1, tiling.depthB1) == (buffer_num, buffer_num)
    assert l1_bytes(tiling) <= PROFILE.buffers.l1
    a_half = buffer_num * base[0] * base[2] * tiling.stepKa * 2
    assert a_half <= PROFILE.buffers.l1 // 2 < 2 * a_half or tiling.stepKa == 8
    short = api(base=base, shape=(2048, 2048, 128), buffer_num=buffer_num).get_tiling()
    assert (short.stepKa, short.stepKb) == (2, 2)  # K = 128 is two slices of 64: no deeper steps


def test_without_a_fixed_base_the_tiler_still_searches_one_step_for_both():
    tiling = api(shape=(2048, 2048, 4096)).get_tiling()
    assert tiling.stepKa == tiling.stepKb
