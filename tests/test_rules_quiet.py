"""No rule recommends the configuration already in use: one test per rule, on runs that already apply it.

(tests/test_analysis.py shows each rule firing on a run that needs it; here each rule stays quiet on
every run of a sweep whose parameters already hold its change.)
"""

from __future__ import annotations

import itertools

import pytest

from engine.scenarios.runner import analyze_run, run_scenario


def recommendations(name, **params):
    run = run_scenario(name, "ascend910b1", numerics=False, **params)
    return analyze_run(run, measure_gains=False).recommendations, run.params


def fired(name, rule, **params):
    recs, _ = recommendations(name, **params)
    return [r for r in recs if r.rule == rule]


MATMUL_SHAPES = [(64, 64, 64), (300, 200, 100), (512, 512, 512), (1024, 256, 2048), (16, 1024, 1024)]
VECTOR_LENGTHS = [100, 10_001, 65_536, 300_000]


@pytest.mark.parametrize("shape", MATMUL_SHAPES)
def test_double_buffering_quiet_on_a_double_buffered_matmul(shape):
    m, n, k = shape
    assert not fired("matmul", "double_buffering", m=m, n=n, k=k, buffer_num=2)


@pytest.mark.parametrize("length", VECTOR_LENGTHS)
def test_double_buffering_quiet_on_a_double_buffered_vector_add(length):
    """Even with one tile per block (65536 elements on 32 blocks), where nothing can overlap."""
    assert not fired("vector-add", "double_buffering", length=length, buffer_num=2)


@pytest.mark.parametrize("shape", MATMUL_SHAPES)
def test_larger_base_blocks_quiet_with_automatic_tiling(shape):
    m, n, k = shape
    assert not fired("matmul", "larger_base_blocks", m=m, n=n, k=k)


@pytest.mark.parametrize(("n", "batches", "streams"), [(64, 12, 2), (512, 4, 1), (1024, 6, 3)])
def test_pinned_memory_quiet_with_pinned_memory(n, batches, streams):
    assert not fired("pipeline", "pinned_memory", n=n, batches=batches, streams=streams, pageable=False)


@pytest.mark.parametrize(("n", "batches"), [(1024, 6), (256, 8), (2048, 2)])
def test_second_stream_quiet_with_two_streams(n, batches):
    assert not fired("pipeline", "second_stream", n=n, batches=batches, streams=2)


@pytest.mark.parametrize(
    ("name", "params"),
    [("vector-add", {"length": length}) for length in VECTOR_LENGTHS]
    + [("matmul", {"m": m, "n": n, "k": k}) for m, n, k in MATMUL_SHAPES],
)
def test_too_few_blocks_quiet_when_the_scenario_picks_the_blocks(name, params):
    assert not fired(name, "too_few_blocks", cores=None, **params)


def test_unbalanced_tail_never_asks_for_what_is_in_place():
    """Whole waves of blocks: quiet when the blocks are equal; when they differ (one more tile on some), the
    advice is to split in whole tiles, not to make the block count a multiple of the cores (it already is)."""
    assert not fired("vector-add", "unbalanced_tail", length=48 * 2048 * 3, cores=48)
    recs = fired("vector-add", "unbalanced_tail", length=48 * 2048 + 24, cores=48)  # 24 blocks get a 1-element tile
    assert recs and "multiple of the cores" not in recs[0].advice and "whole tiles" in recs[0].advice
    recs = fired("vector-add", "unbalanced_tail", length=49 * 2048, cores=49)
    assert recs and "multiple of the cores" in recs[0].advice


def test_cache_tilings_quiet_when_the_tiling_is_off_the_critical_path():
    assert not fired("matmul", "cache_tilings", m=4096, n=4096, k=4096)


@pytest.mark.parametrize(("n", "batches", "streams"), [(64, 12, 2), (64, 50, 4), (128, 20, 1), (2048, 6, 2)])
def test_host_between_launches_never_says_stop_synchronising_when_it_does_not(n, batches, streams):
    for rec in fired("pipeline", "host_between_launches", n=n, batches=batches, streams=streams, sync_each=False):
        assert rec.change is None and "synchroniz" not in rec.advice.lower()
    recs = fired("pipeline", "host_between_launches", n=64, batches=12, streams=2, sync_each=True)
    assert recs and recs[0].change == {"sync_each": False}


SWEEP = [
    *(
        ("matmul", {"m": m, "n": n, "k": k, "buffer_num": b})
        for (m, n, k), b in itertools.product(MATMUL_SHAPES, (1, 2))
    ),
    ("matmul", {"m": 1024, "n": 1024, "k": 1024, "base": "64,64,256"}),
    ("matmul", {"m": 512, "n": 512, "k": 512, "cores": 4}),
    *(("vector-add", {"length": length, "buffer_num": b}) for length, b in itertools.product(VECTOR_LENGTHS, (1, 2))),
    ("vector-add", {"length": 65_536, "cores": 4}),
    *(
        ("pipeline", {"n": n, "batches": 6, "streams": s, "pageable": p, "sync_each": e})
        for n, s, p, e in itertools.product((64, 1024), (1, 2), (False, True), (False, True))
    ),
]


@pytest.mark.parametrize(("name", "params"), SWEEP)
def test_no_recommended_change_is_already_in_place(name, params):
    recs, used = recommendations(name, **params)
    for rec in recs:
        if rec.change:
            assert not all(used.get(k) == v for k, v in rec.change.items()), (rec.rule, rec.change, used)


def test_one_recommendation_per_change_also_when_the_caller_cannot_rerun():
    """A run with no scenario parameters (a lesson, a trainee's program) gets advice only: the seed's rules
    still do not repeat a change an earlier rule recommends (single-buffered kernel on 2 of 48 cores:
    double buffering once, more blocks once)."""
    from engine import Simulation
    from engine.analysis import analyze
    from lessons import catalog

    sim = Simulation()
    catalog.get(3).module("scenario").scenario(sim)
    recs = analyze(sim.finish(), {}, None).recommendations
    rules = [r.rule for r in recs]
    assert "double_buffering" in rules and "memory_bottleneck" not in rules
    assert "too_few_blocks" in rules and "low_parallelism" not in rules
    assert all(r.change is None for r in recs)
