"""Lesson 9 drive (runs in the child): the trainee's planner on each sequence of shapes."""

import numpy as np

from engine import Simulation

from .scenario import NUMERICS, SEQUENCES, serve, shapes


def collect(exercise, rec) -> None:
    for name in SEQUENCES:
        sim = Simulation(numerics=name in NUMERICS)
        results, plans = serve(sim, exercise.Planner, shapes(name))
        rec.run(name, sim.finish())
        rec.value(f"plans_{name}", plans)
        if name in NUMERICS:
            rec.value(f"c_{name}", [np.asarray(c, dtype=np.float16) for c in results])
