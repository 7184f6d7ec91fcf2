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


def inputs() -> tuple[np.ndarray, np.ndarray]:
    return uniform(SEED, N), uniform(SEED + 1, N)


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
