"""Two runs of the same scenario produce identical traces, column for column."""

import numpy as np

from engine.scenarios.runner import run_scenario


def test_pipeline_traces_are_identical():
    a = run_scenario("pipeline", "measured-accelerator", n=128, batches=6, streams=3).result.trace
    b = run_scenario("pipeline", "measured-accelerator", n=128, batches=6, streams=3).result.trace
    assert len(a) == len(b) > 0
    for name, col in a.columns.items():
        np.testing.assert_array_equal(col, b.columns[name], err_msg=name)
    assert a.names == b.names and a.lanes == b.lanes and a.srcs == b.srcs


def test_host_lifecycle_is_correct_and_repeatable():
    r1 = run_scenario("host-lifecycle", n=64)
    r2 = run_scenario("host-lifecycle", n=64)
    assert r1.outcome.correct is True
    assert r1.result.end_ps == r2.result.end_ps
