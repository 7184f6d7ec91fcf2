"""A scenario's command-line options, shared by ``run``, ``trace``, ``compare`` and ``tui --scenario``: the
click command each scenario gets, and a run's validation against the profile and this machine before it runs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import click

from engine.analysis.export import CHROME_DETAIL
from engine.profiles.profile import DEFAULT_PROFILE, load_profile
from engine.scenarios import Scenario
from engine.scenarios.cost import Cost

from .budget import check_budget, chrome_events
from .usage import IntAtLeast, OutputFile, ProfileName, ValueChoice, flag_errors, profile_help


# -- run / trace -----------------------------------------------------------------------------------
def _click_type(p) -> click.ParamType:
    if p.choices is not None:
        return ValueChoice(p.choices)
    return {int: click.INT, float: click.FLOAT}.get(p.type, click.STRING)


def _help(p) -> str:
    """The parameter's help with its limits (choices show in the metavar)."""
    if p.minimum is not None and p.maximum is not None:
        return f"{p.help} ({p.minimum}..{p.maximum})"
    if p.minimum is not None:
        return f"{p.help} (>= {p.minimum})"
    return p.help


def scenario_command(scenario: Scenario, action: Callable[..., None], trace_out: bool) -> click.Command:
    def callback(**kwargs):
        action(scenario, **kwargs)

    params: list[click.Parameter] = []
    for p in scenario.params:
        if p.type is bool:
            params.append(click.Option([p.flag, p.name], is_flag=True, default=p.default, help=p.help))
        else:
            params.append(
                click.Option([p.flag, p.name], type=_click_type(p), default=p.default, show_default=True, help=_help(p))
            )
    params.append(
        click.Option(["--profile"], type=ProfileName(), default=DEFAULT_PROFILE, show_default=True, help=profile_help())
    )
    params.append(
        click.Option(["--no-numerics"], is_flag=True, help="skip the numpy arithmetic; keep every event and its timing")
    )
    if trace_out:
        params.append(
            click.Option(
                ["--out", "-o"], type=OutputFile("trace.json"), required=True, help="Chrome trace JSON to write"
            )
        )
        params.append(
            click.Option(
                ["--detail-cores"],
                type=IntAtLeast(0),
                default=None,
                help=f"keep the pipe lanes of only the first N cores (default: all; 2 above {CHROME_DETAIL:,} events)",
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
            click.Option(
                ["--csv", "csv_path"],
                type=OutputFile("pipes.csv"),
                default=None,
                help="write per-core pipe ratios to this CSV",
            )
        )
    return click.Command(scenario.name, callback=callback, params=params, help=scenario.summary)


@dataclass(frozen=True)
class Prepared:
    """A scenario run that passed every check: its validated values, estimated cost, and what the command
    will simulate (``events``, re-runs included) and take (``seconds``) by :func:`app.cli.budget.plan`."""

    scenario: Scenario
    profile: str
    numerics: bool
    values: dict
    cost: Cost
    events: int
    seconds: float


def prepare_run(
    scenario: Scenario,
    profile: str,
    no_numerics: bool,
    values: dict,
    *,
    report: bool = False,
    detail_cores: int | bool | None = False,
    label: str = "",
) -> Prepared:
    """Validate the values and the run's needs against the profile and this machine; nothing runs.

    ``detail_cores`` is the trace command's option (False: no trace file is written)."""
    prefix = f"{label}: " if label else ""
    with flag_errors(prefix):
        prof = load_profile(profile)
        checked = scenario.validate(prof, values)
        cost = scenario.estimate(prof, checked, not no_numerics)
    trace_events = 0 if detail_cores is False else chrome_events(cost.events, detail_cores, CHROME_DETAIL)
    events, seconds = check_budget(cost, checked, report=report, trace_events=trace_events, label=label)
    return Prepared(scenario, profile, not no_numerics, checked, cost, events, seconds)


def scenario_options(scenario: Scenario, options: list[str], name: str) -> tuple[str, bool, dict]:
    """(profile, no_numerics, the scenario's parameters) from a scenario's command-line options, parsed as
    ``run SCENARIO`` parses them (a click.UsageError for a bad one; ``name``: the command shown in it)."""
    ctx = scenario_command(scenario, lambda *_a, **_k: None, trace_out=False).make_context(name, list(options))
    values = dict(ctx.params)
    for key in ("as_json", "report", "csv_path"):
        values.pop(key, None)
    return values.pop("profile"), values.pop("no_numerics"), values


__all__ = ("Prepared", "prepare_run", "scenario_command", "scenario_options")
