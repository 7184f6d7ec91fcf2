"""Lesson 2 drive (runs in the child): the trainee's partition as data, and their kernel on 1-48 blocks, recorded."""

from .scenario import KERNEL_CASES, PURE_CASES, inputs, run_scale

RUNS = {name: {} for name, *_ in KERNEL_CASES}  # the simulations' settings (the grader's replay uses these)


def collect(exercise, rec) -> None:
    ranges = {}
    for total, blocks in PURE_CASES:
        tiling = exercise.compute_tiling(total, blocks)
        ranges[f"{total}/{blocks}"] = [list(map(int, exercise.get_block_range(tiling, b))) for b in range(blocks)]
    rec.value("ranges", ranges)
    for name, total, blocks in KERNEL_CASES:
        sim = rec.simulation(name)
        z = run_scale(sim, exercise.scale_kernel, exercise.compute_tiling, total, blocks, inputs(name, total))
        rec.run(name, sim)
        rec.output(f"z_{name}", z)
