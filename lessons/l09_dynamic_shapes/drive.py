"""Lesson 9 drive: the trainee's planner on each sequence of shapes.

``collect`` runs in the child and records; the host tiler is the lesson's own service (``LIBRARY``), so
in the grader's replay it is the grader's tiler that searches, costs the host time and logs each launch's
plan, which ``observer`` reads there.
"""

import numpy as np

from .scenario import NUMERICS, SEQUENCES, HostTiler, serve, shapes

RUNS = {name: {"numerics": name in NUMERICS} for name in SEQUENCES}  # the replay's settings
LIBRARY = {"HostTiler": HostTiler}


def collect(exercise, rec) -> None:
    for name in SEQUENCES:
        sim = rec.simulation(name)
        results, _ = serve(sim, exercise.Planner, shapes(name), rec.library("HostTiler"))
        rec.run(name, sim)
        if name in NUMERICS:
            rec.output(f"c_{name}", [np.asarray(c, dtype=np.float16) for c in results])
    for case in rec.hidden:
        with rec.hidden_case(case):
            sim = rec.simulation(case.run)
            serve(sim, exercise.Planner, [tuple(s) for s in case.params["shapes"]], rec.library("HostTiler"))
            rec.run(case.run, sim)


def hidden_run(case) -> dict:
    """A hidden case's simulation: timed only (its plans are judged, not its numbers)."""
    return {"numerics": False}


def observer(name: str, sim):
    """(In the grader) the plans the grader's tiler logged, one per launch asked for."""
    return lambda: {f"plans_{name}": list(sim.extra.get("tiling_plans", []))}
