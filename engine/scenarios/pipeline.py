"""The prefetch pipeline of the seed article (section 5.1), on S streams.

B batches of (copy A and B to the device, n x n x n fp16 matmul, copy C back). Two ways to spread
them over the streams:

* ``prefetch_depth = 0``: whole batches round-robin over the S streams. Each stream owns one set of
  device buffers, reused by its batches: stream order makes the reuse safe. With one stream
  everything serialises; with two, batch i+1's copies overlap batch i's matmul and copy out.
* ``prefetch_depth = D >= 1``: through the :class:`~engine.host.stream_manager.StreamManager` (the seed's
  ``pipeline_data_prefetch``): copies in run D batches ahead of compute on their own stream (created
  with priority 0), compute and copy out on the other streams (priority 1), each compute waiting for
  its batch's copy through an event, each copy waiting through an event for the compute that last
  used its buffer set (D + 1 sets rotate).

Either way the host-to-device engine soon becomes the bottleneck (one per direction on 910B): the
report says how many streams the engines and cores can keep busy at once and why a prefetch deeper
than one batch cannot help batches that all take the same time.
"""

from __future__ import annotations

import numpy as np

from ..device.stream import TaskKind
from ..host.acl_codes import (
    ACL_MEM_MALLOC_HUGE_FIRST,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
)
from ..host.call_log import HostCallLog
from ..host.stream_manager import StreamManager
from ..simulation import Simulation
from ..trace import DIRECTIONS, Kind, LaneKind
from . import SEED, Outcome, Param, Scenario, ScenarioArgError, flag_of
from .cost import pipeline_cost
from .host_lifecycle import check_ret


