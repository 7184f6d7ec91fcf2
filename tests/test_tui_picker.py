"""The lesson picker of the terminal UI (o), pressed through Textual's Pilot: every lesson listed in the UI's
language, the open one highlighted, Enter prepares the chosen one in the worker (its phase shown), Escape
changes nothing, a scenario switches to lesson mode; and what a user checks at 80x24 and 120x40: the current
event on the status line, the scenario's source in the code pane, key words that say what the key does."""

import threading

from textual.widgets import OptionList

from app.present import views as V
from app.present.messages import t as msg
from app.present.text import reflow
from app.present.walkthrough import PHASES
from app.tui.screens import LessonPicker
from lessons import catalog
from lessons.render import lesson_heading
from tests.tui_helpers import (
    ARTIFACTS,
    drive,
    keybar_enabled,
    lesson,
    line,
    make_app,
    matmul,
    ready,
    save,
    shown,
    status,
    status_event,
)

NUMBERS = [spec.number for spec in catalog.lessons()]


def _prompts(app) -> list[str]:
    chooser = app.screen.query_one(OptionList)
    return [str(chooser.get_option_at_index(i).prompt) for i in range(chooser.option_count)]


def _highlighted(app) -> str:
    chooser = app.screen.query_one(OptionList)
    return _prompts(app)[chooser.highlighted]


def test_o_lists_every_lesson_with_the_open_one_highlighted_and_is_saved_at_two_sizes():
    names = []
    for size in ((80, 24), (120, 40)):
        app = make_app(lesson(1))

        async def script(pilot, size=size):
            app = pilot.app
            assert "o lessons" in line(app, "keybar")  # at 80 columns too
            await pilot.press("o")
            assert isinstance(app.screen, LessonPicker)
            prompts = _prompts(app)
            assert len(prompts) == len(NUMBERS) >= 10
            for spec, prompt in zip(catalog.lessons(), prompts, strict=True):
                assert lesson_heading(spec, "en") in prompt
            assert _highlighted(app).startswith("● Lesson 1: ") and msg("tui.picker_current", "en") in prompts[0]
            assert sum("●" in p for p in prompts) == 1
            assert app.screen.query_one("#picker-body").border_title == "Choose a lesson"
            await pilot.press("right")  # the picker is modal: the player does not move under it
            assert app.step == app.walk.start
            names.append(save(app, f"picker-{size[0]}x{size[1]}").name)

        drive(app, script, size=size)
    for name in names:
        assert (ARTIFACTS / name).stat().st_size > 1000
    assert names == ["picker-80x24.svg", "picker-120x40.svg"]


def test_enter_on_lesson_3_prepares_it_in_the_worker_with_its_phase_shown():
    gate = threading.Event()

    def lessons(number):
        def build(progress):
            for phase in PHASES:
                progress(phase)
                if phase == "replay":
                    gate.wait(10)
            return lesson(number)

        return build

    app = make_app(lesson(1), lessons=lessons)

    async def script(pilot):
        await pilot.press("n")
        await pilot.press("o", "down", "down")
        assert _highlighted(app).startswith("  Lesson 3: ")
        await pilot.press("enter")
        for _ in range(400):
            if app._phase == "replay":
                break
            await pilot.pause(0.005)
        await pilot.pause(0.05)
        assert app.walk is None and app.lesson_number == 3
        label = str(app.query_one("#preparing-label").render())
        heading = lesson_heading(catalog.get(3), "en")
        assert f"Preparing {heading}: indexing the trace..." in label
        assert app.query_one("#preparing").display
        assert keybar_enabled(app)["step(1)"] is False  # nothing to step while it is prepared
        await pilot.press("l")  # the screen answers while the worker runs
        assert "索引轨迹" in str(app.query_one("#preparing-label").render())
        assert lesson_heading(catalog.get(3), "zh") in str(app.query_one("#preparing-label").render())
        await pilot.press("l")
        gate.set()
        await ready(pilot)
        walk = app.walk
        assert walk.lesson == 3 and not app.query_one("#preparing").display
        assert app.query_one("#narration-pane").border_title == walk.title["en"]
        assert reflow(walk.stops[0].text["en"])[:40] in shown(app, "narration")
        assert app.query_one("#narration-pane").border_subtitle == f"lesson step 1 / {len(walk.stops)}"
        assert f"step {walk.start + 1} / {len(walk.replay)}" in status(app)
        assert app.exercise.as_posix() == "ascendsim-lesson-03/exercise.py"  # what g now checks
        await pilot.press("n")
        assert app.stop == 1 and app.step == walk.stops[1].step

    drive(app, script)


