"""``ascendsim tui``: the terminal UI on a lesson (default: lesson 1) or on a built-in scenario.

``ascendsim tui [--lesson N] [--lang en|zh] [--file EXERCISE] [--scenario NAME [its options]]
[--steps K] [--screenshot FILE.svg [--size WxH] [--press KEYS]] [--cpp]``. With ``--screenshot`` the app runs
without a terminal, takes K steps, presses KEYS and writes the screen as SVG (for docs, bug reports and CI). Textual is
imported only when the command runs.
"""

from __future__ import annotations

import re
from pathlib import Path

import click

from .usage import ValueChoice

LANG = ValueChoice(("en", "zh"))
SIZE = re.compile(r"^(\d{2,4})x(\d{1,4})$")
MIN_SIZE = (40, 12)


def _scenario_values(name: str, args: list[str]) -> tuple[str, bool, dict]:
    """(profile, numerics, validated parameters) of ``--scenario NAME`` and its options; a run this machine
    cannot finish (memory, events, time) is refused before the app starts, as ``ascendsim run`` refuses it."""
    from engine.scenarios import registry

    from .options import prepare_run, scenario_options

    scenario = registry().get(name)
    if scenario is None:
        _fail(f"--scenario must be one of {', '.join(registry())}, got {name!r}")
    try:
        profile, no_numerics, values = scenario_options(scenario, args, f"tui --scenario {name}")
    except click.UsageError as exc:
        _fail(f"--scenario {name}: {exc.format_message()}")
    prepared = prepare_run(scenario, profile, no_numerics, values)
    return profile, prepared.numerics, prepared.values


def _fail(message: str) -> None:
    """A usage error: ``app.cli.main`` prints it as one line and exits with 2 (a click error, so it is
    caught however this module was imported, also under ``python -m app.cli``)."""
    raise click.UsageError(message)


def _size(text: str) -> tuple[int, int]:
    m = SIZE.match(text)
    if not m or int(m.group(1)) < MIN_SIZE[0] or int(m.group(2)) < MIN_SIZE[1]:
        _fail(f"--size must be WIDTHxHEIGHT of at least {MIN_SIZE[0]}x{MIN_SIZE[1]}, got {text!r}")
    return int(m.group(1)), int(m.group(2))


@click.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.option("--lesson", type=int, default=None, help="the lesson to play (default: 1)")
@click.option("--lang", type=LANG, default="en", show_default=True, help="language (l switches it in the app)")
@click.option(
    "--file", "exercise", default=None, help="the exercise g checks (default: ./ascendsim-lesson-NN/exercise.py)"
)
@click.option("--scenario", default=None, help="play a built-in scenario instead; its options follow it")
@click.option("--steps", type=click.IntRange(0), default=0, show_default=True, help="events to step forward first")
@click.option("--screenshot", default=None, help="write the screen after --steps to this SVG file and exit")
@click.option("--size", default="120x40", show_default=True, help="terminal size of --screenshot (WIDTHxHEIGHT)")
@click.option(
    "--press", default="", help="keys to press before --screenshot, space-separated (e.g. 'v s': a slot's tile)"
)
@click.option("--cpp", is_flag=True, help="open with the code pane on the C++ (Ascend C) view (c toggles it)")
@click.pass_context
def tui(ctx, lesson, lang, exercise, scenario, steps, screenshot, size, press, cpp) -> None:
    """Play a lesson (or a scenario) step by step in the terminal."""
    from app.present.messages import LANGS
    from app.present.messages import t as msg
    from app.present.walkthrough import scenario_walkthrough

    if ctx.args and scenario is None:
        _fail(f"unexpected argument {ctx.args[0]!r} (scenario options follow --scenario NAME)")
    if scenario is not None and lesson is not None:
        _fail("--lesson and --scenario exclude each other: play one lesson or one scenario")
    shot_size = _size(size) if screenshot else None
    if scenario is not None:
        profile, numerics, values = _scenario_values(scenario, ctx.args)

        def build(progress):
            return scenario_walkthrough(scenario, profile, numerics, progress, **values)

        what, file, number = {lg: msg("scenario_title", lg, name=scenario) for lg in LANGS}, None, None
    else:
        from app.tui.switching import exercise_path, lesson_builder
        from lessons.catalog import LessonError, get
        from lessons.render import lesson_heading

        number = 1 if lesson is None else lesson
        try:
            spec = get(number)
        except LessonError as exc:
            _fail(f"--lesson: {exc}")

        build = lesson_builder(number)
        what = {lg: lesson_heading(spec, lg) for lg in LANGS}
        file = Path(exercise) if exercise else exercise_path(number)
    from app.tui import AscendApp

    app = AscendApp(build, lang=lang, exercise=file, what=what, lesson=number, steps=steps)
    app.show_cpp = cpp
    if screenshot is None:
        app.run()
        return
    written = shoot(app, Path(screenshot), shot_size, tuple(press.split()))
    if app.failure:
        raise click.ClickException(app.failure)
    click.echo(f"wrote {written}")


def shoot(app, path: Path, size: tuple[int, int], keys: tuple[str, ...] = ()) -> Path:
    """Run ``app`` without a terminal until its run is prepared, press ``keys``, save the screen to ``path`` as SVG."""

    async def auto(pilot) -> None:
        while app.walk is None and not app.failure:
            await pilot.pause(0.05)
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        path.parent.mkdir(parents=True, exist_ok=True)
        app.save_screenshot(path.name, str(path.parent))
        app.exit()

    app.run(headless=True, size=size, auto_pilot=auto)
    return path
