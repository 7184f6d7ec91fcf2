"""The pipeline's bulk path produces the call-by-call path's events, event for event."""

import dataclasses

import numpy as np
import pytest

from engine import Simulation, load_profile
from engine.scenarios.pipeline import run as run_pipeline

COLUMNS = ("start", "end", "lane", "kind", "name", "nbytes", "flops")


def events(fast, profile, **params):
    sim = Simulation(profile, numerics=False, fast=fast)
    outcome = run_pipeline(sim, seed=0, **params)
    result = sim.finish()
    t = result.trace
    cols = dict(t.columns)
    cols["name"] = np.array(t.names)[t.name]  # ids depend on interning order: compare the texts
    cols["lane"] = np.array([t.lane_label(i) for i in range(len(t.lanes))])[t.lane]
    order = np.lexsort(tuple(cols[c] for c in reversed(COLUMNS)))  # rows starting together may be appended differently
    return outcome, result, {c: cols[c][order] for c in COLUMNS}, t


def shallow_profile():
    """910B1 with streams only 5 tasks deep, so the host blocks on full streams."""
    p = load_profile("ascend910b1")
    return dataclasses.replace(p, limits=dataclasses.replace(p.limits, stream_depth=5))


@pytest.mark.parametrize(
    ("profile", "params"),
    [
        ("ascend910b1", {"n": 64, "batches": 7, "streams": 3, "pageable": False}),
        ("ascend910b1", {"n": 512, "batches": 6, "streams": 2, "pageable": True}),
        ("measured-accelerator", {"n": 1024, "batches": 9, "streams": 4, "pageable": False}),
        ("measured-accelerator", {"n": 256, "batches": 5, "streams": 1, "pageable": True}),
        (shallow_profile(), {"n": 64, "batches": 12, "streams": 2, "pageable": False}),
        (shallow_profile(), {"n": 128, "batches": 8, "streams": 3, "pageable": True}),
    ],
)
def test_bulk_pipeline_equals_call_by_call(profile, params):
    slow_outcome, slow, slow_cols, slow_t = events(False, profile, **params)
    fast_outcome, fast, fast_cols, fast_t = events(True, profile, **params)
    assert fast_outcome.details.get("fast_path") is True and not slow_outcome.details.get("fast_path")
    assert len(slow_t) == len(fast_t)
    for c in COLUMNS:
        np.testing.assert_array_equal(slow_cols[c], fast_cols[c], err_msg=c)
    assert slow.end_ps == fast.end_ps and slow.host_end_ps == fast.host_end_ps
    assert slow.findings == fast.findings == []
    # every device event points at the host call that caused it, in both paths
    for t in (slow_t, fast_t):
        device = np.flatnonzero(np.isin(t.kind, (2, 3)))  # COPY, KERNEL
        assert (t.cause[device] >= 0).all()
        host_lane = t.lane_id("Host", "host thread")
        assert (t.lane[t.cause[device]] == host_lane).all()
