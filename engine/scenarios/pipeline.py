"""The prefetch pipeline of the seed article (section 5.1), on S streams.

B batches of (copy A and B to the device, n x n x n fp16 matmul, copy C back), round-robin over S
streams. Each stream owns one set of device buffers, reused by its batches: stream order makes the
reuse safe. With one stream everything serialises; with two, batch i+1's copies in overlap batch
i's matmul and copy out; the host-to-device engine then becomes the bottleneck (one per direction).
"""

from __future__ import annotations

import numpy as np

from ..acl_codes import (
    ACL_MEM_MALLOC_HUGE_FIRST,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
)
from ..simulation import Simulation
from . import Outcome, Param, Scenario, ScenarioArgError
from .host_lifecycle import check_ret
from .pipeline_fast import BulkHost


def batch_inputs(a: np.ndarray, b: np.ndarray, i: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct inputs per batch at no extra random cost: rows of A and columns of B rotated by i."""
    return np.roll(a, i, axis=0), np.roll(b, -i, axis=1)


def open_device(acl, streams: int, nbytes: int) -> tuple[list[int], list[list[int]]]:
    """init, set_device, ``streams`` streams and per stream three device buffers (A, B, C) of ``nbytes``."""
    check_ret(acl.init(), "acl.init")
    check_ret(acl.rt.set_device(0), "acl.rt.set_device")
    handles = []
    for _ in range(streams):
        s, ret = acl.rt.create_stream()
        check_ret(ret, "acl.rt.create_stream")
        handles.append(s)
    dev = []
    for _ in range(streams):
        bufs = []
        for _ in range(3):
            p, ret = acl.rt.malloc(nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
            check_ret(ret, "acl.rt.malloc")
            bufs.append(p)
        dev.append(bufs)
    return handles, dev


def host_buffers(acl, n: int, pageable: bool, inputs: tuple | None) -> tuple[list, object]:
    """One batch's host memory: A and B (filled with ``inputs`` when given) and C."""
    nbytes = n * n * 2
    if pageable:
        ins = list(inputs) if inputs is not None else [np.empty((n, n), np.float16)] * 2
        return ins, np.zeros((n, n), np.float16)
    ins = []
    for _ in range(2):
        p, ret = acl.rt.malloc_host(nbytes)
        check_ret(ret, "acl.rt.malloc_host")
        ins.append(p)
    out, ret = acl.rt.malloc_host(nbytes)
    check_ret(ret, "acl.rt.malloc_host")
    if inputs is not None:
        for p, x in zip(ins, inputs, strict=True):
            acl.util.ptr_to_numpy(p, (n, n), np.float16)[:] = x
    return ins, out


def submit_batch(acl, stream: int, dev: list[int], ins: list, out, n: int) -> None:
    """Copy A and B in, multiply, copy C out: four calls, all queued on ``stream``."""
    nbytes = n * n * 2
    da, db, dc = dev
    ha, hb = ins
    check_ret(acl.rt.memcpy_async(da, nbytes, ha, nbytes, ACL_MEMCPY_HOST_TO_DEVICE, stream), "memcpy_async A")
    check_ret(acl.rt.memcpy_async(db, nbytes, hb, nbytes, ACL_MEMCPY_HOST_TO_DEVICE, stream), "memcpy_async B")
    check_ret(acl.op.matmul(da, db, dc, n, n, n, stream), "acl.op.matmul")
    check_ret(acl.rt.memcpy_async(out, nbytes, dc, nbytes, ACL_MEMCPY_DEVICE_TO_HOST, stream), "memcpy_async C")


def run(
    sim: Simulation, n: int, batches: int, streams: int, pageable: bool, seed: int, sync_each: bool = False
) -> Outcome:
    acl = sim.acl
    nbytes = n * n * 2
    handles, dev = open_device(acl, streams, nbytes)

    numerics = sim.numerics
    base_a = base_b = None
    if numerics:
        rng = np.random.default_rng(seed)
        base_a = rng.uniform(-1, 1, (n, n)).astype(np.float16)
        base_b = rng.uniform(-1, 1, (n, n)).astype(np.float16)
    # the batch section: the same calls go to a host that keeps their rows and runs their tasks in bulk
    # (engine/scenarios/pipeline_fast.py; tested equal, row for row, task for task and number for number)
    host = BulkHost(sim) if sim.fast else acl

    host_in, host_out = [], []
    for i in range(batches):
        ins, out = host_buffers(host, n, pageable, batch_inputs(base_a, base_b, i) if numerics else None)
        host_in.append(ins)
        host_out.append(out)
    for i in range(batches):
        s = handles[i % streams]
        submit_batch(host, s, dev[i % streams], host_in[i], host_out[i], n)
        if sync_each:  # the anti-pattern: wait for every batch before submitting the next
            check_ret(host.rt.synchronize_stream(s), "acl.rt.synchronize_stream")
    for s in handles:
        check_ret(host.rt.synchronize_stream(s), "acl.rt.synchronize_stream")

    correct = None
    details: dict = {}
    if numerics:
        ref = base_a.astype(np.float32) @ base_b.astype(np.float32)
        tol = float(np.max(np.abs(ref))) * 2.0**-10 + 1e-3
        worst = 0.0
        for i in range(batches):
            out = host_out[i] if pageable else acl.util.ptr_to_numpy(host_out[i], (n, n), np.float16)
            expect = np.roll(np.roll(ref, i, axis=0), -i, axis=1)
            worst = max(worst, float(np.max(np.abs(out.astype(np.float32) - expect))))
        correct = worst <= tol
        details = {"max_abs_err": worst, "tolerance": tol}

    if not pageable:
        for ins, out in zip(host_in, host_out, strict=True):
            for p in (*ins, out):
                check_ret(host.rt.free_host(p), "acl.rt.free_host")
    if host is not acl:
        host.finish()
        details["fast_path"] = True
    for bufs in dev:
        for p in bufs:
            check_ret(acl.rt.free(p), "acl.rt.free")
    for s in handles:
        check_ret(acl.rt.destroy_stream(s), "acl.rt.destroy_stream")
    check_ret(acl.rt.reset_device(0), "acl.rt.reset_device")
    check_ret(acl.finalize(), "acl.finalize")
    return Outcome(correct, details)


def check(profile, values: dict) -> None:
    n, streams = values["n"], values["streams"]
    per_buffer = n * n * 2 + profile.limits.malloc_pad + profile.limits.malloc_round
    need = 3 * streams * per_buffer
    if need > profile.chip.device_memory_bytes:
        raise ScenarioArgError(
            f"--n: {streams} stream(s) x 3 device buffers of {n}x{n} fp16 need {need} B, more than "
            f"{profile.name}'s {profile.chip.device_memory_bytes} B of device memory (got --n {n})"
        )
    if values["streams"] > profile.limits.max_streams:
        raise ScenarioArgError(
            f"--streams must be <= {profile.limits.max_streams} ({profile.name}), got {values['streams']}"
        )


SCENARIO = Scenario(
    name="pipeline",
    summary="B batches of copy in / matmul / copy out, round-robin over S streams (the seed's prefetch pipeline)",
    params=(
        Param("n", int, 1024, "matrix size of each batch (n x n x n fp16 matmul)", minimum=1),
        Param("batches", int, 8, "number of batches", minimum=1),
        Param("streams", int, 2, "number of streams", minimum=1),
        Param("pageable", bool, False, "use pageable (plain numpy) host memory instead of pinned"),
        Param("seed", int, 0, "random seed of the inputs", minimum=0),
        Param(
            "sync_each",
            bool,
            False,
            "synchronize after every batch (the host then feeds the device one batch at a time)",
        ),
    ),
    run=run,
    check=check,
)
