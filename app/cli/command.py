"""The ``ascendsim`` command: run, trace, compare, profiles, bench.

Every command has ``--help``; ``--json`` prints one JSON object on stdout and nothing else.

How errors work (every command module registered here follows it; see :mod:`app.cli.usage`):

* Bad input is refused before any work, in one line on stderr (``error: ...``) with exit code 2,
  never a traceback. The line names the flag as the user typed it (``--streams``, ``profiles show
  NAME``), its limit and the value given.
* Raise :class:`app.cli.usage.UsageFailure` (or call :func:`app.cli.usage.fail`) for a bad input you detect;
  wrap calls that validate in the engine with ``with flag_errors(): ...`` so their ``ValueError``
  becomes a usage failure.
* Declare output files with ``type=OutputFile()`` (checked at parse time: the folder exists and is
  writable, the name is not a directory) and write them with ``write_atomically(path)`` (no
  half-written file on an error or Ctrl-C). ``--profile`` is ``type=ProfileName()``; a fixed set of
  values is ``type=ValueChoice(values)``: both list their choices in ``--help``.
* Before a scenario runs, :func:`app.cli.budget.check_budget` refuses runs that need more memory, trace
  events or time than this machine has; a run that takes longer than two seconds shows progress on
  stderr (:class:`app.cli.budget.Progress`) and Ctrl-C ends it with a one-line partial summary (exit 130).
  Any other long command can use it too: ``with Progress(total, "grading", estimate_s) as p: ... p(done)``.
* Help text is plain text: no reStructuredText markup (a test checks every command's ``--help``).

To add commands from another module, define them with click in ``app/cli/<name>.py`` and register
them in :func:`_register` below. ``tests/test_bad_input.py`` then feeds every option of the new
command bad values by its type (declare ranges with ``click.IntRange`` so it knows what is bad), and
``tests/test_wheel.py`` asks for one line in its ``COMMANDS`` table saying how to run it from the wheel.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import NoReturn

import click

from engine.profiles.profile import DEFAULT_PROFILE, list_profiles, load_profile
from engine.scenarios import Scenario, ScenarioFailed, registry
from engine.scenarios.runner import PROGRAM_ERRORS

from ..collector import for_runs
from .budget import Interrupted, Progress
from .calibrate import calibrate
from .lesson import grade as grade_command
from .lesson import lesson as lesson_group
from .options import Prepared, prepare_run, scenario_command, scenario_options
from .tui import tui
from .usage import (
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    ProcessEnd,
    ProfileName,
    UsageFailure,
    atomic_path,
    fail,
    may_end_quickly,
    param_label,
    write_atomically,
)
from .web import web as web_command

__all__ = ("EXIT_USAGE", "UsageFailure", "cli", "main")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """AscendSim: simulate how a host CPU and an Ascend AI processor cooperate."""


# -- profiles --------------------------------------------------------------------------------------
@cli.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="print JSON")
@click.pass_context
def profiles(ctx: click.Context, as_json: bool) -> None:
    """List the hardware profiles ('profiles show NAME' prints one with the source of every number)."""
    if ctx.invoked_subcommand is not None:
        return
    rows = []
    for name in list_profiles():
        p = load_profile(name)
        rows.append(
            {
                "name": name,
                "title": p.chip.title,
                "cube_cores": p.chip.aic_cores,
                "vector_cores": p.vector_cores,
                "clock_mhz": p.chip.clock_mhz,
                "peak_fp16_tflops": round(p.peak_fp16_flops / 1e12, 1),
                "default": name == DEFAULT_PROFILE,
            }
        )
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for r in rows:
        mark = " (default)" if r["default"] else ""
        click.echo(
            f"{r['name']:<22} {r['peak_fp16_tflops']:>7.1f} TFLOPS fp16  "
            f"{r['cube_cores']:>2} cube / {r['vector_cores']:>2} vector cores  {r['title']}{mark}"
        )


@profiles.command("show")
@click.argument("name", type=ProfileName())
@click.option("--json", "as_json", is_flag=True, help="print JSON: values, sources and the sources' legend")
def profiles_show(name: str, as_json: bool) -> None:
    """Print one profile: every number with its source, or 'assumption' and the reasoning."""
    from .profile_view import profile_document, render_profile

    doc = profile_document(name)
    if as_json:
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
        return
    click.echo(render_profile(doc))


# -- bench -----------------------------------------------------------------------------------------
@cli.command()
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
@click.option("--quick", is_flag=True, help="small sizes: checks that every figure is produced, not the targets")
def bench(as_json: bool, quick: bool) -> None:
    """Measure the simulator's own speed on this machine against its targets, and how it scales (about 2 min;
    --quick: 20 s)."""
    from app.present.bench import replay_figures
    from engine.tools.bench import run_bench

    from .scale import QUICK_SIZES, SIZES, render_rows, scale_rows

    total = 5

    def phase(index: int, _total: int, what: str) -> None:  # the engine's measurements, then the replay's
        click.echo(f"bench [{index}/{total}] {what} ...", err=True)

    click.echo(
        "Measuring how fast the simulator runs on this computer. The figures describe this machine "
        "(its CPU and load), not an Ascend chip, and a target this machine misses is not a fault of the install.",
        err=True,
    )
    doc = run_bench(quick=quick, progress=phase)
    factor = doc["machine"]["factor"]
    click.echo(f"bench [4/{total}] replay: seeking in a huge run, stepping a small one ...", err=True)
    for figure in replay_figures(quick):
        doc["figures"][figure.name] = figure.to_dict()
        if quick:
            doc["figures"][figure.name]["ok"] = None
    sizes = QUICK_SIZES if quick else SIZES
    click.echo(f"bench [5/{total}] scale: timing-only matmuls of {', '.join(f'{n}^3' for n in sizes)} ...", err=True)
    doc["scale"] = scale_rows(sizes)
    if as_json:
        click.echo(json.dumps(doc))
        return
    m = doc["machine"]
    click.echo(
        f"This machine: {m['cores']} cores, Python {m['python']}, numpy {m['numpy']}; it runs the yardstick "
        f"{factor:.2f} x as slowly as the machine issue 23's targets were set on (an estimate; the targets are "
        f"judged as they are){'  (quick: sizes reduced, targets not judged)' if quick else ''}"
    )
    for name, f in doc["figures"].items():
        sign = "<=" if f["better"] == "lower" else ">="
        status = {True: "meets the target", False: "below the target on this machine", None: ""}[f["ok"]]
        click.echo(f"{name:<24} {f['value']:>14,} {f['unit']:<9} target {sign} {f['target']:>12,}  {status}")
        click.echo(f"{'':<24} {f['detail']}")
    click.echo("scale (timing-only matmuls, a fresh process each; B/event: peak memory per event, replay included):")
    for line in render_rows(doc["scale"]):
        click.echo(f"  {line}")


# -- run / trace ---------------------------------------------------------------------------------
def _execute(run: Prepared, progress: Progress):
    from engine.scenarios.runner import run_scenario

    try:
        return run_scenario(run.scenario.name, run.profile, numerics=run.numerics, progress=progress, **run.values)
    except ScenarioFailed as exc:  # the simulated device failed: a run failure, not bad input
        raise click.ClickException(str(exc)) from None


def _run_action(
    scenario: Scenario, profile: str, no_numerics: bool, as_json: bool, report: bool, csv_path: str | None, **values
) -> None:
    from engine.analysis.export import write_pipe_csv
    from engine.analysis.render import render_report
    from engine.scenarios.runner import analyze_run

    run = prepare_run(scenario, profile, no_numerics, values, report=report)
    with Progress(run.events, f"{scenario.name}", run.seconds) as progress:
        done = _execute(run, progress)
        progress.stage = "summarising"
        summary = done.summary()
        analysis = None
        if report or csv_path:
            progress.stage = "analysing" + (" and re-running to measure the recommendations' gains" if report else "")
            analysis = analyze_run(done, measure_gains=report, progress=progress)
        if csv_path:
            progress.stage = f"writing {csv_path}"
            with atomic_path(csv_path) as tmp:
                write_pipe_csv(tmp, analysis.metrics)
    if as_json:
        if report:
            doc = analysis.to_dict()
            summary.update({k: doc[k] for k in ("metrics", "gaps", "roofline", "recommendations")})
            summary["findings"] = doc["findings"]
        click.echo(json.dumps(summary))
    else:
        click.echo(_human(summary, numerics=run.numerics))
        if report:
            click.echo(render_report(analysis))
        if csv_path:
            click.echo(f"wrote per-core pipe ratios to {csv_path}")
    may_end_quickly()


def _trace_action(
    scenario: Scenario, profile: str, no_numerics: bool, out: str, detail_cores: int | None, **values
) -> None:
    from engine.analysis.export import chrome_trace

    run = prepare_run(scenario, profile, no_numerics, values, detail_cores=detail_cores)
    with Progress(run.events, f"{scenario.name}", run.seconds) as progress:
        done = _execute(run, progress)
        progress.stage = f"writing {out}"
        text, count = chrome_trace(done.result, detail_cores, metadata={"scenario": scenario.name, "profile": profile})
        with write_atomically(out) as fh:
            fh.write(text)
    click.echo(f"wrote {count} trace events to {out} (open it in https://ui.perfetto.dev)")
    may_end_quickly()


def _human(s: dict, numerics: bool = True) -> str:
    if s["correct"] is None:
        correct = "not checked" + (" (--no-numerics skips the arithmetic)" if not numerics else "")
    else:
        correct = "True (matches numpy)" if s["correct"] else "False (differs from numpy)"
    if not s["program_ok"]:
        wrong = sum(f["kind"] in PROGRAM_ERRORS for f in s["findings"])
        verdict = {True: "the numbers matched this time, but", False: "and"}.get(s["correct"], "but")
        correct += f"; {verdict} the program is wrong: {wrong} finding(s) below (a race can give other numbers)"
    phases = s["phases"]
    spans = ", ".join(f"{name} {p['us']:.1f} us" for name, p in phases.items())
    lines = [
        f"scenario {s['scenario']} on {s['profile']}  {s['params']}",
        f"simulated time {s['simulated_us']:.3f} us  (host finished at {s['host_us']:.3f} us)",
        f"correct: {correct}" + (f"  max_abs_err {s['max_abs_err']:.4g}" if "max_abs_err" in s else ""),
        f"{s['events']} trace events, {s['device_events']} device events, {s['wall_s']:.3f} s wall",
        f"phases: {spans}"
        + (
            " (set-up is acl.init, set_device, streams and memory: the profile's costs for them are assumptions)"
            if "setup" in phases
            else ""
        ),
        "busy time per lane:",
    ]
    for lane, us in s["lane_busy_us"].items():
        lines.append(f"  {lane:<45} {us:>14.3f} us")
    for note in s.get("notes", []):
        lines.append(f"note: {note}")
    for f in s["findings"]:
        lines.append(f"finding: {f['kind']}: {f['message']}")
    return "\n".join(lines)


# -- compare ---------------------------------------------------------------------------------------
def _compare_side(args: list[str], label: str) -> Prepared:
    name, *options = args or [""]
    scenario = registry().get(name)
    if scenario is None:
        fail(f"compare: run {label} must start with a scenario ({', '.join(registry())}), got {name!r}")
    try:
        profile, no_numerics, values = scenario_options(scenario, options, name)
    except click.UsageError as exc:
        fail(f"compare: run {label}: {_usage_message(exc)}")
    return prepare_run(scenario, profile, no_numerics, values, label=f"compare: run {label}")


@cli.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
@click.argument("runs", nargs=-1, type=click.UNPROCESSED)
def compare(as_json: bool, runs: tuple[str, ...]) -> None:
    """Compare two runs: ascendsim compare [--json] SCENARIO [OPTIONS] -- SCENARIO [OPTIONS]."""
    from engine.analysis.compare import compare as diff_reports
    from engine.analysis.render import render_comparison
    from engine.scenarios.runner import analyze_run

    args = list(runs)
    if args and args[0].startswith("-"):
        fail(
            f"compare: no such option {args[0]}; a run's options follow its scenario name "
            "(compare matmul --m 128 -- matmul)"
        )
    if "vs" not in args:
        fail("compare: give two runs separated by -- (e.g. compare matmul --buffer-num 1 -- matmul)")
    cut = args.index("vs")
    sides = [_compare_side(args[:cut], "A"), _compare_side(args[cut + 1 :], "B")]  # both checked before either runs
    reports, labels = [], []
    total = sum(side.events for side in sides)
    seconds = sum(side.seconds for side in sides)
    with Progress(total, "compare", seconds) as progress:
        for side in sides:
            done = _execute(side, progress)
            reports.append(analyze_run(done, measure_gains=False))
            shown = " ".join(f"{k}={v}" for k, v in side.values.items() if v is not None)
            labels.append(f"{side.scenario.name} {shown} on {side.profile}")
    diff = diff_reports(*reports)
    if as_json:
        click.echo(json.dumps({"a": labels[0], "b": labels[1], **diff.to_dict()}))
    else:
        click.echo(f"A: {labels[0]}\nB: {labels[1]}")
        click.echo(render_comparison(diff))
    may_end_quickly()


# -- registration ----------------------------------------------------------------------------------
def _register() -> None:
    run_group = click.Group("run", help="Run a scenario and print its summary (--json for machines).")
    trace_group = click.Group("trace", help="Run a scenario and write its Chrome trace (--out FILE.json).")
    for scenario in registry().values():
        run_group.add_command(scenario_command(scenario, _run_action, trace_out=False))
        trace_group.add_command(scenario_command(scenario, _trace_action, trace_out=True))
    cli.add_command(run_group)
    cli.add_command(trace_group)


_register()
cli.add_command(lesson_group)
cli.add_command(grade_command)
cli.add_command(calibrate)
cli.add_command(web_command)


# -- errors ----------------------------------------------------------------------------------------
def _usage_message(exc: click.UsageError, args: list[str] | None = None) -> str:
    """One line for a click usage error, naming the flag as the user typed it."""
    ctx = exc.ctx
    if isinstance(exc, click.BadParameter) and exc.param is not None:
        sep = " " if exc.message.startswith("must ") else ": "
        return f"{param_label(exc.param, ctx)}{sep}{' '.join(exc.message.split())}"
    if isinstance(exc, click.NoSuchOption) and ctx is not None and ctx.command.name in ("run", "trace"):
        name = ctx.command_path.split(" ", 1)[-1]
        sub = next((a for a in (args or []) if a in ctx.command.commands), None)
        example = f"ascendsim {name} {sub or 'SCENARIO'} {exc.option_name} ..."
        return f"no such option {exc.option_name} for '{name}': options follow the scenario name ({example})"
    message = exc.format_message()
    return " ".join(message.split())


cli.add_command(tui)


def console() -> NoReturn:
    """The ``ascendsim`` process: :func:`main`, then its exit status. After a command that said it left nothing to
    clean up (:func:`app.cli.usage.may_end_quickly`) the process ends at once, its output flushed: the operating
    system takes its memory back whole, where Python would first free every object of the run (0.2 s of an 8192^3
    ``run``, after its output)."""
    end = ProcessEnd()
    code = main(end=end)
    if end.quick:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):  # a reader that went away, or a stream closed
                stream.flush()
        os._exit(code)
    sys.exit(code)


def main(argv: list[str] | None = None, end: ProcessEnd | None = None) -> int:
    """Entry point: click in non-standalone mode so every usage error is one line and exit code 2. ``end``: how the
    process may end afterwards (:func:`console` passes one; a caller in the same process does not)."""
    args = list(sys.argv[1:] if argv is None else argv)
    for_runs()
    if args[:1] == ["compare"] and "--" in args:  # click would swallow the separator: keep it as a word
        args[args.index("--")] = "vs"
    try:
        rv = cli.main(args=args, prog_name="ascendsim", standalone_mode=False, obj=end)
    except UsageFailure as exc:
        click.echo(f"error: {' '.join(str(exc).split())}", err=True)
        return EXIT_USAGE
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
        return 0
    except click.UsageError as exc:
        click.echo(f"error: {_usage_message(exc, args)}", err=True)
        return EXIT_USAGE
    except click.ClickException as exc:
        click.echo(f"error: {' '.join(exc.format_message().split())}", err=True)
        return exc.exit_code
    except Interrupted as exc:
        click.echo(f"interrupted: {exc}", err=True)
        return EXIT_INTERRUPTED
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("interrupted: stopped before the run started; nothing was written", err=True)
        return EXIT_INTERRUPTED
    return rv if isinstance(rv, int) else 0