def batch_inputs(a: np.ndarray, b: np.ndarray, i: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct inputs per batch at no extra random cost: rows of A and columns of B rotated by i."""
    return np.roll(a, i, axis=0), np.roll(b, -i, axis=1)


def open_device(
    acl, streams: int, nbytes: int, sets: int | None = None, priorities: tuple[int, ...] = ()
) -> tuple[list[int], list[list[int]]]:
    """init, set_device, ``streams`` streams (with ``priorities``, default 0) and ``sets`` (default: one per
    stream) sets of three device buffers (A, B, C) of ``nbytes``."""
    check_ret(acl.init(), "acl.init")
    check_ret(acl.rt.set_device(0), "acl.rt.set_device")
    handles = []
    for i in range(streams):
        if priorities:
            s, ret = acl.rt.create_stream_with_config(priorities[i], 0)
        else:
            s, ret = acl.rt.create_stream()
        check_ret(ret, "acl.rt.create_stream")
        handles.append(s)
    dev = []
    for _ in range(streams if sets is None else sets):
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
    copy_in(acl, stream, dev, ins, n)
    compute_out(acl, stream, dev, out, n)


def copy_in(acl, stream: int, dev: list[int], ins: list, n: int) -> None:
    """A and B to the device."""
    nbytes = n * n * 2
    da, db, _dc = dev
    ha, hb = ins
    check_ret(acl.rt.memcpy_async(da, nbytes, ha, nbytes, ACL_MEMCPY_HOST_TO_DEVICE, stream), "memcpy_async A")
    check_ret(acl.rt.memcpy_async(db, nbytes, hb, nbytes, ACL_MEMCPY_HOST_TO_DEVICE, stream), "memcpy_async B")


def compute_out(acl, stream: int, dev: list[int], out, n: int) -> None:
    """C = A @ B and C back to the host."""
    nbytes = n * n * 2
    da, db, dc = dev
    check_ret(acl.op.matmul(da, db, dc, n, n, n, stream), "acl.op.matmul")
    check_ret(acl.rt.memcpy_async(out, nbytes, dc, nbytes, ACL_MEMCPY_DEVICE_TO_HOST, stream), "memcpy_async C")


def run(
    sim: Simulation,
    n: int,
    batches: int,
    streams: int,
    pageable: bool,
    seed: int,
    sync_each: bool = False,
    prefetch_depth: int = 0,
) -> Outcome:
    acl = sim.acl
    nbytes = n * n * 2
    if prefetch_depth:  # copies on stream 1 (priority 0), compute on the others (priority 1), D + 1 buffer sets
        priorities = (0,) + (1,) * (streams - 1)
        handles, dev = open_device(acl, streams, nbytes, prefetch_depth + 1, priorities)
    else:
        handles, dev = open_device(acl, streams, nbytes)

    numerics = sim.numerics
    base_a = base_b = None
    if numerics:
        rng = np.random.default_rng(seed)
        base_a = rng.uniform(-1, 1, (n, n)).astype(np.float16)
        base_b = rng.uniform(-1, 1, (n, n)).astype(np.float16)
    # the batch section: the same calls go to a host call log that plays them in bulk into the same runtime
    # (engine/host/call_log.py; tested equal, row for row, task for task and number for number); the prefetch
    # pipeline's events go call by call
    host = HostCallLog(sim) if sim.fast and not prefetch_depth else acl

    host_in, host_out = [], []
    for i in range(batches):
        ins, out = host_buffers(host, n, pageable, batch_inputs(base_a, base_b, i) if numerics else None)
        host_in.append(ins)
        host_out.append(out)
    manager = None
    if prefetch_depth:
        manager = StreamManager(sim, streams=handles, acl=host)
        sets = len(dev)
        manager.pipeline_data_prefetch(
            range(batches),
            lambda _b, i, s: copy_in(host, s, dev[i % sets], host_in[i], n),
            lambda _b, i, s: compute_out(host, s, dev[i % sets], host_out[i], n),
            prefetch_depth,
            sets,
        )
    else:
        for i in range(batches):
            s = handles[i % streams]
            submit_batch(host, s, dev[i % streams], host_in[i], host_out[i], n)
            if sync_each:  # the anti-pattern: wait for every batch before submitting the next
                check_ret(host.rt.synchronize_stream(s), "acl.rt.synchronize_stream")
    for s in handles:
        check_ret(host.rt.synchronize_stream(s), "acl.rt.synchronize_stream")

    correct = None
    details: dict = {}
    if numerics and sim.verify:
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
    if manager is not None:
        manager.destroy()  # its events (the streams are the scenario's)
    for bufs in dev:
        for p in bufs:
            check_ret(acl.rt.free(p), "acl.rt.free")
    for s in handles:
        check_ret(acl.rt.destroy_stream(s), "acl.rt.destroy_stream")
    check_ret(acl.rt.reset_device(0), "acl.rt.reset_device")
    check_ret(acl.finalize(), "acl.finalize")
    return Outcome(correct, details)


def concurrency(result) -> dict:
    """What can run at once, and what did: for the report's note on streams and prefetch depth."""
    t = result.trace
    h = result.profile.host
    rows = np.flatnonzero(t.rows_on(LaneKind.STREAM) & np.isin(t.kind, (Kind.COPY, Kind.KERNEL)))
    edges = np.concatenate([t.start[rows], t.end[rows]])
    steps = np.concatenate([np.ones(len(rows), np.int64), -np.ones(len(rows), np.int64)])
    order = np.lexsort((steps, edges))  # at a tie, an end before a start
    busy_at_once = int(np.cumsum(steps[order]).max()) if len(rows) else 0
    task = t.task_rows()[rows]
    kinds = t.tasks["kind"][task]
    direction = t.tasks["direction"][task]
    spans = (t.end[rows] - t.start[rows]) / 1e6
    h2d = spans[(kinds == TaskKind.COPY) & (direction == DIRECTIONS.index("H2D"))]
    kernels = spans[kinds == TaskKind.KERNEL]
    parallel = h.copy_engines_h2d + h.copy_engines_d2h + 1  # the engines and the cores (one op-level kernel)
    copy_in_us = float(h2d.sum()) / max(1, len(kernels))
    compute_us = float(kernels.mean()) if len(kernels) else 0.0
    bound = "copy engine (H2D)" if copy_in_us >= compute_us else "AI cores"
    return {
        "streams_busy_at_once": busy_at_once,
        "streams_that_can_work_at_once": parallel,
        "copy_in_us_per_batch": round(copy_in_us, 3),
        "compute_us_per_batch": round(compute_us, 3),
        "notes": [
            f"at most {parallel} tasks can run at once ({h.copy_engines_h2d} H2D engine(s), {h.copy_engines_d2h} "
            f"D2H engine(s), the AI cores running one op-level kernel): {busy_at_once} did; more streams than that "
            "only queue",
            f"each batch needs {copy_in_us:.1f} us of copy in and {compute_us:.1f} us of compute: the {bound} sets "
            "the pace, and with batches that all take the same time a prefetch deeper than one batch cannot help "
            "(it helps when batches vary)",
        ],
    }


def check(profile, values: dict) -> None:
    n, streams = values["n"], values["streams"]
    depth = values["prefetch_depth"]
    if depth and values["sync_each"]:
        raise ScenarioArgError(
            "--sync-each: synchronising after every batch defeats --prefetch-depth; use one of them",
            "sync_each",
            "prefetch_depth",
            zh="--sync-each：每批之后都同步会让 --prefetch-depth 失去作用；两者只能用其一",
        )
    if depth > values["batches"]:
        raise ScenarioArgError(
            f"--prefetch-depth must be <= --batches ({values['batches']}), got {depth}",
            "prefetch_depth",
            zh=f"--prefetch-depth 必须 <= --batches（{values['batches']}），收到 {depth}",
        )
    if streams > profile.limits.max_streams:
        raise ScenarioArgError(
            f"--streams must be <= {profile.limits.max_streams} ({profile.name}), got {streams}",
            "streams",
            zh=f"--streams 必须 <= {profile.limits.max_streams}（{profile.name}），收到 {streams}",
        )
    per_buffer = n * n * 2 + profile.limits.malloc_pad + profile.limits.malloc_round
    need = 3 * (depth + 1 if depth else streams) * per_buffer
    if need > profile.chip.device_memory_bytes:
        names = ("n",) if streams == 1 else ("n", "streams")
        raise ScenarioArgError(
            f"{'/'.join(map(flag_of, names))}: {streams} stream(s) x 3 device buffers of {n}x{n} fp16 need {need} B, "
            f"more than {profile.name}'s {profile.chip.device_memory_bytes} B of device memory "
            f"(got --n {n} --streams {streams})",
            *names,
            zh=f"{'/'.join(map(flag_of, names))}：{streams} 个流 x 3 个 {n}x{n} fp16 设备缓冲区需要 {need} B，"
            f"超过了 {profile.name} 的 {profile.chip.device_memory_bytes} B 设备内存"
            f"（收到 --n {n} --streams {streams}）",
        )


SCENARIO = Scenario(
    name="pipeline",
    cost=pipeline_cost,
    summary="B batches of copy in / matmul / copy out, round-robin over S streams (the seed's prefetch pipeline)",
    summary_zh="B 批“拷入 / 矩阵乘 / 拷出”，轮流分配到 S 条流上（原文的预取流水线）",
    params=(
        Param(
            "n",
            int,
            1024,
            "matrix size of each batch (n x n x n fp16 matmul)",
            help_zh="每批的矩阵规模（n x n x n 的 fp16 矩阵乘）",
            minimum=1,
        ),
        Param("batches", int, 8, "number of batches", help_zh="批次数", minimum=1),
        Param("streams", int, 2, "number of streams", help_zh="流的数量", minimum=1),
        Param(
            "pageable",
            bool,
            False,
            "use pageable (plain numpy) host memory instead of pinned",
            help_zh="使用可分页（普通 numpy）主机内存，而不是锁页内存",
        ),
        SEED,
        Param(
            "sync_each",
            bool,
            False,
            "synchronize after every batch (the host then feeds the device one batch at a time)",
            help_zh="每批之后都同步（主机每次只给设备送一批）",
        ),
        Param(
            "prefetch_depth",
            int,
            0,
            "0: whole batches round-robin; D: copies run D batches ahead on their own stream (StreamManager)",
            help_zh="0：整批轮流分配到各条流；D：拷贝在自己的流上提前 D 批进行（StreamManager）",
            minimum=0,
            maximum=64,
        ),
    ),
    run=run,
    check=check,
    report=concurrency,
)
