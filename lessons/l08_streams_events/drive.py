"""Lesson 8 drive (runs in the child): the trainee's pipeline on eight seeded batches, recorded."""

import numpy as np

from .scenario import inputs

RUNS = {"main": {}}  # the simulation's settings (the grader's replay uses these)


def collect(exercise, rec) -> None:
    sim = rec.simulation("main")
    a, b = inputs()
    c = exercise.pipeline(sim.acl, [x.copy() for x in a], [x.copy() for x in b])
    rec.run("main", sim)
    rec.output("c", [np.asarray(x, dtype=np.float16) for x in c] if isinstance(c, list | tuple) else None)
