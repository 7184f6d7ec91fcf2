"""The fast path of the pipeline scenario without numerics: same events, a hundred times faster.

A call-by-call run costs ~15 us of Python per ``memcpy_async`` (argument checks, pointer lookups,
task objects) and ~3 us per device task. For thousands of small batches that is the whole cost,
so the batch loop here does what the calls would do, and nothing else:

* host calls advance the host clock by their profile cost and become rows, in numpy, at the end;
* device tasks are plain integers in lists (stream, resource, duration, submit time), run by a
  lean copy of the runtime's event loop: one heap of (time, seq, what) — arrivals at submit time,
  finishes at end time — FIFO streams, copy engines and the core array as pools granted by
  (priority, submission order), the host blocking when a stream holds ``stream_depth`` tasks or
  a pageable copy must finish, exactly as :mod:`engine.runtime` does;
* set-up and tear-down (init, streams, device buffers, frees) still go through the pyACL calls.

A test runs both paths on small cases (pinned and pageable, deep and shallow streams) and checks
the traces agree event for event. Row order among events that start at the same instant may
differ; start, end, lane, kind, name and bytes do not.
"""

from __future__ import annotations

from collections import deque
from heapq import heappop, heappush

import numpy as np

from ..copy_engine import D2H, H2D
from ..op_matmul import OpMatmul
from ..simulation import Simulation
from ..trace import NO_SLOT, Kind
from . import Outcome
from .host_lifecycle import check_ret
from .pipeline import open_device

_ARRIVE, _FINISH = 0, 1
_H2D, _D2H, _CORES = 0, 1, 2


class _LeanDevice:
    """The runtime's scheduling rules for copies and op-level kernels on FIFO streams."""

    def __init__(self, sim: Simulation, streams: int, pageable: bool, kernel: OpMatmul, n_bytes: int) -> None:
        rt = sim.runtime
        host = sim.profile.host
        self.heap: list[tuple[int, int, int, int]] = []
        self.seq = 0
        self.now = 0
        self.queues = [deque() for _ in range(streams)]
        self.running = [-1] * streams
        pinned = not pageable
        self.dur = [
            rt.link.duration(H2D, pinned, n_bytes),
            rt.link.duration(D2H, pinned, n_bytes),
            max(1, round(kernel.seconds * 1e12)),
        ]
        self.kernel_start = rt.kernel_start_ps
        units = [host.copy_engines_h2d, host.copy_engines_d2h, 1]  # an op-level kernel takes every core
        self.free = [list(range(u)) for u in units]
        self.waiting: list[list[tuple[int, int]]] = [[], [], []]
        # per task
        self.t_stream: list[int] = []
        self.t_res: list[int] = []
        self.t_submit: list[int] = []
        self.t_start: list[int] = []
        self.t_end: list[int] = []
        self.t_unit: list[int] = []
        self.finish_order: list[int] = []

    def pending(self, s: int) -> int:
        return len(self.queues[s]) + (self.running[s] >= 0)

    def submit(self, stream: int, res: int, when: int) -> int:
        t = len(self.t_stream)
        self.t_stream.append(stream)
        self.t_res.append(res)
        self.t_submit.append(when)
        self.t_start.append(-1)
        self.t_end.append(-1)
        self.t_unit.append(-1)
        queue = self.queues[stream]
        if self.running[stream] < 0 and not queue:
            queue.append(t)
            self._schedule(when, _ARRIVE, stream)
        else:
            queue.append(t)
        return t

    def _schedule(self, time: int, what: int, arg: int) -> None:
        heappush(self.heap, (time, self.seq, what, arg))
        self.seq += 1

    def _advance(self, s: int) -> None:
        queue = self.queues[s]
        if not queue:
            return
        t = queue[0]
        if self.t_submit[t] > self.now:
            self._schedule(self.t_submit[t], _ARRIVE, s)
            return
        queue.popleft()
        self.running[s] = t
        res = self.t_res[t]
        free, waiting = self.free[res], self.waiting[res]
        if res != _CORES and free and not waiting:
            self._start(t, heappop(free))
        else:
            heappush(waiting, (t, t))  # equal priorities: submission order
            self._dispatch(res)

    def _dispatch(self, res: int) -> None:
        free, waiting = self.free[res], self.waiting[res]
        while free and waiting:
            self._start(heappop(waiting)[1], heappop(free))

    def _start(self, t: int, unit: int) -> None:
        self.t_unit[t] = unit
        self.t_start[t] = self.now
        res = self.t_res[t]
        end = self.now + self.dur[res] + (self.kernel_start if res == _CORES else 0)
        self._schedule(end, _FINISH, t)

    def _finish(self, t: int) -> None:
        self.t_end[t] = self.now
        self.finish_order.append(t)
        res = self.t_res[t]
        heappush(self.free[res], self.t_unit[t])
        self._dispatch(res)
        s = self.t_stream[t]
        self.running[s] = -1
        self._advance(s)

    def step(self) -> bool:
        if not self.heap:
            return False
        time, _seq, what, arg = heappop(self.heap)
        self.now = time
        if what == _ARRIVE:
            if self.running[arg] < 0:
                self._advance(arg)
        else:
            self._finish(arg)
        return True

    def run_until(self, done) -> None:
        while not done():
            if not self.step():
                raise RuntimeError("pipeline fast path: the device stopped with work pending")


