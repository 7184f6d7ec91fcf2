"""Every key of the terminal UI, pressed through Textual's Pilot: what it changes in the app's state
and what the panes then show (lesson 1 unless a key needs tiles with values: the matmul scenario)."""

from app.present import viewport
from app.present import views as V
from app.present.messages import t as msg
from app.present.phases import phase_bounds
from app.present.text import reflow
from app.tui import navigation as nav
from engine.trace.locations import CoreRef
from tests.replay_helpers import first_mmad
from tests.tui_helpers import drive, keybar_enabled, lesson, line, make_app, matmul, shown, status, status_event


def test_arrows_step_one_event_and_left_is_greyed_out_at_the_start():
    walk = lesson(1)
    app = make_app(walk)

    async def script(pilot):
        assert app.step == walk.start == 0
        assert app.check_action("step", (-1,)) is None  # greyed out, still listed
        assert keybar_enabled(app)["step(-1)"] is False
        await pilot.press("left")
        assert app.step == 0
        await pilot.press("right", "right")
        assert app.step == 2
        assert f"step 3 / {len(walk.replay)}" in status(app)
        event = V.system_view(walk.replay, 2, "en")["event"]  # on the status line, cut to 80 columns
        assert len(status_event(app)) >= 20 and event.startswith(status_event(app))
        await pilot.press("left")
        assert app.step == 1
        assert keybar_enabled(app)["step(-1)"] is True

    drive(app, script)


def test_right_is_greyed_out_at_the_last_event():
    walk = lesson(1)
    last = len(walk.replay) - 1
    app = make_app(walk, steps=last)

    async def script(pilot):
        assert app.step == last
        assert app.check_action("step", (1,)) is None
        await pilot.press("right")
        assert app.step == last
        await pilot.press("space")  # as in the web: play at the last event plays again from the first
        assert app.playing and app.step < last  # (a tick may have moved it on from 0)
        await pilot.press("space")

    drive(app, script)


def test_shift_arrows_jump_between_events_of_the_selected_kind_and_k_picks_the_kind():
    walk = lesson(1)
    app = make_app(walk)

    async def script(pilot):
        assert app.kind == "COMPUTE"
        first = walk.next_of_kind(0, "COMPUTE")
        await pilot.press("shift+right")
        assert app.step == first and walk.replay.event(first).kind == "COMPUTE"
        await pilot.press("shift+right")
        second = app.step
        assert second > first and walk.replay.event(second).kind == "COMPUTE"
        await pilot.press("shift+left")
        assert app.step == first
        assert app.check_action("kind", (-1,)) is None  # no COMPUTE before the first one
        kinds = walk.kinds()
        await pilot.press("k")
        assert app.kind == kinds[(kinds.index("COMPUTE") + 1) % len(kinds)]
        assert f"kind {app.kind}" in status(app)
        target = walk.next_of_kind(app.step, app.kind)
        await pilot.press("shift+right")
        assert app.step == target and walk.replay.event(target).kind == app.kind

    drive(app, script)


def test_b_toggles_a_breakpoint_on_the_line_and_shift_b_on_the_kind():
    walk = lesson(1)
    app = make_app(walk)

    async def script(pilot):
        event = walk.replay.event(0)
        line = event.src.line
        await pilot.press("b")
        assert [bp.src for bp in walk.replay.breakpoints] == [event.src]
        assert f"breakpoint set: solution.py:{line}" in status(app)
        marked = [row for row in shown(app, "code").split("\n") if row.startswith("●")]
        assert len(marked) == 1 and marked[0][1:].split()[0] == str(line)
        await pilot.press("right", "left")
        assert "1 breakpoint(s)" in status(app)
        await pilot.press("b")
        assert walk.replay.breakpoints == []
        assert "breakpoint cleared" in status(app)
        await pilot.press("B")
        assert [(bp.kind, bp.src) for bp in walk.replay.breakpoints] == [(event.kind, None)]

    drive(app, script)


def test_space_plays_and_stops_at_a_breakpoint_without_sleeping():
    walk = lesson(1)
    app = make_app(walk)

    async def script(pilot):
        target = walk.next_of_kind(0, "ERROR")
        assert walk.stops[1].step == target  # lesson 1's second step is the failing set_device
        await pilot.press("n", "B", "p")  # a breakpoint on every ERROR, then back to the start
        assert app.step == 0 and [bp.kind for bp in walk.replay.breakpoints] == ["ERROR"]
        await pilot.press("minus", "minus", "minus")  # 1 event/s: the real timer stays out of the ticks below
        await pilot.press("space")
        assert app.playing and "playing" in status(app)
        for _ in range(1000):  # the timer's ticks, driven by hand
            if not app.playing:
                break
            app.advance()
        assert not app.playing
        assert app.step == target
        assert walk.replay.event(app.step).kind == "ERROR"
        assert msg("stopped_at_breakpoint", "en") in status(app)
        await pilot.press("space")
        assert app.playing
        await pilot.press("space")
        assert not app.playing and "paused" in status(app)

    drive(app, script)


