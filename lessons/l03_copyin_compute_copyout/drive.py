"""Lesson 3 drive (runs in the child): the trainee's kernel on the seeded cases and the hidden ones, recorded."""

from .scenario import CASES, inputs, run_case

RUNS = {name: {} for name, *_ in CASES}  # the simulations' settings (the grader's replay uses these)


def _one(exercise, rec, name: str, total: int, blocks: int, seed: int) -> None:
    sim = rec.simulation(name)
    y = run_case(sim, exercise, inputs(seed, total), blocks)
    rec.run(name, sim)
    rec.output(f"y_{name}", y)


def collect(exercise, rec) -> None:
    for name, total, blocks, seed in CASES:
        _one(exercise, rec, name, total, blocks, seed)
    for case in rec.hidden:
        with rec.hidden_case(case):
            _one(exercise, rec, case.run, case.params["total"], case.params["blocks"], case.params["seed"])
