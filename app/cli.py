"""The ``ascendsim`` command.

Every command has ``--help``; machine-readable output with ``--json`` (one JSON object on stdout and
nothing else). Bad arguments exit with code 2 and one line on stderr naming the argument, its limit
and the value, never a traceback.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

import click

from app.cli_web import web as web_command
from engine.profile import DEFAULT_PROFILE, ProfileError, list_profiles, load_profile
from engine.scenarios import Scenario, ScenarioArgError, ScenarioFailed, registry

EXIT_USAGE = 2


class UsageFailure(Exception):
    """A one-line usage error (exit code 2)."""


def _fail(message: str) -> None:
    raise UsageFailure(message)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """AscendSim: simulate how a host CPU and an Ascend AI processor cooperate."""


# -- profiles --------------------------------------------------------------------------------------
@cli.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="print JSON")
@click.pass_context
def profiles(ctx: click.Context, as_json: bool) -> None:
    """List the hardware profiles (``profiles show NAME`` prints one)."""
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
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="print JSON")
def profiles_show(name: str, as_json: bool) -> None:
    """Print one profile with every number."""
    p = _profile(name)
    doc = p.describe()
    if as_json:
        click.echo(json.dumps(doc, indent=2))
        return
    click.echo(f"{p.name}: {p.chip.title}   (source: {p.source_file})")
    for section, values in doc.items():
        if not isinstance(values, dict):
            continue
        click.echo(f"[{section}]")
        for key, value in values.items():
            click.echo(f"  {key} = {value}")


def _profile(name: str):
    try:
        return load_profile(name)
    except ProfileError as exc:
        _fail(f"--profile: {exc}")


# -- bench -----------------------------------------------------------------------------------------
@cli.command()
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
@click.option("--quick", is_flag=True, help="small sizes: checks that every figure is produced, not the targets")
def bench(as_json: bool, quick: bool) -> None:
    """Measure the simulator's speed on this machine against its targets."""
    from engine.bench import run_bench

    doc = run_bench(quick=quick)
    if as_json:
        click.echo(json.dumps(doc))
        return
    m = doc["machine"]
    click.echo(
        f"{m['cores']} cores, Python {m['python']}, numpy {m['numpy']}{'  (quick: sizes reduced)' if quick else ''}"
    )
    for name, f in doc["figures"].items():
        sign = "<=" if f["better"] == "lower" else ">="
        status = {True: "ok", False: "MISSED", None: "(quick: not judged)"}[f["ok"]]
        click.echo(f"{name:<24} {f['value']:>14,} {f['unit']:<9} target {sign} {f['target']:>12,}  {status}")
        click.echo(f"{'':<24} {f['detail']}")


# -- run / trace -----------------------------------------------------------------------------------
def _scenario_command(scenario: Scenario, action: Callable[..., None], trace_out: bool) -> click.Command:
    def callback(**kwargs):
        action(scenario, **kwargs)

    params: list[click.Parameter] = []
    for p in scenario.params:
        flag = "--" + p.name.replace("_", "-")
        if p.type is bool:
            params.append(click.Option([flag, p.name], is_flag=True, default=p.default, help=p.help))
        else:
            params.append(click.Option([flag, p.name], type=p.type, default=p.default, show_default=True, help=p.help))
    params.append(click.Option(["--profile"], default=DEFAULT_PROFILE, show_default=True, help="hardware profile"))
    params.append(
        click.Option(["--no-numerics"], is_flag=True, help="skip the numpy arithmetic; keep every event and its timing")
    )
    if trace_out:
        params.append(click.Option(["--out", "-o"], required=True, help="Chrome trace JSON file to write"))
        params.append(
            click.Option(
                ["--detail-cores"],
                type=int,
                default=None,
                help="keep the pipe lanes of only the first N cores (default: all; 2 above 300,000 events)",
            )
        )
    else:
        params.append(click.Option(["--json", "as_json"], is_flag=True, help="print one JSON object"))
        params.append(
            click.Option(
                ["--report"],
                is_flag=True,
                help="add the profiler/debugger report: metrics, labelled idle time, roofline, findings and "
                "recommendations (gains measured by re-running with each change)",
            )
        )
        params.append(
            click.Option(["--csv", "csv_path"], default=None, help="write per-core pipe ratios to this CSV file")
        )
    return click.Command(scenario.name, callback=callback, params=params, help=scenario.summary)


def _execute(scenario: Scenario, profile: str, no_numerics: bool, **values):
    from engine.runner import run_scenario

    prof = _profile(profile)
    try:
        return run_scenario(scenario.name, prof, numerics=not no_numerics, **values)
    except ScenarioArgError as exc:
        _fail(str(exc))
    except ScenarioFailed as exc:  # the simulated device failed: a run failure, not bad input
        raise click.ClickException(str(exc)) from None