def test_escape_leaves_the_lesson_and_the_step_unchanged():
    walk = lesson(1)
    app = make_app(walk)

    async def script(pilot):
        await pilot.press("n", "right")
        step, stop = app.step, app.stop
        await pilot.press("o", "down", "down", "down", "escape")
        assert not isinstance(app.screen, LessonPicker)
        assert app.walk is walk and app.lesson_number == 1 and (app.step, app.stop) == (step, stop)
        await pilot.press("o", "enter")  # the open lesson chosen again: nothing is prepared anew
        assert app.walk is walk and (app.step, app.stop) == (step, stop)
        await pilot.press("right")  # the player's keys work again
        assert app.step == step + 1

    drive(app, script)


def test_after_l_the_picker_lists_every_lesson_in_chinese():
    app = make_app(lesson(1))

    async def script(pilot):
        await pilot.press("l")
        assert "o 课程" in line(app, "keybar")
        await pilot.press("o")
        prompts = _prompts(app)
        for spec, prompt in zip(catalog.lessons(), prompts, strict=True):
            assert lesson_heading(spec, "zh") in prompt and spec.title["zh"] in prompt
        assert not any("Lesson" in p for p in prompts)
        assert _highlighted(app).startswith("● 第 1 课：") and "当前课程" in _highlighted(app)
        assert app.screen.query_one("#picker-body").border_title == "选择课程"
        await pilot.press("4", "enter")  # a digit moves to that lesson
        await ready(pilot)
        assert app.walk.lesson == 4 and app.query_one("#narration-pane").border_title.startswith("第 4 课：")

    drive(app, script)


def test_a_lesson_chosen_while_another_run_is_prepared_wins():
    gate = threading.Event()

    def slow(progress):
        progress("run")
        gate.wait(10)
        return lesson(1)

    app = make_app(lesson(1))
    app.build = slow

    async def script(pilot):
        await pilot.pause(0.05)
        assert app.walk is None
        await pilot.press("o", "2", "enter")
        await ready(pilot)
        assert app.walk.lesson == 2
        gate.set()  # the first run finishes late: its result and its phases are dropped
        await pilot.pause(0.1)
        assert app.walk.lesson == 2 and app.lesson_number == 2

    drive(app, script, wait=False)


def test_in_scenario_mode_the_picker_opens_a_lesson_and_lesson_mode_with_it():
    app = make_app(matmul())

    async def script(pilot):
        assert keybar_enabled(app)["lesson(1)"] is False and keybar_enabled(app)["pick_lesson"] is True
        await pilot.press("o")
        prompts = _prompts(app)
        assert len(prompts) == len(NUMBERS) and not any("●" in p for p in prompts)  # no lesson is open
        await pilot.press("2", "enter")
        await ready(pilot)
        assert app.walk.lesson == 2 and app.walk.scenario is None and app.lesson_number == 2
        assert app.query_one("#narration-pane").border_title == lesson(2).title["en"]
        enabled = keybar_enabled(app)
        assert enabled["lesson(1)"] is True and enabled["check"] is True
        await pilot.press("o")
        assert _highlighted(app).startswith("● Lesson 2: ")

    drive(app, script)


