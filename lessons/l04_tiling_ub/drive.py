"""Lesson 4 drive (runs in the child): the trainee's plans as data, and the kernel run with them, recorded."""

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
        y = run_case(sim, exercise.relu_axpb, exercise.plan_tiles, total, blocks, inputs(name, total))
        rec.run(name, sim)
        rec.output(f"y_{name}", y)
