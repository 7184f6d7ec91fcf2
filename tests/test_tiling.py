"""Host tiling: the balanced partition (property-tested) and the matmul tiling's constraints."""

import itertools
from dataclasses import replace

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


def _lesson_tiling(**changes):
    """Lesson 7's tiling of 4096^3: 128 x 256 x 64 base blocks, stepKa = stepKb = 4, double-buffered."""
    return replace(make_tiling(4096, 4096, 4096, 24, (128, 256, 64), 2, 4, 4, 6, 0), **changes)


def test_depth_counts_base_blocks_as_cann_does():
    """CANN's TCubeTiling: "depthA1为A1中全载baseM*baseK的份数" (base blocks of A held in A1), so stepKa = 4
    double-buffered is depthA1 = 8, and L1 holds 8 blocks of A and 8 of B."""
    t = _lesson_tiling()
    assert (t.depthA1, t.depthB1, t.stepKa, t.stepKb) == (8, 8, 4, 4)
    validate(t, PROFILE)
    assert (t.l1_slots_a, t.l1_slots_b) == (2, 2)
    assert l1_bytes(t) == (8 * 128 * 64 + 8 * 64 * 256) * 2 == 393216
    single = _lesson_tiling(depthA1=4, depthB1=4)  # one buffer of 4 base blocks each
    validate(single, PROFILE)
    assert (single.l1_slots_a, single.l1_slots_b) == (1, 1)


@pytest.mark.parametrize(
    ("changes", "field", "text"),
    [
        ({"depthA1": 2}, "depthA1", "must be stepM*stepKa (4, one buffer) or twice it (8, double buffered), got 2"),
        ({"depthB1": 6}, "depthB1", "must be stepN*stepKb (4, one buffer) or twice it (8, double buffered), got 6"),
        ({"depthA1": 16}, "depthA1", "or twice it (8, double buffered), got 16"),
    ],
)
def test_a_depth_that_is_not_one_or_two_k_steps_is_rejected(changes, field, text):
    with pytest.raises(TilingError) as info:
        validate(_lesson_tiling(**changes), PROFILE)
    assert info.value.field == field
    assert text in str(info.value)


def test_the_kernel_runs_a_depth_of_eight_as_two_l1_buffers_of_four_blocks():
    """matmul_tiled with depthA1 = depthB1 = 8, stepKa = stepKb = 4: C is right, and the GM -> L1 copies
    alternate between two slots of A1 / B1 (ping, pong)."""
    import numpy as np

    from engine import Simulation
    from engine.kernels.matmul import matmul_tiled
    from engine.trace import Kind
    from tests.kernel_helpers import from_device, inputs, to_device

    m, n, k = 128, 256, 1024
    t = make_tiling(m, n, k, 1, (128, 256, 64), 2, 4, 1, 1, 0)
    assert (t.depthA1, t.depthB1) == (8, 8)
    sim = Simulation("ascend910b1")
    sim.acl.init()
    sim.acl.rt.set_device(0)
    stream, _ = sim.acl.rt.create_stream()
    a, b = inputs(m, n, k, seed=3)
    da, db = to_device(sim, a), to_device(sim, b)
    dc, _ = sim.acl.rt.malloc(m * n * 2, 0)
    args = (asc.GlobalAddress(da), asc.GlobalAddress(db), asc.GlobalAddress(dc, asc.half), t, False)
    sim.acl.rt.launch_kernel(matmul_tiled, 1, stream, *args)
    assert sim.acl.rt.synchronize_stream(stream) == 0
    c = from_device(sim, dc, (m, n), np.float16)
    result = sim.finish()
    ref = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c.astype(np.float32), ref, rtol=2e-3, atol=2e-3 * np.abs(ref).max())
    cols, tr = result.trace.columns, result.trace
    l1 = [
        i
        for i in range(len(tr))
        if cols["kind"][i] == Kind.MOVE and tr.names[cols["name"][i]] == "data_copy GM->L1 ND2NZ"
    ]
    assert len(l1) == 2 * (k // 64 // 4)  # one copy of A and one of B per K step of 4 slices
    assert sorted({int(cols["slot"][i]) for i in l1}) == [0, 1]


def test_auto_tiling_is_valid_and_uses_the_cores():
    tiling, scored = auto_tiling(PROFILE, 8192, 8192, 8192)
    validate(tiling, PROFILE)
    assert tiling.usedCoreNum == 24 and scored > 100
    assert (tiling.baseM * tiling.baseN) >= 128 * 128  # big blocks for a big matmul
    assert tiling.dbL0A == tiling.dbL0B == 2
    assert tiling.depthA1 == 2 * tiling.stepKa  # base blocks in L1: two slots of stepKa


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
    assert (tiling.depthA1, tiling.depthB1) == (buffer_num * steps[0], buffer_num * steps[1])  # base blocks
    assert l1_bytes(tiling) <= PROFILE.buffers.l1
    a_half = buffer_num * base[0] * base[2] * tiling.stepKa * 2
    assert a_half <= PROFILE.buffers.l1 // 2 < 2 * a_half or tiling.stepKa == 8
    short = api(base=base, shape=(2048, 2048, 128), buffer_num=buffer_num).get_tiling()
    assert (short.stepKa, short.stepKb) == (2, 2)  # K = 128 is two slices of 64: no deeper steps


def test_without_a_fixed_base_the_tiler_still_searches_one_step_for_both():
    tiling = api(shape=(2048, 2048, 4096)).get_tiling()
    assert tiling.stepKa == tiling.stepKb