def run_bulk(sim: Simulation, n: int, batches: int, streams: int, pageable: bool) -> Outcome:
    """The pipeline scenario's program, timing only, with the batch loop in bulk."""
    acl = sim.acl
    nbytes = n * n * 2
    handles, dev = open_device(acl, streams, nbytes)
    kernel = OpMatmul.plan(sim, dev[0][0], dev[0][1], dev[0][2], n, n, n, "fp16")

    host = sim.profile.host
    stream_objs = [sim.stream(h, "pipeline") for h in handles]
    rows = _HostRows(sim)
    if not pageable:
        rows.calls("acl.rt.malloc_host", 3 * batches, host.malloc_us)

    lean = _LeanDevice(sim, streams, pageable, kernel, nbytes)
    depth = sim.profile.limits.stream_depth
    memcpy_ps, launch_ps = sim.us(host.memcpy_call_us), sim.us(host.launch_call_us)
    plan = (
        (memcpy_ps, _H2D, "acl.rt.memcpy_async"),
        (memcpy_ps, _H2D, "acl.rt.memcpy_async"),
        (launch_ps, _CORES, "acl.op.matmul"),
        (memcpy_ps, _D2H, "acl.rt.memcpy_async"),
    )
    task_call: list[int] = []
    for i in range(batches):
        s = i % streams
        if not i % 4096:  # progress: the host rows so far and two rows per task submitted
            sim.trace.progress(len(rows.start) + 2 * len(task_call))
        for cost, res, name in plan:
            call = rows.call(name, cost)
            if lean.pending(s) >= depth:
                rows.wait(
                    call, f"room in {stream_objs[s].label} (depth {depth})", lambda s=s: lean.pending(s) < depth, lean
                )
            t = lean.submit(s, res, sim.host_now)
            task_call.append(call)
            if pageable and res != _CORES:
                rows.wait(
                    call, "a pageable copy (staged through a pinned buffer)", lambda t=t: lean.t_end[t] >= 0, lean
                )
    for s in range(streams):
        call = rows.call("acl.rt.synchronize_stream", sim.us(host.sync_call_us))
        rows.wait(call, f"{stream_objs[s].label} to drain", lambda s=s: lean.pending(s) == 0, lean)
    first = rows.flush()
    _device_rows(sim, lean, kernel, stream_objs, task_call, first, rows.src)
    sim.clock.now = max(sim.clock.now, lean.now)

    for bufs in dev:
        for p in bufs:
            check_ret(acl.rt.free(p), "acl.rt.free")
    if not pageable:
        _HostRows(sim).calls("acl.rt.free_host", 3 * batches, host.free_us, flush=True)
    for s in handles:
        check_ret(acl.rt.destroy_stream(s), "acl.rt.destroy_stream")
    check_ret(acl.rt.reset_device(0), "acl.rt.reset_device")
    check_ret(acl.finalize(), "acl.finalize")
    return Outcome(None, {"fast_path": True})


