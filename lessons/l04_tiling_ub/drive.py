"""Lesson 4 drive (runs in the child): the trainee's plans as data, and the kernel run with them."""

from engine import Simulation

from .scenario import KERNEL_CASES, PLAN_CASES, inputs, run_case


def collect(exercise, rec) -> None:
    plans = []
    for case in PLAN_CASES:
        p = exercise.plan_tiles(*case)
        plans.append([int(p.tile_length), int(p.tile_count), int(p.tail_length)])
    rec.value("plans", plans)
    for name, total, blocks in KERNEL_CASES:
        sim = Simulation()
        y = run_case(sim, exercise.relu_axpb, exercise.plan_tiles, total, blocks, inputs(name, total))
        rec.run(name, sim.finish())
        rec.value(f"y_{name}", y)
