"""Lesson 4 drive (runs in the child): the trainee's plans as data, and the kernel launched with the host tiling
their plan_tiles makes, recorded."""

from .scenario import KERNEL_CASES, PLAN_CASES, inputs, run_case

RUNS = {name: {} for name, *_ in KERNEL_CASES}  # the simulations' settings (the grader's replay uses these)


def collect(exercise, rec) -> None:
    plans = []
    for case in PLAN_CASES:
        p = exercise.plan_tiles(*case)
        plans.append([int(p.tile_length), int(p.tile_count), int(p.tail_length)])
    rec.value("plans", plans)
    for name, total, blocks in KERNEL_CASES:
        sim = rec.simulation(name)
        y = run_case(sim, exercise, total, blocks, inputs(name, total))
        rec.run(name, sim)
        rec.output(f"y_{name}", y)
