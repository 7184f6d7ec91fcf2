"""The lesson's reference solution run through its drive, in the grader: the figures "yours vs the reference".

The reference is the lesson's own code, so it runs here, in the grader's process, without the sandbox and without
recording: :class:`Plain` is the drive's recorder that only keeps the finished runs. Only the visible cases run
(no hidden case: ``hidden`` is empty), and :func:`reference_figures` reads the lesson's objective figures
(:data:`lessons.costs.FIGURES`) from the check's main run.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator


class Plain:
    """A drive's recorder without recording: real simulations, the runs kept as they finish."""

    def __init__(self, drive, cases=()) -> None:
        from engine import Simulation

        from .hidden import runs

        self._runs = runs(drive, cases)
        self._library = getattr(drive, "LIBRARY", {})
        self._make = Simulation
        self.hidden = tuple(cases)
        self.runs, self.outputs, self.values = {}, {}, {}

    def simulation(self, name: str):
        return self._make(**self._runs[name])

    def run(self, name: str, sim) -> None:
        self.runs[name] = sim.finish()

    def library(self, name: str):
        return self._library[name]

    def value(self, key: str, value) -> None:
        self.values[key] = value

    def output(self, key: str, value) -> None:
        self.outputs[key] = value

    @contextlib.contextmanager
    def hidden_case(self, case) -> Iterator[None]:
        yield


def run_plain(lesson, module, cases=()) -> Plain:
    """``module`` (an exercise: the lesson's solution, say) run by the lesson's drive without recording."""
    rec = Plain(lesson.module("drive"), cases)
    lesson.module("drive").collect(module, rec)
    return rec


def reference_figures(lesson) -> dict:
    """The objective's figures of the reference solution's main run (``{}`` when the objective names none)."""
    from .costs import figures

    main = lesson.module("check").MAIN_RUN
    if not lesson.objective.figures or not main:
        return {}
    solution = importlib.import_module(f"{lesson.package}.solution")
    return figures(run_plain(lesson, solution).runs[main], lesson.objective.figures)


__all__ = ("Plain", "reference_figures", "run_plain")
