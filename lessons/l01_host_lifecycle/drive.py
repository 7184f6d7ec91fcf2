"""Lesson 1 drive (runs in the child): the trainee's host program, once on device 0 and once on device 1."""

import numpy as np

from engine import Simulation

from .scenario import inputs


def _state(sim) -> dict:
    """What the program left behind when it returned."""
    return {
        "device_live": len(sim.devmem.space.live()),
        "pinned_live": len(sim.hostmem.pinned.live()),
        "streams_open": sum(1 for s in sim.runtime.streams.values() if not s.closed),
        "initialized": bool(sim.state.initialized),
        "device_set": sim.state.device is not None,
        "return_ps": sim.host_now,
    }


def _array(z):
    return None if z is None else np.array(z, dtype=np.float16, copy=True).reshape(-1)


def collect(exercise, rec) -> None:
    for name, device_id in (("main", 0), ("bad_device", 1)):
        sim = Simulation()
        x, y = inputs()
        out = exercise.vector_add(sim.acl, x.copy(), y.copy(), device_id=device_id)
        z, ret = out if isinstance(out, tuple) and len(out) == 2 else (out, None)
        rec.value(f"z_{name}", _array(z))
        rec.value(f"ret_{name}", ret if isinstance(ret, int) else None)
        rec.value(f"state_{name}", _state(sim))
        rec.run(name, sim.finish())
    rec.value("predictions", getattr(exercise, "PREDICTIONS", None))
