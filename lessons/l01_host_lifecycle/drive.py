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


def _watch_reads(sim) -> list:
    """Log when the program looks at host memory through acl.util.ptr_to_numpy (host time, allocation)."""
    reads = []
    original = sim.acl.util.ptr_to_numpy

    def ptr_to_numpy(ptr, shape, dtype):
        space = sim.hostmem.find_space(ptr) if isinstance(ptr, int) else None
        alloc = space.find(ptr) if space is not None else None
        if alloc is not None:
            reads.append([sim.host_now, alloc.where, alloc.ident])
        return original(ptr, shape, dtype)

    sim.acl.util.ptr_to_numpy = ptr_to_numpy
    return reads


def collect(exercise, rec) -> None:
    for name, device_id in (("main", 0), ("bad_device", 1)):
        sim = Simulation()
        reads = _watch_reads(sim)
        x, y = inputs()
        out = exercise.vector_add(sim.acl, x.copy(), y.copy(), device_id=device_id)
        z, ret = out if isinstance(out, tuple) and len(out) == 2 else (out, None)
        rec.value(f"z_{name}", _array(z))
        rec.value(f"ret_{name}", ret if isinstance(ret, int) else None)
        rec.value(f"state_{name}", _state(sim))
        rec.value(f"reads_{name}", reads)
        rec.run(name, sim.finish())