def test_plus_and_minus_change_the_speed_within_its_range():
    app = make_app()

    async def script(pilot):
        assert nav.SPEEDS[app.speed] == 10  # the web's default too
        await pilot.press("plus")
        assert nav.SPEEDS[app.speed] == 20 and "20 events/s" in status(app)
        await pilot.press("minus", "minus", "minus", "minus")
        assert app.speed == 0 and "1 events/s" in status(app)
        assert app.check_action("speed", (-1,)) is None
        await pilot.press("minus")
        assert app.speed == 0

    drive(app, script)


def test_n_and_p_walk_the_lesson_steps_and_show_their_text():
    walk = lesson(1)
    app = make_app(walk)

    async def script(pilot):
        assert app.check_action("lesson", (-1,)) is None
        await pilot.press("n")
        assert app.stop == 1 and app.step == walk.stops[1].step
        assert reflow(walk.stops[1].text["en"])[:60] in shown(app, "narration")
        assert app.query_one("#narration-pane").border_subtitle == f"lesson step 2 / {len(walk.stops)}"
        await pilot.press("n", "n")
        assert app.stop == 3 and app.step == walk.stops[3].step
        await pilot.press("p")
        assert app.stop == 2 and app.step == walk.stops[2].step
        for _ in walk.stops:
            await pilot.press("n")
        assert app.stop == len(walk.stops) - 1
        assert app.check_action("lesson", (1,)) is None

    drive(app, script)


def test_l_switches_the_language_without_losing_the_step():
    walk = lesson(1)
    app = make_app(walk)

    async def script(pilot):
        await pilot.press("n", "right", "right")
        step, stop = app.step, app.stop
        await pilot.press("l")
        assert app.lang == "zh" and (app.step, app.stop) == (step, stop)
        assert reflow(walk.stops[stop].text["zh"])[:30] in shown(app, "narration")
        assert f"第 {step + 1} / {len(walk.replay)} 步" in status(app)
        assert app.query_one("#code-pane").border_title == "代码"
        assert app.query_one("#timeline-pane").border_title.startswith("时间线")
        assert "English" in line(app, "keybar")
        await pilot.press("l")
        assert app.lang == "en" and app.step == step
        assert reflow(walk.stops[stop].text["en"])[:30] in shown(app, "narration")

    drive(app, script)


def test_timeline_opens_on_the_device_work_and_z_shift_z_zoom_comma_full_stop_pan():
    walk = lesson(1)
    app = make_app(walk, steps=40)

    def title():
        return app.query_one("#timeline-pane").border_title

    async def script(pilot):
        end = walk.replay.result.end_ps / 1e6
        a, b = (x / 1e6 for x in phase_bounds(walk.replay)["work"])
        assert abs(app.span_us - 1.25 * (b - a)) < 1e-6  # the device's work, not the 6 ms of host set-up
        t0, t1 = viewport.window(end, app.span_us, app.center_us)
        assert f"{t0:.3f} - {t1:.3f} us" in title()
        cursor = walk.replay.event(app.step).start / 1e6
        assert t0 <= cursor <= t1
        span = app.span_us
        await pilot.press("z")
        assert abs(app.span_us - span / 4) < 1e-9 and app.center_us == cursor
        u0, u1 = viewport.window(end, app.span_us, app.center_us)
        assert f"{u0:.3f} - {u1:.3f} us" in title()
        await pilot.press("comma")
        v0, _v1 = viewport.window(end, app.span_us, app.center_us)
        assert v0 < u0
        await pilot.press("full_stop", "full_stop")
        w0, _w1 = viewport.window(end, app.span_us, app.center_us)
        assert w0 > v0
        for _ in range(12):
            await pilot.press("Z")
        assert app.span_us is None and f"0.000 - {end:.3f} us" in title()
        assert app.check_action("zoom", (-1,)) is None and app.check_action("pan", (1,)) is None
        await pilot.press("comma")
        assert app.span_us is None

    drive(app, script)


def test_e_shows_and_hides_the_selected_cores_pipe_lanes():
    walk = lesson(1)
    app = make_app(walk, steps=40)

    async def script(pilot):
        core = app.core.label
        assert app.core.kind == "AIV"
        assert f" {core} MTE2" in shown(app, "timeline")
        await pilot.press("e")
        assert not app.expanded
        assert f" {core} MTE2" not in shown(app, "timeline")
        assert f"{core}" in shown(app, "timeline")  # its block lane stays
        await pilot.press("e")
        assert f" {core} MTE2" in shown(app, "timeline")

    drive(app, script)