class _HostRows:
    """Host-thread rows of the bulk section, collected in lists and appended as one chunk."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.src = sim.caller_src(2)
        self.start: list[int] = []
        self.end: list[int] = []
        self.kind: list[int] = []
        self.name: list[int] = []
        self.cause: list[int] = []
        self._names: dict[str, int] = {}

    def _name(self, text: str) -> int:
        ident = self._names.get(text)
        if ident is None:
            ident = self._names[text] = self.sim.trace.name(text)
        return ident

    def call(self, name: str, cost_ps: int) -> int:
        sim = self.sim
        t = sim.host_now
        sim.host_now = t + cost_ps
        self.start.append(t)
        self.end.append(t + cost_ps)
        self.kind.append(Kind.CALL)
        self.name.append(self._name(name))
        self.cause.append(-1)
        return len(self.start) - 1

    def calls(self, name: str, count: int, cost_us: float, flush: bool = False) -> None:
        """``count`` back-to-back calls of one kind, as columns (appended at once with ``flush``)."""
        sim = self.sim
        cost = sim.us(cost_us)
        starts = sim.host_now + cost * np.arange(count, dtype=np.int64)
        sim.host_now += cost * count
        cols = (starts, starts + cost, self._name(name))
        if flush:
            sim.trace.extend(
                start=starts,
                end=starts + cost,
                lane=np.full(count, sim.host_lane, dtype=np.int16),
                kind=np.full(count, Kind.CALL, dtype=np.uint8),
                name=np.full(count, cols[2], dtype=np.int16),
                src=np.full(count, self.src, dtype=np.int32),
            )
            return
        self.start.extend(cols[0].tolist())
        self.end.extend(cols[1].tolist())
        self.kind.extend([Kind.CALL] * count)
        self.name.extend([cols[2]] * count)
        self.cause.extend([-1] * count)

    def wait(self, call: int, what: str, done, lean: _LeanDevice) -> None:
        """The host blocks until ``done()``; the call's row stretches over the wait (as ApiCall does)."""
        sim = self.sim
        if done():
            return
        start = sim.host_now
        lean.run_until(done)
        end = max(start, lean.now)
        if end > start:
            self.start.append(start)
            self.end.append(end)
            self.kind.append(Kind.WAIT)
            self.name.append(self._name(f"wait: {what}"))
            self.cause.append(call)
            sim.host_now = end
            self.end[call] = end

    def flush(self) -> int:
        """Append the collected rows; returns the trace row of the first one."""
        first = len(self.sim.trace)
        cause = np.asarray(self.cause, dtype=np.int32)
        cause[cause >= 0] += first
        self.sim.trace.extend(
            start=np.asarray(self.start, dtype=np.int64),
            end=np.asarray(self.end, dtype=np.int64),
            lane=np.full(len(self.start), self.sim.host_lane, dtype=np.int16),
            kind=np.asarray(self.kind, dtype=np.uint8),
            name=np.asarray(self.name, dtype=np.int16),
            src=np.full(len(self.start), self.src, dtype=np.int32),
            cause=cause,
        )
        return first


def _device_rows(
    sim: Simulation, lean: _LeanDevice, kernel: OpMatmul, streams, task_call: list[int], first_host_row: int, src: int
) -> None:
    """Two rows per task (its stream and its engine or the kernel lane), in the order tasks finished."""
    rt = sim.runtime
    trace = sim.trace
    order = np.asarray(lean.finish_order, dtype=np.int64)
    res = np.asarray(lean.t_res, dtype=np.int64)[order]
    start = np.asarray(lean.t_start, dtype=np.int64)[order]
    end = np.asarray(lean.t_end, dtype=np.int64)[order]
    unit = np.asarray(lean.t_unit, dtype=np.int64)[order]
    stream_lane = np.array([s.lane for s in streams], dtype=np.int16)[np.asarray(lean.t_stream)[order]]
    cause = np.asarray(task_call, dtype=np.int32)[order] + first_host_row
    pools = rt.pools
    engine_lanes = {_H2D: np.array(pools[H2D].lanes, dtype=np.int16), _D2H: np.array(pools[D2H].lanes, dtype=np.int16)}
    names = np.array([trace.name("H2D copy"), trace.name("D2H copy"), trace.name(kernel.name)], dtype=np.int16)
    is_kernel = res == _CORES
    second_lane = np.full(len(order), rt.op_lane(), dtype=np.int16)
    for r, lanes in engine_lanes.items():
        sel = res == r
        second_lane[sel] = lanes[unit[sel]]
    nbytes = np.where(is_kernel, kernel.nbytes, np.where(res == _H2D, kernel.m * kernel.k * 2, kernel.m * kernel.n * 2))
    flops = np.where(is_kernel, kernel.flops, 0)
    kind = np.where(is_kernel, Kind.KERNEL, Kind.COPY).astype(np.uint8)
    second_start = np.where(is_kernel, start + lean.kernel_start, start)
    count = len(order)
    trace.extend(
        start=np.concatenate([start, second_start]),
        end=np.concatenate([end, end]),
        lane=np.concatenate([stream_lane, second_lane]),
        kind=np.concatenate([kind, kind]),
        name=np.concatenate([names[res], names[res]]),
        nbytes=np.concatenate([nbytes, nbytes]),
        flops=np.concatenate([flops, flops]),
        cause=np.concatenate([cause, cause]),
        src=np.full(2 * count, src, dtype=np.int32),
        buf=np.zeros(2 * count, dtype=np.uint8),
        slot=np.full(2 * count, NO_SLOT, dtype=np.uint8),
    )
