"""Dynamic shapes: shape history, the tiling cache, and the three policies on the three sequences."""

import pytest

from engine import load_profile
from engine.aicore.matmul_tiling import auto_tiling
from engine.host.dynamic_shapes import DynamicShapeCoordinator, ShapeHistory, TilingCache, size_bucket
from engine.scenarios.dynamic_shapes import shapes_of
from engine.scenarios.runner import run_scenario

PROFILE = load_profile("ascend910b1")


def test_history_measures_the_seeds_variability():
    h = ShapeHistory()
    assert h.variability() == 0.0 and h.stability() == 1.0
    for shape in [(100, 10, 10), (110, 10, 10), (99, 10, 10)]:
        h.add(shape)
    assert h.variability() == pytest.approx((0.1 + 11 / 110) / 2)
    assert h.stability((99, 10, 10)) == pytest.approx(1 - (0.1 + 0.1 + 0) / 3)
    h2 = ShapeHistory()
    h2.add((64, 64, 64))
    assert h2.stability((1024, 1024, 1024)) == 0.0  # a jump of 4095x clips to zero stability


def test_the_cache_returns_exactly_what_recomputing_would():
    coordinator = DynamicShapeCoordinator(PROFILE, "cache")
    for shape in [(512, 256, 128), (300, 200, 100), (512, 256, 128), (300, 200, 100)]:
        decision = coordinator.make_decision(shape)
        assert decision.tiling == auto_tiling(PROFILE, *shape, 24, 2)[0]
    assert (coordinator.cache.hits, coordinator.cache.misses, len(coordinator.cache)) == (2, 2, 2)
    cache = TilingCache()
    key = cache.key(PROFILE, (1, 2, 3), 24, 2)
    assert cache.get(key) is None and cache.misses == 1


@pytest.mark.parametrize("sequence", ["stable", "drifting", "random"])
def test_each_policy_against_recompute(sequence):
    shapes = shapes_of(sequence, 8, 0)
    full = [auto_tiling(PROFILE, *s, 24, 2)[1] for s in shapes]
    results = {}
    for policy in ("recompute", "cache", "adaptive"):
        c = DynamicShapeCoordinator(PROFILE, policy)
        decisions = [c.make_decision(s) for s in shapes]
        results[policy] = decisions
        for d, s in zip(decisions, shapes, strict=True):
            assert s[0] == d.tiling.M and s[1] == d.tiling.N and d.tiling.Ka == s[2]  # a tiling for this shape
    recompute = results["recompute"]
    assert [d.candidates for d in recompute] == full and all(d.cache == "none" for d in recompute)
    cache = results["cache"]
    # the cache pays one lookup per shape and a full search per new shape
    repeated = [s in shapes[:i] for i, s in enumerate(shapes)]
    assert [d.cache for d in cache] == ["hit" if r else "miss" for r in repeated]
    assert [d.candidates for d in cache] == [1 if r else n + 1 for r, n in zip(repeated, full, strict=True)]
    adaptive = results["adaptive"]
    total = {p: sum(d.tiling_us for d in ds) for p, ds in results.items()}
    if sequence == "stable":  # one shape over and over: tuned once, then looked up
        assert [d.strategy for d in adaptive] == ["search"] + ["cached"] * 7
        assert total["adaptive"] == total["cache"] < total["recompute"] / 5
    elif sequence == "drifting":  # slow change: stable, each new shape fits the size bucket's base block
        assert all(d.stability > 0.8 for d in adaptive[1:])
        assert {d.strategy for d in adaptive[1:]} <= {"bucket", "search"} and "bucket" in {d.strategy for d in adaptive}
        assert total["adaptive"] < total["recompute"] / 2 < total["cache"]
    else:  # random sizes: variable, the seed's conservative safe block, no search over bases
        assert all(d.stability <= 0.8 and d.strategy == "safe" for d in adaptive[1:])
        assert total["adaptive"] < total["recompute"] / 4


def test_size_buckets():
    assert size_bucket((100, 16, 1)) == (128, 16, 16) and size_bucket((512, 513, 1000)) == (512, 1024, 1024)


def test_scenario_reports_decisions_and_puts_tiling_on_the_host_timeline():
    run = run_scenario("dynamic-shapes", sequence="random", count=6, policy="adaptive")
    d = run.outcome.details
    assert run.outcome.correct and len(d["decisions"]) == 6
    assert d["tiling_us_total"] < d["recompute_tiling_us_total"]
    summary = run.summary()
    assert len(summary["kernel_us_per_shape"]) == 6 and all(k > 0 for k in summary["kernel_us_per_shape"])
    t = run.result.trace
    tiling = [t.names[t.name[i]] for i in range(len(t)) if t.kind[i] == 12]  # HOST_WORK
    assert len(tiling) == 6 and all(name.startswith("tiling ") for name in tiling)
    with pytest.raises(Exception, match="--sequence"):
        run_scenario("dynamic-shapes", sequence="12x12")
