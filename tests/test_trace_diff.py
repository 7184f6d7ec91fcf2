"""The trainee's run against the reference solution's: statements in words at the steps where they show."""

from __future__ import annotations

import json
import os
import uuid

import pytest

from app.present.trace_diff import TraceDiff, trace_diff
from app.web.runs import Runs
from engine.trace import Kind
from lessons.catalog import get
from lessons.sandbox import missing


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    if why := missing():
        pytest.fail(why) if os.environ.get("CI") == "true" else pytest.skip(why)
    return Runs(tmp_path_factory.mktemp("runs"))


def _run(runs: Runs, number: int, code: str):
    _result, run = runs.check(number, code, "en", uuid.uuid4().hex, lambda *_: None)
    return runs.load(run).replay, runs.load(runs.reference(get(number))).replay


def test_a_single_buffered_stub_lost_overlap_and_does_no_arithmetic_each_said_at_its_step(runs):
    mine, ref = _run(runs, 5, get(5).exercise_file.read_text(encoding="utf-8"))
    diff = trace_diff(mine, ref)
    assert TraceDiff.from_dict(json.loads(json.dumps(diff.to_dict(), default=float))) == diff  # the JSON edge
    said = {s.key: s for s in diff.statements}
    assert said["overlap"].values["mine"] < said["overlap"].values["ref"]
    assert said["less_work"].values["mine_flops"] == 0 < said["less_work"].values["ref_flops"]
    for s in said.values():
        assert s.step is not None and 0 <= s.step < len(mine)
    kernel = mine.event(said["less_work"].step)
    assert kernel.kind == Kind.KERNEL.name


def test_the_reference_against_itself_is_the_same_lane_by_lane(runs):
    code = get(3).solution_file.read_text(encoding="utf-8")
    mine, ref = _run(runs, 3, code)
    assert mine.source("exercise.py") == code  # the Code view shows the trainee's file
    diff = trace_diff(mine, ref)
    assert [s.key for s in diff.statements] == ["same"]
    assert diff.lanes and all(x.mine_us == x.ref_us and x.mine_events == x.ref_events for x in diff.lanes)
