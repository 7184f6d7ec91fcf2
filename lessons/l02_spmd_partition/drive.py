"""Lesson 2 drive (runs in the child): the trainee's tiling and block ranges as data, and the given kernel
launched with their tiling on 1-48 cores, recorded."""

from engine.host.tiling_record import struct_record

from .scenario import KERNEL_CASES, PURE_CASES, inputs, run_scale, tiled

RUNS = {name: {} for name, *_ in KERNEL_CASES}  # the simulations' settings (the grader's replay uses these)


def collect(exercise, rec) -> None:
    tilings = {}
    for total, size, cores in PURE_CASES:
        context = tiled(exercise.scale_tiling, total, size, cores)
        struct = context.get_raw_tiling_data().struct()
        blocks = context.get_block_dim()
        ranges = [list(map(int, exercise.block_range(struct, b))) for b in range(min(blocks, 64))] if struct else []
        tilings[f"{total}/{size}/{cores}"] = {
            "block_dim": blocks,
            "key": context.get_tiling_key(),
            "tiling": struct_record(struct) if struct is not None else None,
            "ranges": ranges,
        }
    rec.value("tilings", tilings)
    for name, total, size, cores in KERNEL_CASES:
        _launch(exercise, rec, name, total, size, cores, inputs(name, total, size))
    for case in rec.hidden:
        with rec.hidden_case(case):
            p = case.params
            x = inputs(case.run, p["total"], p["size"], p["seed"])
            _launch(exercise, rec, case.run, p["total"], p["size"], p["cores"], x)


def _launch(exercise, rec, name: str, total: int, size: int, cores: int, x) -> None:
    sim = rec.simulation(name)
    z = run_scale(sim, exercise.scale_kernel, exercise.scale_tiling, total, size, cores, x)
    rec.run(name, sim)
    rec.output(f"z_{name}", z)


def hidden_run(case) -> dict:
    """A hidden case's simulation: another chip for ``other_chip``."""
    return {"profile": case.params["profile"]} if "profile" in case.params else {}
