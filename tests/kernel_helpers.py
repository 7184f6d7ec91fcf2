"""Host-side helpers for kernel tests: allocate, copy in, launch, synchronize, copy back."""

import numpy as np

from engine import Simulation, asc
from engine.host.acl_codes import ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE


def device(profile="ascend910b1", numerics=True):
    sim = Simulation(profile, numerics=numerics)
    assert sim.acl.init() == 0
    assert sim.acl.rt.set_device(0) == 0
    stream, ret = sim.acl.rt.create_stream()
    assert ret == 0
    return sim, stream


def to_device(sim, array):
    ptr, ret = sim.acl.rt.malloc(array.nbytes, 0)
    assert ret == 0
    assert (
        sim.acl.rt.memcpy(ptr, array.nbytes, np.ascontiguousarray(array), array.nbytes, ACL_MEMCPY_HOST_TO_DEVICE) == 0
    )
    return ptr


def empty_device(sim, nbytes):
    ptr, ret = sim.acl.rt.malloc(nbytes, 0)
    assert ret == 0
    return ptr


def from_device(sim, ptr, shape, dtype):
    out = np.zeros(shape, dtype)
    assert sim.acl.rt.memcpy(out, out.nbytes, ptr, out.nbytes, ACL_MEMCPY_DEVICE_TO_HOST) == 0
    return out


def run_matmul(kernel, a, b, tiling, out_dtype=np.float16, profile="ascend910b1", block_dim=None, b_trans=None):
    """C = A @ B on the simulator; returns (C, sync return code, finished RunResult).

    ``b_trans`` (True/False) is passed to the kernel, which then finds B stored as [N, K] when True."""
    sim, stream = device(profile)
    m, n = a.shape[0], b.shape[1]
    da, db = to_device(sim, a), to_device(sim, np.ascontiguousarray(b.T) if b_trans else b)
    dc = empty_device(sim, m * n * np.dtype(out_dtype).itemsize)
    out_t = asc.half if out_dtype == np.float16 else asc.float32
    args = (asc.GlobalAddress(da, asc.half), asc.GlobalAddress(db, asc.half), asc.GlobalAddress(dc, out_t), tiling)
    if b_trans is not None:
        args = (*args, b_trans)
    assert sim.acl.rt.launch_kernel(kernel, block_dim or tiling.usedCoreNum, stream, *args) == 0
    ret = sim.acl.rt.synchronize_stream(stream)
    c = from_device(sim, dc, (m, n), out_dtype)
    return c, ret, sim.finish()


def inputs(m, n, k, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, (m, k)).astype(np.float16), rng.uniform(-1, 1, (k, n)).astype(np.float16)


def launch(kernel, block_dim, *args, profile="ascend910b1", numerics=True):
    """Launch ``kernel`` with ``args`` (device pointers are made by the caller); return (ret, result)."""
    sim, stream = device(profile, numerics)
    resolved = [a(sim) if callable(a) else a for a in args]
    assert sim.acl.rt.launch_kernel(kernel, block_dim, stream, *resolved) == 0
    ret = sim.acl.rt.synchronize_stream(stream)
    return ret, sim.finish(), sim, resolved
