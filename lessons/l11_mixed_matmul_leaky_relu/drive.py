"""Lesson 11 drive (runs in the child): the trainee's kernel and host tiling at the main shape and on the hidden
cases, recorded."""

from .scenario import MAIN, SEED, SLOTS, run

RUNS = {"main": {}}  # the simulation's settings (the grader's replay uses these)


def collect(exercise, rec) -> None:
    _one(exercise, rec, "main", *MAIN, SEED, SLOTS)
    for case in rec.hidden:
        with rec.hidden_case(case):
            p = case.params
            _one(exercise, rec, case.run, p["m"], p["n"], p["k"], p["seed"], p["slots"])


def _one(exercise, rec, name: str, m: int, n: int, k: int, seed: int, slots: int) -> None:
    sim = rec.simulation(name)
    c = run(sim, exercise.matmul_leaky_relu, exercise.matmul_leaky_relu_tiling, m, n, k, seed, slots)
    rec.run(name, sim)
    rec.output(f"c_{name}", c)


def hidden_run(case) -> dict:
    """A hidden case's simulation: another chip for ``other_chip``."""
    return {"profile": case.params["profile"]} if "profile" in case.params else {}
