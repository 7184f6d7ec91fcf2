"""Lesson 13 drive (runs in the child): the trainee's tiling function and kernel launched on the seeded cases and
the hidden ones, recorded (the check reads each launch's tiling from the grader's replay)."""

from .scenario import KERNEL_CASES, inputs, run_case

RUNS = {name: {} for name, *_ in KERNEL_CASES}  # the simulations' settings (the grader's replay uses these)


def _launch(exercise, rec, name: str, total: int, size: int, cores: int, x) -> None:
    sim = rec.simulation(name)
    y = run_case(sim, exercise, total, size, cores, x)
    rec.run(name, sim)
    rec.output(f"y_{name}", y)


def collect(exercise, rec) -> None:
    for name, total, size, cores in KERNEL_CASES:
        _launch(exercise, rec, name, total, size, cores, inputs(name, total, size))
    for case in rec.hidden:
        with rec.hidden_case(case):
            p = case.params
            x = inputs(case.run, p["total"], p["size"], p["seed"])
            _launch(exercise, rec, case.run, p["total"], p["size"], p["cores"], x)


def hidden_run(case) -> dict:
    """A hidden case's simulation: another chip for ``other_chip``."""
    return {"profile": case.params["profile"]} if "profile" in case.params else {}
