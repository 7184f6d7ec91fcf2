"""What a UI plays: a lesson (its scenario's run, its steps resolved to replay steps, the narration
of each in English and Chinese) or a built-in scenario, as one :class:`Walkthrough`.

Building one runs the simulation, so a UI does it off its main thread; ``progress(phase)`` is called
before each phase of :data:`PHASES` so the UI can say what it is waiting for. A lesson step whose
selector matches nothing in the run (the engine changed under the lesson), or that points at an event
before an earlier lesson step's (anchors must be in order, see :mod:`app.present.playback`), is kept,
with the reason, and no replay step: the UI shows the text and the problem instead of failing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from app.collector import after_run
from engine.trace import Kind
from engine.trace.locations import CoreRef

from .messages import LANGS, scenario_summary
from .messages import t as msg
from .phases import phase_bounds
from .playback import AnchorOrderError, check_anchors
from .replay import Replay

PHASES = ("run", "replay", "steps", "analysis")


@dataclass(frozen=True)
class Stop:
    """One lesson step: where it points in the replay and what it says."""

    index: int
    step: int | None  # the replay step its selector resolves to (None: it matches nothing in this run)
    text: dict  # lang -> narration
    view: str  # the view the lesson suggests for it (timeline, core, ...)
    problem: str = ""  # why ``step`` is None
    diagnosis: dict | None = None  # lang -> what the step's symptom means, shown once revealed (lessons.progress)


@dataclass
class Walkthrough:
    replay: Replay
    title: dict  # lang -> heading
    summary: dict  # lang -> text
    stops: tuple[Stop, ...] = ()
    lesson: int | None = None
    scenario: str | None = None
    params: dict = field(default_factory=dict)
    _memo: dict = field(default_factory=dict, repr=False)  # answers that scan the whole trace, kept

    @property
    def anchors(self) -> tuple[int | None, ...]:
        """Each lesson step's replay step (None: it has none), in order (see :func:`lesson_stops`)."""
        return tuple(s.step for s in self.stops)

    @property
    def start(self) -> int:
        """The step a UI opens on: the first lesson step that resolved, else the first event."""
        return next((s.step for s in self.stops if s.step is not None), 0)

    def cores(self) -> list[CoreRef]:
        """The cores that ran something, as a viewer lists them (AICs then AIVs, by number)."""
        return [core.ref for core in self.replay.index.cores]

    def core_at(self, step: int) -> CoreRef | None:
        """The core the event at ``step`` ran on (None for host, stream and copy-engine events)."""
        t = self.replay.trace
        return CoreRef.of_lane(t.lanes[int(t.lane[self.replay.row(step)])])

    def kinds(self) -> list[str]:
        """The event kinds that occur among the steps, in :class:`engine.trace.Kind` order."""
        if "kinds" not in self._memo:
            present = np.unique(self.replay.trace.kind[self.replay.steps])
            self._memo["kinds"] = [Kind(int(k)).name for k in present]
        return self._memo["kinds"]

    def phases(self) -> dict[str, tuple[int, int]]:
        """:func:`app.present.phases.phase_bounds` of the run, computed once."""
        if "phases" not in self._memo:
            self._memo["phases"] = phase_bounds(self.replay)
        return self._memo["phases"]

    def next_of_kind(self, step: int, kind: str, forward: bool = True) -> int | None:
        return self.replay.next_of_kind(step, kind, forward)


def _noop(_phase: str) -> None:
    return None


def run_lesson(lesson):
    """The run a lesson plays: its scenario on a fresh simulation (the default profile), finished."""
    from engine import Simulation

    sim = Simulation()
    lesson.module("scenario").scenario(sim)
    return sim.finish()


def lesson_stops(replay: Replay, lesson) -> tuple[Stop, ...]:
    """Each lesson step resolved to its replay step, or kept with the reason it has none: its selector matches
    nothing, or it points at an event before an earlier lesson step's (the narration would run backwards)."""
    from lessons.selectors import SelectorError, resolve

    stops = []
    for i, step in enumerate(lesson.steps):
        try:
            at, problem = replay.step_of_row(resolve(replay.trace, step.selector)), ""
        except SelectorError as exc:
            at, problem = None, str(exc)
        if at is not None:
            try:
                check_anchors([*(s.step for s in stops), at])
            except AnchorOrderError as exc:
                at, problem = None, str(exc)
        diagnosis = dict(step.diagnosis) if step.diagnosis else None
        stops.append(Stop(i, at, dict(step.text), step.view, problem, diagnosis))
    return tuple(stops)


def lesson_walkthrough(number: int, progress: Callable[[str], None] = _noop) -> Walkthrough:
    """Run lesson ``number``'s scenario and resolve its steps."""
    from lessons import catalog
    from lessons.render import lesson_heading, lesson_summary

    lesson = catalog.get(number)
    progress("run")
    result = run_lesson(lesson)
    progress("replay")
    replay = Replay(result, inputs=lesson.scenario_inputs(), context={"quiet_rules": lesson.quiet_rules})
    progress("steps")
    stops = lesson_stops(replay, lesson)
    progress("analysis")
    replay.report()
    title = {lang: lesson_heading(lesson, lang) for lang in LANGS}
    summary = {lang: lesson_summary(lesson, lang) for lang in LANGS}
    return Walkthrough(replay, title, summary, stops, lesson=number)


def scenario_walkthrough(
    name: str, profile: str = "ascend910b1", numerics: bool = True, progress: Callable[[str], None] = _noop, **params
) -> Walkthrough:
    """Run a built-in scenario (parameters validated by the engine: a bad one raises ScenarioArgError)."""
    from engine.scenarios.runner import run_scenario

    progress("run")
    run = run_scenario(name, profile, numerics=numerics, verify=False, **params)  # the walkthrough shows no verdict
    after_run()
    progress("replay")
    # played with the inputs the run drew: every scenario that names its inputs hands them over (with numerics)
    replay = Replay(run.result, inputs=run.outcome.inputs, context={"params": run.params})
    progress("steps")
    progress("analysis")
    replay.report()
    shown = " ".join(f"{k}={v}" for k, v in run.params.items() if v is not None)
    title = {lang: msg("scenario_title", lang, name=name) for lang in LANGS}
    summary = {lang: f"{scenario_summary(run.scenario, lang)}\n{shown}" for lang in LANGS}
    return Walkthrough(replay, title, summary, scenario=name, params=dict(run.params))


__all__ = ("PHASES", "Stop", "Walkthrough", "lesson_walkthrough", "scenario_walkthrough")
