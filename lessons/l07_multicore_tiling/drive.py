"""Lesson 7 drive (runs in the child): the trainee's tiling, at a small shape, at 4096^3 and on the hidden cases,
recorded."""

from engine.kernels.matmul import matmul_tiled

from .scenario import BIG, CORES, MAX_HIDDEN_MMADS, MAX_MMADS, SMALL, mmads, problem, run

SHAPES = (("small", SMALL), ("big", BIG))
RUNS = {"small": {}, "big": {"numerics": False}}  # the simulations' settings (the grader's replay uses these)
LIBRARY = {"engine.kernels.matmul:matmul_tiled": matmul_tiled}  # the kernel the tiling is run with


def collect(exercise, rec) -> None:
    for name, shape in SHAPES:
        tiling = exercise.make_tiling(*shape, CORES)
        rec.value(f"tiling_{name}", tiling)
        if problem(tiling, shape) is not None or mmads(tiling) > MAX_MMADS:
            continue  # the check finds the same problem in the tiling itself
        sim = rec.simulation(name)
        c = run(sim, tiling)
        rec.run(name, sim)
        if name == "small":
            rec.output("c_small", c)
    for case in rec.hidden:
        with rec.hidden_case(case):
            p = case.params
            shape = (p["m"], p["n"], p["k"])
            tiling = exercise.make_tiling(*shape, p["cores"])
            rec.value(f"tiling_{case.run}", tiling)
            if problem(tiling, shape, p["profile"]) is not None or mmads(tiling) > MAX_HIDDEN_MMADS:
                continue  # the check finds the problem in the tiling itself
            sim = rec.simulation(case.run)
            c = run(sim, tiling)
            rec.run(case.run, sim)
            rec.output(f"c_{case.run}", c)


def hidden_run(case) -> dict:
    """A hidden case runs on its chip's profile."""
    return {"profile": case.params["profile"]}
