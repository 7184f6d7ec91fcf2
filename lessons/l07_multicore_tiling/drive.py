"""Lesson 7 drive (runs in the child): the trainee's tiling, at a small shape and at 4096^3, recorded."""

from engine.kernels.matmul import matmul_tiled

from .scenario import BIG, CORES, MAX_MMADS, SMALL, mmads, problem, run

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
