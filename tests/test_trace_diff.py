"""The trainee's run against the reference solution's: statements in words at the steps where they show."""

from __future__ import annotations

import itertools
import json
import os
import uuid

import pytest

from app.present.messages import metric_name
from app.present.messages_metrics import METRIC_NAMES
from app.present.trace_diff import ALIGNED_PAIRS, TraceDiff, aligned_timelines, trace_diff
from app.web.runs import Runs
from engine.trace import Kind, LaneKind
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


def _single_buffered() -> str:
    """Lesson 5's reference with one slot per queue: right, but its copies and compute take turns."""
    code = get(5).solution_file.read_text(encoding="utf-8")
    single = code.replace("BUFFER_NUM = 2 ", "BUFFER_NUM = 1 ")
    assert single != code
    return single


def test_a_single_buffered_kernel_lost_overlap_said_at_its_step(runs):
    mine, ref = _run(runs, 5, _single_buffered())
    diff = trace_diff(mine, ref)
    assert TraceDiff.from_dict(json.loads(json.dumps(diff.to_dict(), default=float))) == diff  # the JSON edge
    said = {s.key: s for s in diff.statements}
    assert said["overlap"].values["mine"] < said["overlap"].values["ref"]
    for s in said.values():
        assert s.step is not None and 0 <= s.step < len(mine)


def test_the_stub_does_no_arithmetic_said_at_its_kernel(runs):
    mine, ref = _run(runs, 5, get(5).exercise_file.read_text(encoding="utf-8"))
    said = {s.key: s for s in trace_diff(mine, ref).statements}
    assert said["less_work"].values["mine_flops"] == 0 < said["less_work"].values["ref_flops"]
    assert mine.event(said["less_work"].step).kind == Kind.KERNEL.name


def test_the_reference_against_itself_is_the_same_lane_by_lane(runs):
    code = get(3).solution_file.read_text(encoding="utf-8")
    mine, ref = _run(runs, 3, code)
    assert mine.source("exercise.py") == code  # the Code view shows the trainee's file
    diff = trace_diff(mine, ref)
    assert [s.key for s in diff.statements] == ["same"]
    assert diff.lanes and all(x.mine_us == x.ref_us and x.mine_events == x.ref_events for x in diff.lanes)


def test_the_aligned_timelines_put_each_lane_of_yours_above_the_same_lane_of_the_reference(runs):
    mine, ref = _run(runs, 5, _single_buffered())
    view = aligned_timelines(mine, ref, ("yours", "ref"))
    rows = view["lanes"]
    ends = [r.result.end_ps / 1e6 for r in (mine, ref)]
    assert view["t0_us"] > 0 and view["t1_us"] >= max(ends)  # one time axis for both, from the first copy on
    pairs = [(a, b) for a, b in itertools.pairwise(rows) if a["pair"] == b["pair"]]
    assert pairs and len({x["label"] for x in rows}) == len(rows)
    for a, b in pairs:
        assert (a["run"], b["run"]) == ("yours", "ref") and a["label"].endswith(" · yours")
        assert a["label"].removesuffix(" · yours") == b["label"].removesuffix(" · ref")
    assert all(x["count"] for x in rows)  # no lane idle in both runs
    pipes = {x["label"].removesuffix(" · yours") for x in rows if x["kind"] == "PIPE" and x["run"] == "yours"}
    assert {"AIV 0/MTE2", "AIV 0/MTE3"} <= pipes, pipes
    mte2 = [next(x for x in rows if x["label"] == f"AIV 0/MTE2 · {who}") for who in ("yours", "ref")]
    starts = [[b["start_us"] for b in x["bars"]] for x in mte2]
    assert starts[0] != starts[1]  # the stub's single buffer loads at other times: the rows show where


def test_the_aligned_timelines_keep_the_first_cores_pipes_when_there_are_more_lanes_than_rows(runs):
    code = get(7).solution_file.read_text(encoding="utf-8")
    mine, ref = _run(runs, 7, code)
    rows = aligned_timelines(mine, ref, ("yours", "ref"))["lanes"]
    blocks = {x["core"] for x in rows if x["kind"] == "BLOCK"}
    assert len(rows) == 2 * ALIGNED_PAIRS and len(blocks) < len(set(_cores(mine)))
    assert {x["core"] for x in rows if x["kind"] == "PIPE"} == {"AIC 0"} and "AIC 0" in blocks
    assert all(
        a["label"].removesuffix(" · yours") == b["label"].removesuffix(" · ref")
        for a, b in zip(rows[::2], rows[1::2], strict=True)
    )


def _cores(replay) -> set[str]:
    return {lane.process for lane in replay.trace.lanes if lane.kind == LaneKind.BLOCK}


def test_every_compared_figure_and_lane_has_a_name_in_both_languages(runs):
    mine, ref = _run(runs, 5, _single_buffered())
    diff = trace_diff(mine, ref)
    assert set(diff.metrics) <= set(METRIC_NAMES), set(diff.metrics) - set(METRIC_NAMES)
    for name in diff.metrics:
        en, zh = metric_name(name, "en"), metric_name(name, "zh")
        assert en.endswith(f" · {name}") and zh.endswith(f" · {name}") and en != zh
    host = next(x for x in diff.lanes if x.name.startswith("Host"))
    assert host.labels["en"] != host.labels["zh"] and any("\u4e00" <= ch <= "\u9fff" for ch in host.labels["zh"])


def test_a_check_keeps_the_lessons_references_for_the_next_one_as_this_code_computes_them(runs):
    from app.kept_references import kept
    from lessons.judge import references

    lesson = get(3)
    _run(runs, 3, lesson.solution_file.read_text(encoding="utf-8"))
    found = kept(lesson, runs.store.directory)
    assert found is not None and found == json.loads(json.dumps(references(lesson)))
    assert runs.store.directory == runs.code_dir  # named after the code: another version never reads them
