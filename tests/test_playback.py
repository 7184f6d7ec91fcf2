"""The playback model both UIs use: the lesson step never runs backwards, the speeds are exact, play stops
at breakpoints, and a lesson whose steps point backwards loads with a problem instead of a wrong narration."""

import random

import pytest

from app.present.playback import (
    MIN_INTERVAL_MS,
    SPEEDS,
    AnchorOrderError,
    Playback,
    check_anchors,
    lesson_nav,
    lesson_step_at,
    lesson_steps,
    speed_tick,
)
from app.present.replay import Replay
from app.present.walkthrough import lesson_stops, run_lesson
from lessons import catalog

ANCHORS = (2, 5, 5, 9, None, 12)  # lesson steps 2 and 3 share event 5; step 5 resolved to nothing


def test_the_lesson_step_is_the_last_anchor_at_or_before_the_event():
    assert [lesson_step_at(ANCHORS, s) for s in range(15)] == [-1, -1, 0, 0, 0, 2, 2, 2, 2, 3, 3, 3, 5, 5, 5]
    assert lesson_steps(ANCHORS, 3, 7) == [lesson_step_at(ANCHORS, s) for s in range(3, 10)]


def test_anchors_out_of_order_are_refused_naming_both_steps():
    check_anchors((0, 0, None, 3))
    with pytest.raises(AnchorOrderError, match=r"lesson step 3 points at event 4, before lesson step 2's event 8"):
        check_anchors((1, 7, 3))
    with pytest.raises(AnchorOrderError):
        Playback(20, (1, 7, 3))


def test_random_moves_never_take_the_lesson_step_backwards_while_the_event_goes_forward():
    rng = random.Random(20)
    for _run in range(50):
        n = rng.randint(1, 60)
        anchors = tuple(sorted(rng.randrange(n) for _ in range(rng.randint(0, 8))))
        anchors = tuple(None if rng.random() < 0.15 else a for a in anchors)
        pb = Playback(n, anchors)
        for _move in range(200):
            before, lesson = pb.step, pb.lesson_step
            move = rng.choice(("move", "seek", "choose", "lesson", "first", "end"))
            if move == "move":
                pb.move(rng.choice((-3, -1, 1, 1, 2, 5)))
            elif move == "seek":
                pb.seek(rng.randrange(-2, n + 2))
            elif move == "choose" and anchors:
                pb.choose(rng.randrange(len(anchors)))
            elif move == "lesson":
                pb.lesson(rng.choice((-1, 1)))
            elif move == "first":
                pb.first()
            else:
                pb.end()
            assert 0 <= pb.step < n
            if move in ("move", "seek", "first", "end") and pb.step > before:
                assert pb.lesson_step >= lesson, (anchors, before, pb.step)
            if pb.lesson_step >= 0:
                assert anchors[pb.lesson_step] is not None and anchors[pb.lesson_step] <= pb.step


def test_a_chosen_lesson_step_sharing_its_anchor_is_shown_until_the_event_moves():
    pb = Playback(20, ANCHORS)
    assert pb.choose(1) and (pb.step, pb.lesson_step) == (5, 1)  # the rule alone would say 2
    assert pb.lesson(1) and (pb.step, pb.lesson_step) == (5, 2)
    assert pb.lesson(-1) and (pb.step, pb.lesson_step) == (5, 1)
    pb.move(1)
    assert (pb.step, pb.lesson_step) == (6, 2)
    pb.move(-1)
    assert (pb.step, pb.lesson_step) == (5, 2)  # back on the anchor by a move: the rule again
    assert not pb.choose(4) and pb.step == 5  # resolved to nothing: nothing moves
    pb.seek(10)
    assert pb.lesson(1) and (pb.step, pb.lesson_step) == (12, 5)  # skips step 5 (index 4), which has no anchor
    assert not pb.lesson(1) and not pb.can_lesson(1) and pb.can_lesson(-1)
    assert pb.lesson(-1) and (pb.step, pb.lesson_step) == (9, 3)


def test_next_lesson_step_before_the_first_anchor_goes_to_the_first():
    pb = Playback(20, ANCHORS)
    assert pb.lesson_step == -1 and not pb.can_lesson(-1)
    assert pb.lesson(1) and (pb.step, pb.lesson_step) == (2, 0)
    assert lesson_nav(ANCHORS, 1) == [0, 1, 2, 3, 5, 5, None]
    assert lesson_nav(ANCHORS, -1) == [None, None, 0, 1, 2, 3, 3]


def test_every_speed_plays_exactly_its_events_per_second_with_ticks_at_least_20_ms_apart():
    table = {s: speed_tick(s) for s in SPEEDS}
    assert table[50] == (20, 1) and table[200] == (20, 4) and table[1] == (1000, 1) and table[5000] == (20, 100)
    for speed, (interval_ms, per_tick) in table.items():
        assert interval_ms >= MIN_INTERVAL_MS
        assert per_tick * 1000 == speed * interval_ms, speed  # exact: no 50 that plays at 60
    assert speed_tick(7) == (143, 1)  # no whole interval fits: the nearest


def test_play_moves_by_the_tick_and_stops_at_a_breakpoint_and_at_the_end():
    pb = Playback(100, speed=200)  # 4 events per tick
    assert pb.toggle_play()
    breaks = [10, 11]

    def next_break(step):
        return next((b for b in breaks if b > step), None)

    steps, whys = [], []
    while pb.playing:
        whys.append(pb.tick(next_break))
        steps.append(pb.step)
    assert steps == [4, 8, 10] and whys == ["", "", "breakpoint"]
    pb.toggle_play()
    assert pb.tick(next_break) == "breakpoint" and pb.step == 11  # the next breakpoint, one event on
    pb.toggle_play()
    assert pb.tick(next_break, limit=13) == "" and pb.step == 13  # not beyond the browser's window
    pb.seek(97)
    assert pb.tick(next_break) == "end" and pb.step == 99 and not pb.playing
    assert pb.toggle_play() and pb.step == 0  # play at the end starts again from the first event
    pb.move(1)
    assert not pb.playing  # a step by hand stops play


def test_a_lesson_step_pointing_backwards_loads_with_a_problem_and_no_anchor():
    lesson = catalog.get(1)
    replay = Replay(run_lesson(lesson), inputs=lesson.scenario_inputs())
    steps = list(lesson.steps)
    steps[3], steps[4] = steps[4], steps[3]  # malloc's step before set_device's
    swapped = type("Swapped", (), {"steps": steps})()
    stops = lesson_stops(replay, swapped)
    assert stops[3].step is not None and stops[4].step is None
    assert "lesson step 5 points at event 6, before lesson step 4's event 8" in stops[4].problem
