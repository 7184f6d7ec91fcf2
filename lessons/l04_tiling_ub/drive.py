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
        _one(exercise, rec, name, total, blocks, inputs(name, total))
    for case in rec.hidden:
        with rec.hidden_case(case):
            p = case.params
            _one(exercise, rec, case.run, p["total"], p["blocks"], inputs(case.run, p["total"], p["seed"]))


def _one(exercise, rec, name: str, total: int, blocks: int, x) -> None:
    sim = rec.simulation(name)
    y = run_case(sim, exercise, total, blocks, x)
    rec.run(name, sim)
    rec.output(f"y_{name}", y)


def hidden_run(case) -> dict:
    """A hidden case's simulation: another chip for ``other_ub``."""
    return {"profile": case.params["profile"]} if "profile" in case.params else {}
