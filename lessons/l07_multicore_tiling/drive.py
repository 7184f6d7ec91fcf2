"""Lesson 7 drive (runs in the child): the trainee's tiling, checked, at a small shape and at 4096^3."""

from engine import Simulation, load_profile
from engine.aicore.matmul_tiling import TilingError, validate

from .scenario import BIG, CORES, SMALL, run

MAX_MMADS = 200_000  # a tiling that needs more mmads than this is far from the target: not simulated
FULL_TRACE_ROWS = 1_000_000  # longer runs send only their host, stream, kernel and block rows


def collect(exercise, rec) -> None:
    profile = load_profile("ascend910b1")
    for name, shape, numerics in (("small", SMALL, True), ("big", BIG, False)):
        tiling = exercise.make_tiling(*shape, CORES)
        rec.value(f"tiling_{name}", dict(vars(tiling)) if hasattr(tiling, "__dict__") else str(tiling))
        try:
            validate(tiling, profile)
            if (tiling.M, tiling.N, tiling.Ka) != shape:
                raise TilingError("M, N, Ka", f"must be the shape asked for {shape}", (tiling.M, tiling.N, tiling.Ka))
        except (TilingError, AttributeError, TypeError) as exc:
            rec.value(f"invalid_{name}", str(exc))
            continue
        mmads = -(-tiling.M // tiling.baseM) * -(-tiling.N // tiling.baseN) * -(-tiling.Ka // tiling.baseK)
        if mmads > MAX_MMADS:
            rec.value(f"skipped_{name}", mmads)
            continue
        sim = Simulation(numerics=numerics)
        c = run(sim, tiling)
        result = sim.finish()
        rec.run(name, result, coarse=len(result.trace) > FULL_TRACE_ROWS)
        if numerics:
            rec.value(f"c_{name}", c)
