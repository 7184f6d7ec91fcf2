"""The multi-stream task helper: dependencies become event waits; prefetch keeps copies ahead."""

import itertools

import numpy as np

from engine import Simulation
from engine.host.acl_codes import ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE
from engine.host.stream_manager import StreamManager
from tests.conftest import MIB, ROUND, dev_alloc, host_alloc


def test_dependent_task_waits_for_its_dependency_on_another_stream():
    sim = Simulation(ROUND, numerics=True, strict=True)
    acl = sim.acl
    acl.init()
    acl.rt.set_device(0)
    mgr = StreamManager(sim, 2)
    d = dev_alloc(sim)
    src = host_alloc(sim)
    dst = host_alloc(sim)
    acl.util.ptr_to_numpy(src, MIB, np.uint8)[:] = 5
    load = mgr.submit_task(lambda s: acl.rt.memcpy_async(d, MIB, src, MIB, ACL_MEMCPY_HOST_TO_DEVICE, s))
    back = mgr.submit_task(lambda s: acl.rt.memcpy_async(dst, MIB, d, MIB, ACL_MEMCPY_DEVICE_TO_HOST, s), [load])
    assert load.stream != back.stream  # the second stream was idle
    mgr.destroy()
    assert (acl.util.ptr_to_numpy(dst, MIB, np.uint8) == 5).all()
    rows = sim.finish().trace.rows()
    h2d = next(r for r in rows if r["name"] == "H2D copy" and r["lane"].startswith("Device 0 streams"))
    d2h = next(r for r in rows if r["name"] == "D2H copy" and r["lane"].startswith("Device 0 streams"))
    assert d2h["start"] >= h2d["end"]  # without the event, D2H (its own engine) would start at once


def test_prefetch_pipeline_overlaps_and_orders():
    sim = Simulation(ROUND, numerics=False, strict=True)
    acl = sim.acl
    acl.init()
    acl.rt.set_device(0)
    mgr = StreamManager(sim, 2)
    n = 4
    dev = [dev_alloc(sim) for _ in range(n)]
    host = [host_alloc(sim) for _ in range(n)]

    def prefetch(batch, i, s):
        acl.rt.memcpy_async(dev[i], MIB, host[i], MIB, ACL_MEMCPY_HOST_TO_DEVICE, s)

    def compute(batch, i, s):
        acl.op.matmul(dev[i], dev[i], dev[i], 64, 64, 64, s)

    handles = mgr.pipeline_data_prefetch(list(range(n)), prefetch, compute, prefetch_depth=2)
    assert len(handles) == n
    mgr.destroy()
    rows = sim.finish().trace.rows()
    copies = [r for r in rows if r["lane"] == "Device 0 copy engines/H2D engine 0"]
    kernels = [r for r in rows if r["name"] == "matmul 64x64x64" and r["lane"].startswith("Device 0 streams")]
    assert len(copies) == n and len(kernels) == n
    for copy, kernel in zip(copies, kernels, strict=True):
        assert kernel["start"] >= copy["end"]  # each compute after its own copy
    # copies run back to back: the engine never idles waiting for compute
    assert all(b["start"] == a["end"] for a, b in itertools.pairwise(copies))
