"""Lesson 1 scenario: a vector add's whole host lifecycle, after a first attempt on a device that does not exist.

The first call of the reference program asks for device 1: ``set_device`` fails with
ACL_ERROR_RT_INVALID_DEVICEID, the program finalizes and reports it; the second attempt, on
device 0, runs the full lifecycle. Also the seeded inputs the check uses and the question's truth.
"""

from __future__ import annotations

import numpy as np

from engine import Simulation
from engine.trace import Kind
from lessons.hostkit import kernel_us, uniform

N = 8 * 2 * 2048  # 8 blocks, two tiles each
SEED = 1


def inputs(n: int = N, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    return uniform(seed, n), uniform(seed + 1, n)


def draw_odd_length(rng: np.random.Generator) -> dict:
    """Hidden: x and y of a length that is not a multiple of 16 elements (nor of the tile, nor of the blocks)."""
    n = int(rng.integers(1000, 12000))
    n += 0 if n % 16 else int(rng.integers(1, 16))
    return {"n": n, "seed": int(rng.integers(10, 1 << 20))}


def draw_alloc_fails(rng: np.random.Generator) -> dict:
    """Hidden: a device whose memory holds fewer than two buffers of x's size (``fits``: 0 or 1 of them), so a
    device allocation fails after set-up (and after the first buffer when one fits)."""
    return {
        "n": int(rng.integers(1000, 12000)),
        "seed": int(rng.integers(10, 1 << 20)),
        "fits": int(rng.integers(0, 2)),
    }


def small_device(n: int, fits: int):
    """The default profile with device memory for ``fits`` buffers of ``n`` fp16 elements (and less than one more):
    every program that holds x and y on the device at once runs out."""
    import dataclasses

    from engine import load_profile

    profile = load_profile()
    limits = profile.limits
    reserved = -(-2 * n // limits.malloc_round) * limits.malloc_round + limits.malloc_pad  # what aclrtMalloc takes
    capacity = fits * reserved + reserved // 2
    return dataclasses.replace(profile, chip=dataclasses.replace(profile.chip, device_memory_bytes=capacity))


def scenario(sim: Simulation) -> dict:
    from .solution import vector_add

    x, y = inputs()
    _, bad = vector_add(sim.acl, x, y, device_id=1)
    z, ret = vector_add(sim.acl, x, y)
    return {"failed_call": bad, "ret": ret, "correct": bool(z is not None and np.array_equal(z, x + y))}


def truth_setup() -> str:
    sim = Simulation()
    scenario(sim)
    result = sim.finish()
    t = result.trace
    names = {i for i, n in enumerate(t.names) if n in ("acl.init", "acl.rt.set_device")}
    calls = np.isin(t.name, list(names)) & (t.kind == Kind.CALL)
    setup_us = float((t.end[calls] - t.start[calls]).sum()) / 1e6
    return "set-up" if setup_us > kernel_us(result) else "kernel"
