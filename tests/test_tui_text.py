"""The pure parts under the terminal UI: text drawing of view-models (app.present.text), run phases,
walkthroughs (lesson steps resolved into the replay) and the TUI's navigation arithmetic."""

import dataclasses

import pytest

from app.present import Replay, viewport
from app.present.messages import keys
from app.present.messages import t as msg
from app.present.phases import phase_bounds, phases_view
from app.present.text import (
    BUSY,
    EIGHTHS,
    cells,
    column_of,
    fit,
    hbar,
    lane_cells,
    lane_label,
    number,
    reflow,
    value_rows,
)
from app.present.views import timeline_view
from app.present.walkthrough import Stop, lesson_walkthrough
from app.tui import navigation as nav
from engine.trace.locations import CoreRef
from lessons import catalog
from tests.tui_helpers import lesson, matmul


def _lane(bars, aggregated=False):
    if aggregated:
        return {"aggregated": True, "buckets": bars}
    return {
        "aggregated": False,
        "bars": [dict(zip(("start_us", "end_us", "kind", "done"), b, strict=True)) for b in bars],
    }


def test_lane_cells_give_busy_share_in_eighths_and_the_dominant_kind():
    lane = _lane(
        [
            (0.0, 1.0, "COMPUTE", True),
            (2.0, 2.5, "MOVE", False),
            (3.0, 3.25, "MOVE", False),
            (3.25, 4.0, "COMPUTE", False),
        ]
    )
    cols = lane_cells(lane, 0.0, 4.0, 4, cursor_us=1.0)
    assert [c.char for c in cols] == ["█", " ", EIGHTHS[4], "█"]
    assert [c.kind for c in cols] == ["COMPUTE", "", "MOVE", "COMPUTE"]
    assert [c.done for c in cols] == [True, False, False, False]


def test_lane_cells_show_zero_length_events_and_cut_to_the_window():
    lane = _lane([(0.5, 0.5, "ERROR", True), (1.5, 9.0, "CALL", False)])
    cols = lane_cells(lane, 0.0, 4.0, 4, cursor_us=0.0)
    assert cols[0].char == "!" and cols[0].kind == "ERROR"
    assert cols[1].char == EIGHTHS[4] and [c.char for c in cols[2:]] == ["█", "█"]
    assert lane_cells(lane, 10.0, 20.0, 5, 0.0) == lane_cells(_lane([]), 10.0, 20.0, 5, 0.0)


def test_aggregated_buckets_keep_their_busy_share():
    lane = _lane([{"start_us": 0.0, "end_us": 1.0, "busy": 0.5}, {"start_us": 1.0, "end_us": 2.0, "busy": 1.0}], True)
    cols = lane_cells(lane, 0.0, 2.0, 2, cursor_us=1.5)
    assert [c.char for c in cols] == [EIGHTHS[4], "█"] and {c.kind for c in cols} == {BUSY}
    assert [c.done for c in cols] == [True, True]


def test_timeline_view_drawn_at_its_own_width_matches_the_trace():
    walk = matmul()
    view = timeline_view(walk.replay, 50, max_bars=40)
    for lane in view["lanes"]:
        cols = lane_cells(lane, view["t0_us"], view["t1_us"], 40, view["cursor_us"])
        assert len(cols) == 40
        if lane["count"]:
            assert any(c.kind for c in cols), lane["label"]
    labels = [lane_label(lane) for lane in view["lanes"]]
    assert labels[0] == "host thread" and "AIC 0" in labels and "stream 1" in labels


def test_column_bars_and_fitting_text():
    assert column_of(0.0, 0.0, 10.0, 10) == 0 and column_of(10.0, 0.0, 10.0, 10) == 9
    assert column_of(5.0, 0.0, 10.0, 10) == 5 and column_of(11.0, 0.0, 10.0, 10) is None
    assert hbar(0.5, 4) == "██  " and hbar(1 / 16, 2) == "▏ " and hbar(2.0, 3) == "███"
    assert cells("主机 CPU") == 8 and fit("主机线程", 5) == "主机…" and fit("主机线程", 6) == "主机… "
    assert fit("abc", 5) == "abc  "
    assert fit("abcdef", 4) == "abc…" and fit("x", 0) == ""
    assert number(0.123456, 7) == " 0.1235" and number(-123456.0, 7) == " -1e+05" and number(1e300, 2) == "##"
    assert value_rows([[1.0, 2.0, 3.0]], 15, cell=6) == ["     1      2 …"]


def test_reflow_joins_wrapped_lines_and_keeps_paragraphs():
    assert reflow("one two\nthree\n\nnext\n") == "one two three\n\nnext"
    assert reflow("第一行\n第二行 ok\nmore") == "第一行第二行 ok more"
    assert reflow("调用\nscale_kernel\n计算") == "调用 scale_kernel 计算"  # as the lessons space them in a line


