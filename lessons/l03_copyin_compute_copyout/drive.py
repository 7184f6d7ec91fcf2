"""Lesson 3 drive (runs in the child): the trainee's kernel on the seeded cases, recorded as data."""

from engine import Simulation
from lessons.hostkit import run_vector_kernel

from .scenario import CASES, A, B, inputs


def collect(exercise, rec) -> None:
    for name, total, blocks, seed in CASES:
        sim = Simulation()
        x = inputs(seed, total)
        y = run_vector_kernel(sim, exercise.relu_axpb, [x], total, blocks, total, A, B)
        rec.run(name, sim.finish())
        rec.value(f"y_{name}", y)