def _run_action(
    scenario: Scenario, profile: str, no_numerics: bool, as_json: bool, report: bool, csv_path: str | None, **values
) -> None:
    from engine.analysis.export import write_pipe_csv
    from engine.analysis.render import render_report
    from engine.runner import analyze_run

    run = _execute(scenario, profile, no_numerics, **values)
    summary = run.summary()
    analysis = analyze_run(run, measure_gains=report) if (report or csv_path) else None
    if csv_path:
        write_pipe_csv(csv_path, analysis.metrics)
    if as_json:
        if report:
            doc = analysis.to_dict()
            summary.update({k: doc[k] for k in ("metrics", "gaps", "roofline", "recommendations")})
            summary["findings"] = doc["findings"]
        click.echo(json.dumps(summary))
        return
    click.echo(_human(summary))
    if report:
        click.echo(render_report(analysis))


def _trace_action(
    scenario: Scenario, profile: str, no_numerics: bool, out: str, detail_cores: int | None, **values
) -> None:
    from engine.analysis.export import chrome_document

    run = _execute(scenario, profile, no_numerics, **values)
    doc = chrome_document(run.result, detail_cores, metadata={"scenario": scenario.name, "profile": profile})
    with open(out, "w") as fh:
        json.dump(doc, fh)
    click.echo(f"wrote {len(doc['traceEvents'])} trace events to {out} (open it in https://ui.perfetto.dev)")


def _human(s: dict) -> str:
    lines = [
        f"scenario {s['scenario']} on {s['profile']}  {s['params']}",
        f"simulated time {s['simulated_us']:.3f} us  (host finished at {s['host_us']:.3f} us)",
        f"correct: {s['correct']}" + (f"  max_abs_err {s['max_abs_err']:.4g}" if "max_abs_err" in s else ""),
        f"{s['events']} trace events, {s['device_events']} device events, {s['wall_s']:.3f} s wall",
        "busy time per lane:",
    ]
    for lane, us in s["lane_busy_us"].items():
        lines.append(f"  {lane:<45} {us:>14.3f} us")
    for f in s["findings"]:
        lines.append(f"finding: {f['kind']}: {f['message']}")
    return "\n".join(lines)


def _compare_side(args: list[str], label: str):
    name, *options = args or [""]
    scenario = registry().get(name)
    if scenario is None:
        _fail(f"compare: run {label} must start with a scenario ({', '.join(registry())}), got {name!r}")
    command = _scenario_command(scenario, _run_action, trace_out=False)
    try:
        ctx = command.make_context(name, list(options))
    except click.UsageError as exc:
        _fail(f"compare: run {label}: {exc.format_message()}")
    values = dict(ctx.params)
    for key in ("as_json", "report", "csv_path"):
        values.pop(key, None)
    return scenario, values


@cli.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
@click.argument("runs", nargs=-1, type=click.UNPROCESSED)
def compare(as_json: bool, runs: tuple[str, ...]) -> None:
    """Compare two runs: ascendsim compare [--json] SCENARIO [OPTIONS] -- SCENARIO [OPTIONS]."""
    from engine.analysis.compare import compare as diff_reports
    from engine.analysis.render import render_comparison
    from engine.runner import analyze_run

    args = list(runs)
    if "vs" not in args:
        _fail("compare: give two runs separated by -- (e.g. compare matmul --buffer-num 1 -- matmul)")
    cut = args.index("vs")
    sides = [_compare_side(args[:cut], "A"), _compare_side(args[cut + 1 :], "B")]
    reports, labels = [], []
    for scenario, values in sides:
        profile, no_numerics = values.pop("profile"), values.pop("no_numerics")
        run = _execute(scenario, profile, no_numerics, **values)
        reports.append(analyze_run(run, measure_gains=False))
        labels.append(" ".join([scenario.name] + [f"{k}={v}" for k, v in values.items() if v is not None]))
    diff = diff_reports(*reports)
    if as_json:
        click.echo(json.dumps({"a": labels[0], "b": labels[1], **diff}, default=list))
        return
    click.echo(f"A: {labels[0]}\nB: {labels[1]}")
    click.echo(render_comparison(diff, labels[0], labels[1]))


def _build_groups() -> None:
    run_group = click.Group("run", help="Run a scenario and print its summary (--json for machines).")
    trace_group = click.Group("trace", help="Run a scenario and write its Chrome trace (--out FILE.json).")
    for scenario in registry().values():
        run_group.add_command(_scenario_command(scenario, _run_action, trace_out=False))
        trace_group.add_command(_scenario_command(scenario, _trace_action, trace_out=True))
    cli.add_command(run_group)
    cli.add_command(trace_group)


_build_groups()
cli.add_command(web_command)


def main(argv: list[str] | None = None) -> int:
    """Entry point: click in non-standalone mode so every usage error is one line and exit code 2."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["compare"] and "--" in args:  # click would swallow the separator: keep it as a word
        args[args.index("--")] = "vs"
    try:
        rv = cli.main(args=args, prog_name="ascendsim", standalone_mode=False)
    except UsageFailure as exc:
        click.echo(f"error: {exc}", err=True)
        return EXIT_USAGE
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
        return 0
    except click.UsageError as exc:
        message = exc.format_message().replace("\n", " ")
        click.echo(f"error: {message}", err=True)
        return EXIT_USAGE
    except click.ClickException as exc:
        click.echo(f"error: {exc.format_message()}", err=True)
        return exc.exit_code
    except click.exceptions.Abort:
        return 1
    return rv if isinstance(rv, int) else 0


if __name__ == "__main__":
    sys.exit(main())
