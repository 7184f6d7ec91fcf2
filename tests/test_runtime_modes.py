"""One runtime, two speeds: random host programs give the same run call by call and in fast mode.

Each program (streams with priorities, events recorded, waited for and synchronised with, host-to-device
and device-to-host copies from pinned and pageable memory, library matmuls and an ``@asc.jit`` vector
kernel, stream and device synchronisations, sometimes a shallow stream depth so the host waits for room,
sometimes a block repeated long enough for the fast mode to stamp it) runs twice: on ``sim.acl`` with
``Simulation(fast=False)``, and through a :class:`~engine.host.call_log.HostCallLog` with ``fast=True``. Both
runs are compared through :func:`engine.trace.codec.run_to_doc`, every table and every array: trace rows
(ids resolved to what they name, in their exact order: the fast mode places the rows it appends out of
the call-by-call order where that run has them, see :mod:`engine.trace.order`), the task table, the task
records, findings, totals; and with numerics the host's memory.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from engine import Simulation, asc, load_profile
from engine.host.acl_codes import ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE
from engine.host.call_log import HostCallLog
from engine.trace.codec import run_to_doc

N = 32  # matrices are N x N fp16
NBYTES = N * N * 2
SETS = 3  # buffer sets: device A, B, C, a pinned host buffer, a pageable array


@asc.jit(kernel_type=asc.KernelType.AIV_ONLY)
def double_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, per_block: int):
    """z = x + x, ``per_block`` elements per block in one tile."""
    start = asc.get_block_idx() * per_block
    x_gm, z_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, per_block)
    z_gm.set_global_buffer(z + start, per_block)
    pipe = asc.TPipe()
    q_in = asc.TQue(asc.TPosition.VECIN, 1)
    q_out = asc.TQue(asc.TPosition.VECOUT, 1)
    nbytes = per_block * x.dtype.sizeof()
    pipe.init_buffer(que=q_in, num=1, len=nbytes)
    pipe.init_buffer(que=q_out, num=1, len=nbytes)
    a = q_in.alloc_tensor(x_gm.dtype)
    asc.data_copy(a, x_gm, per_block)
    q_in.enque(a)
    a = q_in.deque()
    b = q_out.alloc_tensor(a.dtype)
    asc.add(b, a, a, per_block)
    q_out.enque(b)
    q_in.free_tensor(a)
    b = q_out.deque()
    asc.data_copy(z_gm, b, per_block)
    q_out.free_tensor(b)


def _ops(streams: int, events: int, plain: bool):
    s = st.integers(0, streams - 1)
    b = st.integers(0, SETS - 1)
    half = st.booleans()
    ops = [
        st.tuples(st.just("h2d"), s, b, st.just(False) if plain else st.booleans(), half),
        st.tuples(st.just("d2h"), s, b, st.just(False) if plain else st.booleans()),
        st.tuples(st.just("matmul"), s, b),
    ]
    if not plain:
        ops += [
            st.tuples(st.just("vector"), s, b, st.sampled_from((1, 2, 8))),
            st.tuples(st.just("sync_stream"), s),
            st.tuples(st.just("sync_device")),
        ]
        if events:
            e = st.integers(0, events - 1)
            ops += [
                st.tuples(st.just("record"), e, s),
                st.tuples(st.just("wait"), s, e),
                st.tuples(st.just("sync_event"), e),
            ]
    return st.one_of(ops)


@st.composite
def programs(draw, long: bool = False):
    streams = draw(st.integers(2 if long else 1, 3))
    events = 0 if long else draw(st.integers(0, 2))
    return {
        # (in a long run of one priority nothing starves, so the state can repeat)
        "priorities": [0] * streams if long else draw(st.lists(st.integers(0, 3), min_size=streams, max_size=streams)),
        "events": events,
        # a long run is stamped when the host is far enough ahead of the device (a deep stream)
        "depth": 2048 if long else draw(st.sampled_from((3, 8, 64, 2048))),
        "numerics": draw(st.booleans()),
        "before": [] if long else draw(st.lists(_ops(streams, events, False), max_size=12)),
        "block": draw(st.lists(_ops(streams, 0, True), min_size=1, max_size=5)),
        "repeat": draw(st.integers(150, 300) if long else st.sampled_from((0, 1, 5, 60))),
        "rotate": long or draw(st.booleans()),
        "after": [] if long else draw(st.lists(_ops(streams, events, False), max_size=8)),
    }


def run(program: dict, fast: bool):
    """Run ``program`` at one speed: the RunResult, the host's memory at the end, and the stamped task count."""
    p = load_profile("ascend910b1")
    profile = dataclasses.replace(p, limits=dataclasses.replace(p.limits, stream_depth=program["depth"]))
    sim = Simulation(profile, numerics=program["numerics"], fast=fast)
    acl = sim.acl
    acl.init()
    acl.rt.set_device(0)
    handles = [acl.rt.create_stream_with_config(pr, 0)[0] for pr in program["priorities"]]
    events = [acl.rt.create_event()[0] for _ in range(program["events"])]
    rng = np.random.default_rng(7)
    dev = [[acl.rt.malloc(NBYTES, 0)[0] for _ in range(3)] for _ in range(SETS)]
    pinned, pageable = [], []
    for _ in range(SETS):
        ptr, _ret = acl.rt.malloc_host(NBYTES)
        acl.util.ptr_to_numpy(ptr, (N, N), np.float16)[:] = rng.uniform(-1, 1, (N, N)).astype(np.float16)
        pinned.append(ptr)
        pageable.append(rng.uniform(-1, 1, (N, N)).astype(np.float16))
    host = HostCallLog(sim) if fast else acl
    rets = []
    recorded = [False] * len(events)  # a wait for an event never recorded is a deadlock: not generated

    def do(op):
        kind = op[0]
        if kind == "h2d":
            _k, s, b, from_pageable, half = op
            count = NBYTES // 2 if half else NBYTES
            src = pageable[b] if from_pageable else pinned[b]
            rets.append(host.rt.memcpy_async(dev[b][0], NBYTES, src, count, ACL_MEMCPY_HOST_TO_DEVICE, handles[s]))
            rets.append(host.rt.memcpy_async(dev[b][1], NBYTES, src, NBYTES, ACL_MEMCPY_HOST_TO_DEVICE, handles[s]))
        elif kind == "d2h":
            _k, s, b, to_pageable = op
            dst = pageable[b] if to_pageable else pinned[b]
            rets.append(host.rt.memcpy_async(dst, NBYTES, dev[b][2], NBYTES, ACL_MEMCPY_DEVICE_TO_HOST, handles[s]))
        elif kind == "matmul":
            _k, s, b = op
            rets.append(host.op.matmul(dev[b][0], dev[b][1], dev[b][2], N, N, N, handles[s]))
        elif kind == "vector":
            _k, s, b, blocks = op
            x, z = asc.GlobalAddress(dev[b][0]), asc.GlobalAddress(dev[b][2])
            rets.append(host.rt.launch_kernel(double_kernel, blocks, handles[s], x, z, N * N // 8))
        elif kind == "sync_stream":
            rets.append(host.rt.synchronize_stream(handles[op[1]]))
        elif kind == "sync_device":
            rets.append(host.rt.synchronize_device())
        elif kind == "record":
            recorded[op[1]] = True
            rets.append(host.rt.record_event(events[op[1]], handles[op[2]]))
        elif kind == "wait" and recorded[op[2]]:
            rets.append(host.rt.stream_wait_event(handles[op[1]], events[op[2]]))
        elif kind == "sync_event" and recorded[op[1]]:
            rets.append(host.rt.synchronize_event(events[op[1]]))

    for op in program["before"]:
        do(op)
    streams = len(handles)
    for i in range(program["repeat"]):
        for op in program["block"]:
            if program["rotate"] and op[0] in ("h2d", "d2h", "matmul"):  # batch i on stream i % streams
                do((op[0], (op[1] + i) % streams, *op[2:]))
            else:
                do(op)
    for op in program["after"]:
        do(op)
    rets.append(host.rt.synchronize_device())
    if fast:
        host.finish()
    result = sim.finish()
    memory = [acl.util.ptr_to_numpy(p, (N, N), np.float16).copy() for p in pinned] + [a.copy() for a in pageable]
    stamped = sim.runtime.stamper.stamped if sim.runtime.stamper is not None else 0
    return result, rets, memory, stamped


def canonical(result) -> dict:
    """Every table and array of ``run_to_doc`` with ids resolved to what they name."""
    doc, arrays = run_to_doc(result)
    names, srcs = doc["names"], doc["srcs"]
    lanes = [f"{lane['process']}/{lane['thread']}:{lane['kind']}" for lane in doc["lanes"]]
    details = [repr(d) for d in doc["details"]]
    col = {k[4:]: v.tolist() for k, v in arrays.items() if k.startswith("col_")}
    n = len(col["start"])

    def detail(d: int) -> str:
        if d < 0:
            return ""
        if d >= 1 << 30:
            return f"task {d - (1 << 30)}"
        return details[d]

    def key(i: int) -> tuple:
        return (
            col["start"][i],
            col["end"][i],
            lanes[col["lane"][i]],
            col["kind"][i],
            names[col["name"][i]],
            col["nbytes"][i],
            srcs[col["src"][i]] if col["src"][i] >= 0 else "",
            detail(col["detail"][i]),
        )

    rows = [(*key(i), col["cause"][i]) for i in range(n)]  # in order: a cause is a row number
    tasks = [
        dict(
            zip(
                ("seq", "stream", "stream_label", "kind", "name", "label", "src", "submit", "start", "end"),
                r[:10],
                strict=True,
            ),
            name=names[r[4]],
            src=srcs[r[6]] if r[6] >= 0 else "",
            rest=r[10:],
        )
        for r in doc["tasks"]
    ]
    return {
        "rows": rows,
        "task_table": {k: v.tolist() for k, v in arrays.items() if k.startswith("task_")},
        "tasks": tasks,
        "lanes": sorted(lanes),
        "findings": doc["findings"],
        "totals": (doc["end_ps"], doc["host_end_ps"], doc["device_events"]),
        "extra": doc["extra"],
        "gm": doc["gm"],
        "tables": (sorted(names), sorted(srcs), sorted(details)),
    }


def assert_same(program: dict) -> int:
    slow, slow_rets, slow_memory, _ = run(program, fast=False)
    fast, fast_rets, fast_memory, stamped = run(program, fast=True)
    assert slow_rets == fast_rets
    a, b = canonical(slow), canonical(fast)
    for key in a:
        assert a[key] == b[key], key
    if program["numerics"]:
        for x, y in zip(slow_memory, fast_memory, strict=True):
            assert x.tobytes() == y.tobytes()
    return stamped


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs())
def test_random_programs_run_the_same_at_both_speeds(program):
    event(f"stamped: {'yes' if assert_same(program) else 'no'}")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs(long=True))
def test_long_repeated_programs_run_the_same(program):
    """Hundreds of repetitions of copies and matmuls on several streams: the fast mode stamps those whose device
    settles into a period (not every one does: a backlog that keeps growing never repeats its state)."""
    event(f"stamped: {'yes' if assert_same(program) else 'no'}")


def test_a_pipeline_is_stamped_and_runs_the_same():
    """Copy in, matmul, copy out, batch i on stream i % 2: the device settles, the fast mode stamps it."""
    batch = [("h2d", 0, 0, False, False), ("matmul", 0, 0), ("d2h", 0, 0, False)]
    program = {"priorities": [0, 0], "events": 0, "depth": 2048, "numerics": True, "before": [], "after": []}
    assert assert_same({**program, "block": batch, "repeat": 200, "rotate": True}) > 0