def test_digits_select_a_core_by_number():
    walk = lesson(1)  # eight vector cores
    app = make_app(walk, steps=40)

    async def script(pilot):
        await pilot.press("3")
        assert app.core == CoreRef("AIV", 3)
        assert app.query_one("#buffers-pane").border_title == "Buffers of AIV 3"
        assert "core AIV 3" in status(app)
        await pilot.press("9")  # "39" names no core; "9" neither: said so, selection kept
        assert app.core == CoreRef("AIV", 3) and "no core 9" in status(app)

    drive(app, script)


def test_two_digits_select_a_core_above_nine():
    walk = matmul()
    app = make_app(walk)

    async def script(pilot):
        cores = walk.cores()
        assert cores == [CoreRef("AIC", 0), CoreRef("AIC", 1)]
        await pilot.press("1")
        assert app.core == CoreRef("AIC", 1)
        await pilot.press("0")  # "10" is not in this run: "0" is
        assert app.core == CoreRef("AIC", 0)

    drive(app, script)


def test_v_shows_a_tiles_real_numbers_and_s_moves_to_the_next_slot():
    walk = matmul()
    target = first_mmad(walk.replay)  # tiles in L0A / L0B
    app = make_app(walk, steps=target)

    async def script(pilot):
        assert app.core == walk.core_at(target) and app.slot is not None
        assert app.query_one("#buffers-pane").border_subtitle == "v: tile values  s: next slot"
        await pilot.press("v")
        assert app.show_values
        buffer, queue, slot = app.slot
        tile = V.tile_view(walk.replay, app.step, app.core, buffer, queue, slot, max_cells=4)
        text = shown(app, "buffers")
        assert f"{buffer} queue {queue} slot {slot}: {tile['tile']['label']}" in text
        assert f"{tile['shape'][0]} x {tile['shape'][1]} {tile['dtype']}" in text
        first = f"{tile['values'][0][0]:.4g}"
        assert first in text
        before = app.slot
        await pilot.press("s")
        assert app.slot != before and app.slot in app._tile_slots
        await pilot.press("v")
        assert not app.show_values and "queue" not in shown(app, "buffers").split("\n")[-1]

    drive(app, script, size=(120, 40))


def test_a_core_whose_block_has_no_buffer_yet_says_so():
    walk = lesson(1)
    start = walk.next_of_kind(0, "BLOCK")
    app = make_app(walk, steps=start)

    async def script(pilot):
        view = V.core_view(walk.replay, app.step, app.core)
        assert view["block"] is not None and view["buffers"] == []
        assert f"block {view['block']} has set up no buffer yet" in shown(app, "buffers")
        await pilot.press("7")  # its block starts later
        assert app.core == CoreRef("AIV", 7) and "no block has run on AIV 7 yet" in shown(app, "buffers")

    drive(app, script, size=(120, 40))


def test_question_mark_opens_the_help_with_every_key_and_escape_closes_it():
    app = make_app()

    async def script(pilot):
        await pilot.press("question_mark")
        screen = app.screen
        assert type(screen).__name__ == "HelpScreen"
        text = str(screen.query_one("#help-text").render())
        for key in ("key.step_forward", "key.breakpoint", "key.check", "key.digit", "key.focus", "key.zoom_in"):
            assert msg(key, "en") in text
        assert ("←", "previous event", False) in screen.rows  # greyed out at the first event
        await pilot.press("right")  # the help is modal: the player does not move under it
        assert app.step == 0
        await pilot.press("escape")
        assert type(app.screen).__name__ != "HelpScreen"

    drive(app, script)


def test_tab_moves_the_focus_between_panes():
    app = make_app()

    async def script(pilot):
        order = [app.focused.id]  # the narration has the focus at the start
        for _ in range(6):
            await pilot.press("tab")
            order.append(app.focused.id)
        panes = ["narration-pane", "code-pane", "timeline-pane", "cores-pane", "buffers-pane", "metrics-pane"]
        assert order == [*panes, panes[0]]
        assert app.query_one("#narration-pane").has_focus
        await pilot.press("right")  # a focused pane scrolls with arrows, but stepping keeps priority
        assert app.step == 1

    drive(app, script)


def test_q_quits():
    app = make_app()

    async def script(pilot):
        await pilot.press("q")
        await pilot.pause()
        return app.is_running

    assert drive(app, script) is False


def test_scenario_mode_greys_out_the_lesson_keys():
    app = make_app(matmul())

    async def script(pilot):
        enabled = keybar_enabled(app)
        assert enabled["lesson(1)"] is False and enabled["check"] is False
        assert enabled["step(1)"] is True
        assert "Scenario matmul" in app.query_one("#narration-pane").border_title
        await pilot.press("n", "g")
        assert app.stop == -1 and not app.checking  # no lesson: no lesson step

    drive(app, script)
