"""Helpers for the terminal UI tests: walkthroughs built once per process (a fresh Replay per test, so
breakpoints never leak), an app driven by Textual's Pilot without sleeping, what a pane shows."""

from __future__ import annotations

import asyncio
import dataclasses
from functools import cache
from pathlib import Path

from app.present import Replay
from app.present.walkthrough import PHASES, Walkthrough, lesson_walkthrough, scenario_walkthrough
from app.tui import AscendApp

ARTIFACTS = Path(__file__).parent / "artifacts"  # SVG screenshots of the main screens (git-ignored)
MATMUL = {"m": 128, "n": 96, "k": 64, "cores": 2}  # small, with inputs: tile values can be shown


@cache
def _lesson(number: int) -> Walkthrough:
    return lesson_walkthrough(number)


def lesson(number: int = 1) -> Walkthrough:
    walk = _lesson(number)
    return dataclasses.replace(walk, replay=Replay(walk.replay.result), _memo={})


def matmul() -> Walkthrough:
    return scenario_walkthrough("matmul", **MATMUL)


def lesson_builder(number: int):
    """The builder the lesson picker (o) uses: the walkthrough built once per process, its phases reported."""

    def build(progress) -> Walkthrough:
        for phase in PHASES:
            progress(phase)
        return lesson(number)

    return build


def make_app(walk: Walkthrough | None = None, **options) -> AscendApp:
    walk = walk or lesson(1)
    options.setdefault("what", "test")
    options.setdefault("lesson", walk.lesson)
    options.setdefault("lessons", lesson_builder)
    return AscendApp(lambda progress: walk, **options)


async def ready(pilot) -> None:
    app = pilot.app
    for _ in range(2000):
        if app.walk is not None or app.failure:
            break
        await pilot.pause(0.005)
    await pilot.pause()


def drive(app: AscendApp, script, size=(80, 24), wait: bool = True):
    """Run ``app`` headless at ``size`` until its run is ready (``wait``), then ``await script(pilot)``."""

    async def main():
        async with app.run_test(size=size) as pilot:
            if wait:
                await ready(pilot)
            return await script(pilot)

    return asyncio.run(main())


def shown(app: AscendApp, pane: str) -> str:
    """The text a pane draws now (all of it, also what is scrolled out of sight)."""
    view = app.query_one(f"#{pane}-pane").view
    return view.text(view.content_size.width).plain


def status(app: AscendApp) -> str:
    return line(app, "status")


def line(app: AscendApp, ident: str) -> str:
    """The text of the status line ("status") or the key bar ("keybar")."""
    bar = app.query_one(f"#{ident}")
    return bar.text(bar.content_size.width).plain


def status_event(app: AscendApp) -> str:
    """The current event as the status line shows it (after the step and the play state; cut at the line's
    end without its ellipsis)."""
    return status(app).split(" │ ")[2].rstrip().removesuffix("…")


def keybar_enabled(app: AscendApp) -> dict[str, bool]:
    """Action -> enabled, as the key bar and the help screen see them."""
    return {a.binding.action: a.enabled for a in app.screen.active_bindings.values()}


def save(app: AscendApp, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return Path(app.save_screenshot(f"{name}.svg", str(ARTIFACTS)))
