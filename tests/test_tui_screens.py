"""The terminal UI at 80x24 and at a large size, while resizing, without colour, while its run is
prepared in a worker, and the time one step takes to redraw. Screenshots of the main screens are
saved to tests/artifacts/ for a person to look at."""

import threading
import time

import pytest
from textual.filter import Monochrome

from app.present.walkthrough import PHASES
from app.tui.app import WIDE
from tests.tui_helpers import drive, lesson, make_app, matmul, save, shown, status

PANES = ("narration", "code", "timeline", "cores", "buffers", "metrics")


def _every_pane_drawn(app) -> dict:
    sizes = {}
    for pane in PANES:
        widget = app.query_one(f"#{pane}-pane")
        assert widget.size.width > 0 and widget.size.height > 0, pane
        assert shown(app, pane).strip(), f"{pane} pane is empty"
        sizes[pane] = (widget.outer_size.width, widget.outer_size.height)
    return sizes


def test_80x24_shows_every_pane_the_status_and_the_keys():
    walk = lesson(1)
    app = make_app(walk, steps=40)

    async def script(pilot):
        assert app.size == (80, 24) and not app.screen.has_class("-wide")
        sizes = _every_pane_drawn(app)
        assert sum(h for p, (_w, h) in sizes.items() if p in ("narration", "timeline", "cores")) == 22
        assert f"step 41 / {len(walk.replay)}" in status(app)
        timeline = shown(app, "timeline").split("\n")
        assert all(len(row) <= sizes["timeline"][0] - 2 for row in timeline)
        assert any(row.lstrip("▸ ").startswith(app.core.label) for row in timeline)
        save(app, "lesson1-80x24")

    drive(app, script)


def test_a_large_terminal_gets_the_wide_layout_and_a_finer_timeline():
    walk = lesson(1)
    small, large = {}, {}

    def grab(into, size):
        app = make_app(lesson(1), steps=40)

        async def script(pilot):
            into["wide"] = app.screen.has_class("-wide")
            into["sizes"] = _every_pane_drawn(app)
            into["row"] = max(len(r) for r in shown(app, "timeline").split("\n"))
            save(app, f"lesson1-{size[0]}x{size[1]}")

        drive(app, script, size=size)

    grab(small, (80, 24))
    grab(large, (200, 60))
    assert WIDE <= (200, 60) and large["wide"] and not small["wide"]
    assert large["row"] > 2 * small["row"]  # the timeline draws more columns (more time resolution)
    assert large["sizes"]["code"][1] > 2 * small["sizes"]["code"][1]
    assert walk.replay is not None


def test_resizing_never_crashes_and_redraws_at_the_new_size():
    app = make_app(lesson(1), steps=40)

    async def script(pilot):
        for size in ((80, 24), (40, 12), (20, 6), (1, 1), (200, 60), (81, 25), (80, 24)):
            await pilot.resize_terminal(*size)
            await pilot.pause()
            await pilot.press("right")
            assert app.size == size
        assert app.step == 47
        _every_pane_drawn(app)

    drive(app, script)


def test_no_color_keeps_the_meaning_in_glyphs(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(lesson(1), steps=40)

    async def script(pilot):
        assert app.no_color
        assert any(isinstance(f, Monochrome) for f in app._filters)
        cores = shown(app, "cores")
        assert "B running block" in cores  # activity legend: letters, not colours
        assert any(ch in cores for ch in "CVLSWB")
        assert "▸" in shown(app, "timeline")  # the current lane is marked by a glyph too
        save(app, "lesson1-no-color")

    drive(app, script)


def test_the_run_is_prepared_in_a_worker_with_its_phase_shown():
    walk = lesson(1)
    gate = threading.Event()
    seen = []

    def build(progress):
        for phase in PHASES:
            progress(phase)
            seen.append(phase)
            if phase == "replay":
                gate.wait(10)
        return walk

    app = make_app(walk)
    app.build = build

    async def script(pilot):
        for _ in range(400):
            if "replay" in seen:
                break
            await pilot.pause(0.005)
        await pilot.pause(0.05)
        panel = app.query_one("#preparing")
        assert panel.display and app.walk is None
        label = str(app.query_one("#preparing-label").render())
        assert "Preparing test: indexing the trace..." in label and label.endswith(" s")
        assert app.query_one("#preparing-bar").progress == PHASES.index("replay")
        assert app.check_action("step", (1,)) is None  # nothing to step yet, greyed out
        await pilot.press("right", "l")  # the screen answers while the worker runs
        assert app.lang == "zh" and app.step == 0
        assert "正在准备test：索引轨迹" in str(app.query_one("#preparing-label").render())
        gate.set()
        for _ in range(400):
            if app.walk is not None:
                break
            await pilot.pause(0.005)
        assert app.walk is walk and not panel.display
        assert f"第 1 / {len(walk.replay)} 步" in status(app)

    drive(app, script, wait=False)


def test_a_run_that_fails_to_prepare_is_reported_not_crashed():
    def build(progress):
        progress("run")
        raise ValueError("m must be a multiple of 16, got 17")

    app = make_app(lesson(1))
    app.build = build

    async def script(pilot):
        await pilot.pause(0.1)
        assert app.walk is None
        assert "could not prepare the run: ValueError: m must be a multiple of 16, got 17" in app.failure
        assert "m must be a multiple of 16" in str(app.query_one("#preparing-label").render())
        await pilot.press("right", "space", "n")
        assert app.is_running
        save(app, "prepare-failed")
        await pilot.press("l")
        label = str(app.query_one("#preparing-label").render())
        assert "无法准备本次运行：ValueError: m must be a multiple of 16" in label

    drive(app, script, wait=False)


def test_main_screens_saved_as_artifacts():
    """The help, a scenario with tile values, and the Chinese UI, saved for a person to look at."""
    app = make_app(matmul(), steps=80)

    async def script(pilot):
        await pilot.press("v")
        assert "queue" in shown(app, "buffers")
        save(app, "matmul-values-120x40")
        await pilot.press("l")
        save(app, "matmul-zh-120x40")
        await pilot.press("question_mark")
        save(app, "help-zh-120x40")

    drive(app, script, size=(120, 40))
    for name in ("matmul-values-120x40", "matmul-zh-120x40", "help-zh-120x40"):
        assert (save.__globals__["ARTIFACTS"] / f"{name}.svg").stat().st_size > 1000


@pytest.mark.slow
def test_one_step_redraws_in_well_under_a_tenth_of_a_second():
    """A step's cost measured with the Pilot over 30 steps: CPU time from the key press to the redrawn
    screen (the Pilot's own idle detection adds wall time, measured on a key that changes nothing)."""
    app = make_app(lesson(1), steps=30)
    cost = {}

    async def script(pilot):
        for key in ("x", "right"):  # x is bound to nothing: the Pilot's overhead alone
            wall, cpu = [], []
            for _ in range(30):
                t0, c0 = time.perf_counter(), time.process_time()
                await pilot.press(key)
                await pilot.pause()
                wall.append(time.perf_counter() - t0)
                cpu.append(time.process_time() - c0)
            cost[key] = (sorted(wall)[15], sorted(cpu)[15])

    drive(app, script)
    assert app.step == 60
    (idle_wall, idle_cpu), (wall, cpu) = cost["x"], cost["right"]
    print(
        f"step: cpu {1000 * cpu:.1f} ms, wall {1000 * wall:.1f} ms; no-op key: cpu {1000 * idle_cpu:.1f} ms, "
        f"wall {1000 * idle_wall:.1f} ms (medians of 30)"
    )
    assert cpu - idle_cpu < 0.1