def test_phases_split_the_run_at_the_device_work():
    walk = lesson(1)
    bounds = phase_bounds(walk.replay)
    (s0, s1), (w0, w1), (t0, t1) = bounds["setup"], bounds["work"], bounds["teardown"]
    assert s0 == 0 and s1 == w0 < w1 == t0 < t1 == walk.replay.result.end_ps
    view = phases_view(walk.replay, 0, "zh")
    assert [p["label"] for p in view["phases"]] == ["准备", "设备工作", "收尾"]
    assert view["current"] == "setup" and abs(sum(p["share"] for p in view["phases"]) - 1) < 1e-3
    last = phases_view(walk.replay, len(walk.replay) - 1)
    assert last["current"] == "teardown"


def test_every_lesson_walkthrough_resolves_its_steps_or_says_why():
    for n in catalog.numbers():
        walk = lesson(n)
        spec = catalog.get(n)
        assert len(walk.stops) == len(spec.steps)
        assert walk.title["en"].startswith(f"Lesson {n}: ") and walk.title["zh"].startswith(f"第 {n} 课")
        for stop in walk.stops:
            assert set(stop.text) == {"en", "zh"}
            assert (stop.step is None) == bool(stop.problem)
            if stop.step is not None:
                assert 0 <= stop.step < len(walk.replay)
        assert walk.start == next((s.step for s in walk.stops if s.step is not None), 0)
        assert walk.kinds()
        cores_in_trace = {lane.process for lane in walk.replay.trace.lanes if lane.core >= 0}
        assert {c.label for c in walk.cores()} == cores_in_trace  # none for a lesson on op-level work (lesson 8)


def test_a_step_whose_selector_matches_nothing_is_kept_with_its_reason():
    walk = lesson(1)
    bad = dataclasses.replace(walk.stops[0], step=None, problem="selector {'kind': 'MOVE'} matches 0 row(s)")
    broken = dataclasses.replace(walk, stops=(bad, *walk.stops[1:]))
    assert broken.start == walk.stops[1].step
    assert isinstance(broken.stops[0], Stop) and "matches 0 row" in broken.stops[0].problem


def test_walkthrough_navigation_helpers_agree_with_the_replay():
    walk = lesson(1)
    replay = Replay(walk.replay.result)
    for kind in walk.kinds():
        assert walk.next_of_kind(0, kind) == replay.next_of_kind(0, kind)
    step = walk.next_of_kind(0, "COMPUTE")
    assert walk.core_at(step) in walk.cores()
    assert walk.core_at(0) is None  # acl.init runs on the host


def test_lesson_walkthrough_reports_its_phases():
    seen = []
    lesson_walkthrough(2, seen.append)
    assert seen == ["run", "replay", "steps", "analysis"]


def test_navigation_zoom_pan_follow_and_core_numbers():
    end = 100.0
    assert viewport.window(end, None, 10.0) is None and viewport.window(end, 200.0, 10.0) is None
    assert viewport.window(end, 10.0, 50.0) == (45.0, 55.0)
    assert viewport.window(end, 10.0, 1.0) == (0.0, 10.0) and viewport.window(end, 10.0, 99.0) == (90.0, 100.0)
    assert viewport.zoom(end, None, 1) == 25.0 and viewport.zoom(end, 25.0, -1) is None
    assert viewport.zoom(end, 1e-6, 1) == 1e-6
    assert not viewport.can_zoom(None, -1) and viewport.can_zoom(None, 1) and not viewport.can_zoom(2e-6, 1)
    # following turns pages of the span: 10 us wide, 8 us apart, the cursor never in a page's first tenth
    assert viewport.page_center(end, 10.0, 52.0, 0.0) == viewport.page_center(end, 10.0, 56.8, 0.0) == 53.0
    assert viewport.page_center(end, 10.0, 57.1, 0.0) == 61.0  # past nine tenths: the next page
    assert viewport.page_center(end, 10.0, 0.5, 0.0) == 5.0 and viewport.page_center(end, 10.0, 99.0, 0.0) == 95.0
    assert viewport.page_center(end, None, 52.0, 7.0) == 7.0  # the whole run shown: nothing moves
    assert viewport.pan(end, 10.0, 50.0, 1) == 55.0 and viewport.pan(end, 10.0, 98.0, 1) == 95.0
    assert viewport.opening(end, (40.0, 60.0)) == (25.0, 50.0) and viewport.opening(end, (0.0, 0.0)) == (None, 50.0)
    cores = [CoreRef("AIC", 0), CoreRef("AIC", 1), CoreRef("AIV", 0), CoreRef("AIV", 1), CoreRef("AIV", 2)]
    assert nav.core_by_number(cores, 1) == CoreRef("AIC", 1)
    assert nav.core_by_number(cores, 1, "AIV") == CoreRef("AIV", 1)
    assert nav.core_by_number(cores, 2) == CoreRef("AIV", 2) and nav.core_by_number(cores, 7) is None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_key_of_the_tui_has_text_in_both_languages(lang):
    from app.tui import AscendApp
    from app.tui.widgets.keybar import ENTRIES

    for binding in AscendApp.BINDINGS:
        assert msg(binding.description, lang).strip()
    for _keys, word, _actions in ENTRIES:
        assert msg(word, lang).strip()
    for key in keys():
        if key.startswith(("key.", "short.", "prepare.", "phase.")):
            assert msg(key, "en") != msg(key, "zh"), key  # translated, not copied
