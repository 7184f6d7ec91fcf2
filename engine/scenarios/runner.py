"""Run a named scenario and summarise it: what the CLI, the benchmarks and the UIs call."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from ..analysis.phases import phases
from ..profiles.profile import Profile, load_profile
from ..simulation import RunResult, Simulation
from ..trace import Kind, LaneKind
from . import Outcome, Scenario, ScenarioArgError, ScenarioFailed, registry


@dataclass
class ScenarioRun:
    scenario: Scenario
    params: dict
    result: RunResult
    outcome: Outcome
    wall_s: float

    def summary(self) -> dict:
        return summarize(self)


def get_scenario(name: str) -> Scenario:
    scenarios = registry()
    if name not in scenarios:
        raise ScenarioArgError(
            f"SCENARIO must be one of {', '.join(scenarios)}, got {name!r}",
            zh=f"SCENARIO 必须是 {', '.join(scenarios)} 之一，收到 {name!r}",
        )
    return scenarios[name]


def run_scenario(
    name: str,
    profile: str | Profile = "ascend910b1",
    *,
    numerics: bool = True,
    verify: bool = True,
    progress: Callable[[int], None] | None = None,
    **params,
) -> ScenarioRun:
    """Validate the parameters, run the scenario on a fresh simulation, finish it.

    ``verify``: with numerics, compare the results with numpy (``outcome.correct``, its error and tolerance in
    ``outcome.details``); a caller that shows no verdict skips it (a 2048^3 matmul's reference product: 0.1 s).

    ``progress`` is called now and then with the trace events recorded so far (see :mod:`.scenarios.cost`
    for the estimate of the total)."""
    scenario = get_scenario(name)
    prof = load_profile(profile) if isinstance(profile, str) else profile
    values = scenario.validate(prof, params)
    t0 = time.perf_counter()
    sim = Simulation(prof, numerics=numerics, verify=verify, progress=progress)
    try:
        outcome = scenario.run(sim, **values)
    except ScenarioFailed as exc:  # say what the device reported, in one line
        causes = [f for f in sim.findings if f.code and f.kind != "acl-error"][:1]
        raise ScenarioFailed(
            f"{name}: {exc}" + "".join(f"; {f.message.splitlines()[0]}" for f in causes),
            exc.code,
            zh=f"{name}：{exc.zh}" + "".join(f"；{f.message_zh.splitlines()[0]}" for f in causes),
        ) from None
    result = sim.finish()
    wall = time.perf_counter() - t0
    return ScenarioRun(scenario, values, result, outcome, wall)


def analyze_run(run: ScenarioRun, measure_gains: bool = True, progress: Callable[[int], None] | None = None):
    """The profiler/debugger report of a run; recommendations re-run the scenario (timing only) to
    measure their gain when ``measure_gains`` (``progress`` counts the re-runs' events)."""
    from ..analysis import analyze

    def rerun(changes: dict):
        try:
            again = run_scenario(
                run.scenario.name, run.result.profile, numerics=False, progress=progress, **{**run.params, **changes}
            )
        except ScenarioArgError:
            return None
        from ..analysis.metrics import run_metrics

        return run_metrics(again.result)

    context = {"params": run.params, "details": run.outcome.details}
    return analyze(run.result, context, rerun if measure_gains else None)


# findings that make a program wrong even when its numbers matched this time
PROGRAM_ERRORS = frozenset(("race", "deadlock", "kernel-error", "acl-error"))


def summarize(run: ScenarioRun) -> dict:
    """The ``--json`` document: identity, timing, correctness and per-lane busy time."""
    r = run.result
    trace = r.trace
    busy = trace.busy_by_lane(
        kinds=(Kind.CALL, Kind.WAIT, Kind.COPY, Kind.KERNEL, Kind.HOST_WORK),
        lane_kinds=(LaneKind.HOST, LaneKind.STREAM, LaneKind.COPY_ENGINE, LaneKind.KERNELS),
    )
    out = {
        "scenario": run.scenario.name,
        "profile": r.profile.name,
        "params": run.params,
        "simulated_us": round(r.end_ps / 1e6, 6),
        "host_us": round(r.host_end_ps / 1e6, 6),
        "correct": run.outcome.correct,
        "events": len(trace),
        "device_events": r.device_events,
        "wall_s": round(run.wall_s, 4),
        "lane_busy_us": {lane: round(ps / 1e6, 6) for lane, ps in busy.items()},
        "findings": [f.to_dict() for f in r.findings],
        "program_ok": not any(f.kind in PROGRAM_ERRORS for f in r.findings),
        "phases": phases(r),
    }
    out.update(run.outcome.details)
    out.update(r.extra)
    if run.scenario.report is not None:
        out.update(run.scenario.report(r))
    return out
