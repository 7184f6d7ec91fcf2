"""Lesson 1 drive: the trainee's host program, once on device 0 and once on device 1, then on the hidden cases.

``collect`` runs in the child and records; ``observer`` runs in the grader, on the replay's simulations:
what the program left behind when it returned, and when it looked at host memory.
"""

import numpy as np

from engine.kernels.vector_add import add_kernel

from .scenario import inputs, small_device

CASES = (("main", 0), ("bad_device", 1))
RUNS = {name: {} for name, _ in CASES}  # the simulations' settings (the grader's replay uses these)
LIBRARY = {"engine.kernels.vector_add:add_kernel": add_kernel}  # the kernel the exercise launches


def _array(z):
    return None if z is None else np.array(z, dtype=np.float16, copy=True).reshape(-1)


def _one(exercise, rec, name: str, device_id: int, x, y) -> None:
    sim = rec.simulation(name)
    out = exercise.vector_add(sim.acl, x.copy(), y.copy(), device_id=device_id)
    z, ret = out if isinstance(out, tuple) and len(out) == 2 else (out, None)
    rec.output(f"z_{name}", _array(z))
    rec.value(f"ret_{name}", ret if isinstance(ret, int) else None)
    rec.run(name, sim)


def collect(exercise, rec) -> None:
    for name, device_id in CASES:
        _one(exercise, rec, name, device_id, *inputs())
    for case in rec.hidden:
        with rec.hidden_case(case):
            _one(exercise, rec, case.run, 0, *inputs(case.params["n"], case.params["seed"]))


def hidden_run(case) -> dict:
    """A hidden case's simulation settings: a device with little memory for ``alloc_fails``."""
    if case.kind == "alloc_fails":
        return {"profile": small_device(case.params["n"], case.params["fits"])}
    return {}


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


def observer(name: str, sim):
    """(In the grader) log when the program looks at host memory through acl.util.ptr_to_numpy (host time,
    allocation); at the run's end, what it left behind."""
    reads = []
    original = sim.acl.util.ptr_to_numpy

    def ptr_to_numpy(ptr, shape, dtype):
        space = sim.hostmem.find_space(ptr) if isinstance(ptr, int) else None
        alloc = space.find(ptr) if space is not None else None
        if alloc is not None:
            reads.append([sim.host_now, alloc.where, alloc.ident])
        return original(ptr, shape, dtype)

    sim.acl.util.ptr_to_numpy = ptr_to_numpy
    return lambda: {f"state_{name}": _state(sim), f"reads_{name}": reads}