def test_the_help_lists_the_picker_key_in_both_languages():
    app = make_app(matmul())

    async def script(pilot):
        for lang in ("en", "zh"):
            await pilot.press("question_mark")
            rows = {keys: text for keys, text, _on in app.screen.rows}
            assert rows["o"] == msg("key.pick_lesson", lang)
            assert rows["l"] == msg("key.switch_language", lang)
            await pilot.press("escape", "l")

    drive(app, script)


def test_scenario_mode_code_pane_shows_the_source_line_of_the_current_event():
    walk = matmul()
    replay = walk.replay
    kernel = next(s for s in range(len(replay)) if (src := replay.source_line(s)) and "kernels/matmul" in src.file)
    for size, steps in (((80, 24), 0), ((120, 40), kernel)):
        app = make_app(matmul(), steps=steps)

        async def script(pilot, steps=steps):
            src = replay.source_line(steps)
            code = shown(pilot.app, "code")
            assert code.startswith(f"{src.file}:{src.line}")
            text = replay.source(src.file).splitlines()[src.line - 1].strip()
            current = next(row for row in code.split("\n")[1:] if row.split()[0] == str(src.line))
            body = current.split(None, 1)[1].rstrip().removesuffix("…")
            assert len(body) >= 10 and text.startswith(body)
            assert msg("source_unavailable", "en") not in code

        drive(app, script, size=size)


def test_at_80x24_the_current_event_stays_on_the_status_line_with_a_message_and_a_breakpoint():
    walk = lesson(1)
    app = make_app(walk, steps=40)

    async def script(pilot):
        event = V.system_view(walk.replay, 40, "en")["event"]
        assert status(app).startswith("step 41 / ") and event.startswith(status_event(app))
        await pilot.press("b")  # a message and a flag want the line too
        assert msg("breakpoint_set", "en", what="")[:15] in status(app)
        assert len(status_event(app)) >= 20 and event.startswith(status_event(app))
        await pilot.press("right")
        event = V.system_view(walk.replay, 41, "en")["event"]
        assert "1 breakpoint(s)" in status(app) and event.startswith(status_event(app))
        assert len(status(app)) <= 80
        await pilot.press("l")
        assert V.system_view(walk.replay, 41, "zh")["event"].startswith(status_event(app))
        assert "▶" in shown(app, "narration")  # what the host does, below the lesson's text

    drive(app, script)
    app = make_app(lesson(1), steps=40)

    async def wide(pilot):
        event = V.system_view(walk.replay, 40, "en")["event"]
        assert status_event(app) == event and "10 events/s" in status(app) and "kind COMPUTE" in status(app)

    drive(app, wide, size=(120, 40))


def test_key_words_say_what_the_key_does_now_in_both_languages():
    app = make_app(lesson(1))

    async def script(pilot):
        bar = line(app, "keybar")
        for entry in ("←→ step", "space play", "n/p lesson step", "o lessons", "g check", "l 中文", "? help"):
            assert entry in bar
        assert bar.rstrip().endswith("q quit")  # all eight main keys at 80 columns
        await pilot.press("minus", "minus", "minus", "space")  # 1 event/s: no tick runs during the test
        assert app.playing and "space stop" in line(app, "keybar") and "space play" not in line(app, "keybar")
        await pilot.press("space", "l")
        bar = line(app, "keybar")
        for entry in ("←→ 单步", "space 播放", "n/p 课程步骤", "o 课程", "g 检查", "l English", "? 帮助", "q 退出"):
            assert entry in bar
        await pilot.press("space")
        assert "space 暂停" in line(app, "keybar")
        await pilot.press("space")

    drive(app, script)
    app = make_app(lesson(1))

    async def wide(pilot):
        assert "⇧←→ COMPUTE events" in line(app, "keybar") and "b breakpoint" in line(app, "keybar")
        await pilot.press("k")
        assert f"⇧←→ {app.kind} events" in line(app, "keybar")

    drive(app, wide, size=(160, 40))
