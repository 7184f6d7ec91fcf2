"""Two runs of the same scenario produce identical traces, column for column."""

import numpy as np
import pytest

from engine.scenarios import registry
from engine.scenarios.runner import run_scenario
from tests.scenario_sizes import SMALL


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


@pytest.mark.parametrize("name", sorted(registry()))
def test_a_run_not_compared_with_numpy_is_the_same_run_without_a_verdict(name):
    """``verify=False`` (a caller that shows no verdict: the web playground, the TUI's walkthroughs) skips only the
    comparison with numpy: the same trace, column for column, the same end, and no verdict, error or tolerance."""
    checked = run_scenario(name, **SMALL[name])
    unchecked = run_scenario(name, verify=False, **SMALL[name])
    assert checked.outcome.correct is True
    assert unchecked.outcome.correct is None
    assert not {"max_abs_err", "tolerance"} & set(unchecked.outcome.details)
    a, b = checked.result.trace, unchecked.result.trace
    assert len(a) == len(b) > 0 and checked.result.end_ps == unchecked.result.end_ps
    for column, values in a.columns.items():
        np.testing.assert_array_equal(values, b.columns[column], err_msg=column)
    assert a.names == b.names and a.lanes == b.lanes and a.srcs == b.srcs and a.details == b.details


@pytest.mark.parametrize("name", sorted(registry()))
def test_a_run_hands_over_the_inputs_it_drew(name):
    """A scenario that names its inputs (``Scenario.inputs``) returns the arrays its run drew, the same as drawing
    them again from its parameters (what a replay shows); without numerics, or without named inputs, none."""
    run = run_scenario(name, **SMALL[name])
    if run.scenario.inputs is None:
        assert run.outcome.inputs is None
        return
    drawn, again = run.outcome.inputs, run.scenario.inputs(run.params)
    assert drawn is not None and drawn.keys() == again.keys()
    for key, values in again.items():
        np.testing.assert_array_equal(drawn[key], values, err_msg=key)
    assert run_scenario(name, numerics=False, **SMALL[name]).outcome.inputs is None
