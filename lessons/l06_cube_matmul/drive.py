"""Lesson 6 drive (runs in the child): the trainee's Cube kernel on three shapes."""

from engine import Simulation

from .scenario import CASES, run


def collect(exercise, rec) -> None:
    for name, m, n, k in CASES:
        sim = Simulation()
        c = run(sim, exercise.matmul_cube, name, m, n, k)
        rec.run(name, sim.finish())
        rec.value(f"c_{name}", c)
