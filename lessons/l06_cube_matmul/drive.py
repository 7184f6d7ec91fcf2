"""Lesson 6 drive (runs in the child): the trainee's Cube kernel on three shapes and on the hidden cases, recorded."""

from .scenario import CASES, run, run_inputs, seeded

RUNS = {name: {} for name, *_ in CASES}  # the simulations' settings (the grader's replay uses these)


def collect(exercise, rec) -> None:
    for name, m, n, k in CASES:
        sim = rec.simulation(name)
        c = run(sim, exercise.matmul_cube, name, m, n, k)
        rec.run(name, sim)
        rec.output(f"c_{name}", c)
    for case in rec.hidden:
        with rec.hidden_case(case):
            p = case.params
            sim = rec.simulation(case.run)
            c = run_inputs(sim, exercise.matmul_cube, *seeded(p["seed"], p["m"], p["n"], p["k"]))
            rec.run(case.run, sim)
            rec.output(f"c_{case.run}", c)
