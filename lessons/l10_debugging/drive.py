"""Lesson 10 drive (runs in the child): the trainee's (fixed) program on the seeded input, recorded."""

import numpy as np

from .scenario import inputs

RUNS = {"main": {}}  # the simulation's settings (the grader's replay uses these)


def collect(exercise, rec) -> None:
    _one(exercise, rec, "main", "y", inputs())
    for case in rec.hidden:
        with rec.hidden_case(case):
            _one(exercise, rec, case.run, f"y_{case.run}", inputs(case.params["total"], case.params["seed"]))


def _one(exercise, rec, name: str, output: str, x) -> None:
    sim = rec.simulation(name)
    y = exercise.run(sim.acl, x)
    rec.run(name, sim)
    rec.output(output, None if y is None else np.asarray(y, dtype=np.float16).reshape(-1))


def hidden_run(case) -> dict:
    """A hidden case's simulation: another chip for ``other_chip``."""
    return {"profile": case.params["profile"]} if "profile" in case.params else {}
