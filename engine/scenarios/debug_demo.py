"""Small host programs with one classic coordination bug each, for the debugger to find.

``--bug``:

* ``none``           a correct program (two streams ordered by an event; a synchronised kernel);
* ``missing-wait``   a kernel that drops its ``wait_flag(MTE2_V)``: a race inside the core;
* ``empty-deque``    a kernel that dequeues a queue nobody enqueued to: it would hang;
* ``never-recorded`` a stream waits on an event nobody records: a deadlock;
* ``wait-cycle``     two streams each wait for an event the other records after its wait;
* ``cross-stream``   one stream writes a buffer another reads, with no event between them;
* ``use-after-free`` a copy into device memory that was already freed.
"""

from __future__ import annotations

import numpy as np

from .. import asc
from ..host.acl_codes import ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE
from ..simulation import Simulation
from . import Outcome, Param, Scenario
from .cost import debug_demo_cost

BUGS = ("none", "missing-wait", "empty-deque", "never-recorded", "wait-cycle", "cross-stream", "use-after-free")
N = 1024


def run(sim: Simulation, bug: str) -> Outcome:
    from ..kernels.scale import empty_deque_kernel, scale_kernel

    acl = sim.acl
    acl.init()
    acl.rt.set_device(0)
    s1, _ = acl.rt.create_stream()
    s2, _ = acl.rt.create_stream()
    x = (np.arange(N) % 64).astype(np.float16)
    out = np.zeros(N, np.float16)
    host, _ = acl.rt.malloc_host(x.nbytes)
    if sim.numerics:
        acl.util.ptr_to_numpy(host, N, np.float16)[:] = x
    dx, _ = acl.rt.malloc(x.nbytes, 0)
    dz, _ = acl.rt.malloc(x.nbytes, 0)
    event, _ = acl.rt.create_event()
    acl.rt.memcpy_async(dx, x.nbytes, host, x.nbytes, ACL_MEMCPY_HOST_TO_DEVICE, s1)
    if bug == "cross-stream":  # s2 computes on dx while s1 may still be writing it
        acl.rt.launch_kernel(scale_kernel, 1, s2, asc.GlobalAddress(dx), asc.GlobalAddress(dz), N, True)
    elif bug == "never-recorded":
        acl.rt.stream_wait_event(s2, event)
        acl.rt.launch_kernel(scale_kernel, 1, s2, asc.GlobalAddress(dx), asc.GlobalAddress(dz), N, True)
    elif bug == "wait-cycle":
        other, _ = acl.rt.create_event()
        acl.rt.stream_wait_event(s1, other)
        acl.rt.record_event(event, s1)
        acl.rt.stream_wait_event(s2, event)
        acl.rt.record_event(other, s2)
    elif bug == "empty-deque":
        acl.rt.launch_kernel(empty_deque_kernel, 1, s1, asc.GlobalAddress(dx))
    else:
        acl.rt.record_event(event, s1)
        acl.rt.stream_wait_event(s2, event)
        sync = bug != "missing-wait"
        acl.rt.launch_kernel(scale_kernel, 1, s2, asc.GlobalAddress(dx), asc.GlobalAddress(dz), N, sync)
    acl.rt.memcpy_async(out, x.nbytes, dz, x.nbytes, ACL_MEMCPY_DEVICE_TO_HOST, s2)
    acl.rt.synchronize_device()
    if bug == "use-after-free":
        acl.rt.free(dz)
        acl.rt.memcpy(dz, x.nbytes, host, x.nbytes, ACL_MEMCPY_HOST_TO_DEVICE)
    correct = (
        bool(np.array_equal(out, x * 2)) if sim.numerics and sim.verify and bug in ("none", "missing-wait") else None
    )
    return Outcome(correct, {"bug": bug})


SCENARIO = Scenario(
    name="debug-demo",
    cost=debug_demo_cost,
    summary="a small program with one classic coordination bug (--bug), for the debugger",
    summary_zh="一个带有典型协同错误（--bug）的小程序，供调试器演示",
    params=(
        Param(
            "bug",
            str,
            "none",
            "which bug: " + ", ".join(BUGS),
            help_zh="哪一种错误：none、missing-wait、empty-deque、never-recorded、wait-cycle、cross-stream、use-after-free",
            choices=BUGS,
        ),
    ),
    run=run,
)
