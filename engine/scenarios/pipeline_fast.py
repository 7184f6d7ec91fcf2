"""The bulk host: the pipeline's batch section, timing only, at a fraction of the cost per call.

A call-by-call run costs ~15 us of Python per ``memcpy_async`` (context managers, task objects,
the event core) and ~3 us per device task. For thousands of small batches that is the whole cost,
so a timing-only run hands the batch section of the *same* host program (``host_buffers``,
``submit_batch``, the synchronisations and ``free_host`` in :mod:`engine.scenarios.pipeline`) a
:class:`BulkHost` instead of ``sim.acl``. It implements the calls that section makes, with the
same checks where they matter (``Simulation.plan_copy``, ``OpMatmul.plan``, the real host
allocator, the real streams' vector clocks), and keeps what they produce in lists:

* host calls advance the host clock by their profile cost and become rows at the end, each with
  the source line that made it;
* device tasks are integers in lists (stream, resource, duration, submit time) run by
  :class:`_LeanDevice`, the runtime's scheduling rules for copies and op-level kernels: FIFO
  streams, copy engines and the core array granted by (priority, submission order), the host
  blocking when a stream holds ``stream_depth`` tasks or a pageable copy must finish;
* every task gets its task-table entry, its two rows (stream lane and engine / kernel lane) and its
  :class:`~engine.stream.TaskRecord` (reads, writes, vector clock) for the cross-stream check.

``tests/test_pipeline_fast.py`` runs both hosts on small cases (pinned and pageable, deep and
shallow streams, one sync per batch) and checks every column of every row, the task table and the
task records agree. A call the bulk host does not implement is an AttributeError, not a silent
difference.
"""

from __future__ import annotations

from collections import deque
from heapq import heappop, heappush
from types import MappingProxyType

import numpy as np

from ..acl_codes import ACL_SUCCESS
from ..copy_engine import D2H, H2D
from ..detail import HostWait
from ..op_matmul import OpMatmul
from ..stream import TaskKind, TaskRecord
from ..trace import Kind

_ARRIVE, _FINISH = 0, 1
_H2D, _D2H, _CORES = 0, 1, 2
_DIRECTION = MappingProxyType({H2D: _H2D, D2H: _D2H})


class _LeanDevice:
    """The runtime's scheduling rules for copies and op-level kernels on FIFO streams, on integers."""

    def __init__(self, sim, streams: int) -> None:
        host = sim.profile.host
        self.heap: list[tuple[int, int, int, int]] = []
        self.seq = 0
        self.now = sim.clock.now
        self.queues = [deque() for _ in range(streams)]
        self.running = [-1] * streams
        self.priority = [0] * streams
        self.kernel_start = sim.runtime.kernel_start_ps
        units = [host.copy_engines_h2d, host.copy_engines_d2h, 1]  # an op-level kernel takes every core
        self.free = [list(range(u)) for u in units]
        self.waiting: list[list[tuple[int, int]]] = [[], [], []]
        # per task
        self.t_stream: list[int] = []
        self.t_res: list[int] = []
        self.t_dur: list[int] = []
        self.t_submit: list[int] = []
        self.t_start: list[int] = []
        self.t_end: list[int] = []
        self.t_unit: list[int] = []
        self.finish_order: list[int] = []

    def pending(self, s: int) -> int:
        return len(self.queues[s]) + (self.running[s] >= 0)

    def submit(self, stream: int, res: int, duration: int, when: int) -> int:
        t = len(self.t_stream)
        self.t_stream.append(stream)
        self.t_res.append(res)
        self.t_dur.append(duration)
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
            heappush(waiting, (self.priority[s], t, t))  # by stream priority, then submission order
            self._dispatch(res)

    def _dispatch(self, res: int) -> None:
        free, waiting = self.free[res], self.waiting[res]
        while free and waiting:
            self._start(heappop(waiting)[2], heappop(free))

    def _start(self, t: int, unit: int) -> None:
        self.t_unit[t] = unit
        self.t_start[t] = self.now
        res = self.t_res[t]
        end = self.now + self.t_dur[t] + (self.kernel_start if res == _CORES else 0)
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
                raise RuntimeError("pipeline bulk host: the device stopped with work pending")


class BulkHost:
    """Stands in for ``sim.acl`` in a timing-only batch section (``acl.rt.*`` and ``acl.op.matmul``).

    Implements ``rt.malloc_host``, ``rt.free_host``, ``rt.memcpy_async`` (host <-> device),
    ``op.matmul`` and ``rt.synchronize_stream``; :meth:`finish` appends everything to the trace.
    """

    def __init__(self, sim) -> None:
        self.sim = sim
        self.rt = self
        self.op = self
        host = sim.profile.host
        self._cost = {
            "acl.rt.malloc_host": sim.us(host.malloc_us),
            "acl.rt.free_host": sim.us(host.free_us),
            "acl.rt.memcpy_async": sim.us(host.memcpy_call_us),
            "acl.op.matmul": sim.us(host.launch_call_us),
            "acl.rt.synchronize_stream": sim.us(host.sync_call_us),
        }
        self._names: dict[str, int] = {}
        self._lean_of: dict[int, int] = {}  # stream ident -> lean stream index
        self._streams: list = []
        self._kernels: dict[tuple, OpMatmul] = {}
        self.lean = _LeanDevice(sim, len(sim.runtime.streams))
        # host rows
        self.start: list[int] = []
        self.end: list[int] = []
        self.kind: list[int] = []
        self.name: list[int] = []
        self.cause: list[int] = []
        self.src: list[int] = []
        self.detail: list[int] = []
        # per task (aligned with the lean device's lists)
        self.t_call: list[int] = []
        self.t_detail: list[int] = []
        self.t_name: list[int] = []
        self.t_nbytes: list[int] = []
        self.t_record: list[tuple] = []

    # -- rows ---------------------------------------------------------------------------------------
    def _name_id(self, text: str) -> int:
        ident = self._names.get(text)
        if ident is None:
            ident = self._names[text] = self.sim.trace.name(text)
        return ident

    def _call(self, name: str) -> int:
        """A host call's row, with the source line of the program that made it."""
        sim = self.sim
        t = sim.host_now
        sim.host_now = t + self._cost[name]
        self.start.append(t)
        self.end.append(sim.host_now)
        self.kind.append(Kind.CALL)
        self.name.append(self._name_id(name))
        self.cause.append(-1)
        self.src.append(sim.caller_src(1))  # this module is the simulator's own: the program's line
        self.detail.append(-1)
        row = len(self.start) - 1
        if not row % 4096:  # progress: the host rows so far and two rows per task submitted
            sim.trace.progress(row + 2 * len(self.t_call))
        return row

    def _wait(self, call: int, what: str, on: HostWait, done) -> None:
        """The host blocks until ``done()``; the call's row stretches over the wait (as ApiCall does)."""
        sim = self.sim
        if done():
            return
        start = sim.host_now
        self.lean.run_until(done)
        end = max(start, self.lean.now)
        if end > start:
            self.start.append(start)
            self.end.append(end)
            self.kind.append(Kind.WAIT)
            self.name.append(self._name_id(f"wait: {what}"))
            self.cause.append(call)
            self.src.append(self.src[call])
            self.detail.append(sim.trace.detail(on))
            sim.host_now = end
            self.end[call] = end

    def _stream(self, handle: int, what: str):
        stream = self.sim.stream(handle, what)
        lean = self._lean_of.get(stream.ident)
        if lean is None:
            lean = self._lean_of[stream.ident] = len(self._streams)
            self._streams.append(stream)
            self.lean.priority[lean] = stream.priority
        return stream, lean

    # -- tasks --------------------------------------------------------------------------------------
    def _task(
        self,
        call: int,
        stream,
        s: int,
        kind: TaskKind,
        res: int,
        duration: int,
        name: str,
        nbytes: int,
        reads: tuple,
        writes: tuple,
        label: str,
        direction: str = "",
    ) -> int:
        sim = self.sim
        depth = sim.profile.limits.stream_depth
        lean = self.lean
        if lean.pending(s) >= depth:
            self._wait(
                call,
                f"room in {stream.label} (depth {depth})",
                HostWait("room", stream.ident),
                lambda: lean.pending(s) < depth,
            )
        rt = sim.runtime
        rt._seq += 1
        stream.submitted += 1
        vc = dict(stream.vc)
        for k, v in rt.host_vc.items():
            if vc.get(k, 0) < v:
                vc[k] = v
        stream.count += 1
        vc[stream.ident] = stream.count
        stream.vc = vc
        submit = sim.host_now
        t = lean.submit(s, res, duration, submit)
        self.t_call.append(call)
        self.t_detail.append(sim.trace.task(rt._seq, stream.ident, int(kind), submit, -1, direction))
        self.t_name.append(self._name_id(name))
        self.t_nbytes.append(nbytes)
        self.t_record.append((rt._seq, stream, kind, label, submit, reads, writes, tuple(sorted(vc.items()))))
        return t

    # -- the calls ----------------------------------------------------------------------------------
    def malloc_host(self, size: int) -> tuple[int, int]:
        call = self._call("acl.rt.malloc_host")
        sim = self.sim
        return sim.hostmem.malloc_host(size, sim.trace.srcs.items[self.src[call]]).ptr, ACL_SUCCESS

    def free_host(self, ptr: int) -> int:
        call = self._call("acl.rt.free_host")
        sim = self.sim
        sim.hostmem.free_host(ptr, sim.trace.srcs.items[self.src[call]])
        return ACL_SUCCESS

    def memcpy_async(self, dst, dst_max: int, src, count: int, kind: int, stream: int) -> int:
        call = self._call("acl.rt.memcpy_async")
        sim = self.sim
        s_obj, s = self._stream(stream, "memcpy_async")
        plan, dst_alloc, src_alloc = sim.plan_copy(dst, dst_max, src, count, kind, "memcpy_async")
        res = _DIRECTION[plan.direction]  # H2H and D2D are not part of the batch section: KeyError
        duration = sim.link.duration(plan.direction, plan.pinned, plan.count)
        reads = (_range(src_alloc, plan.count),)
        writes = (_range(dst_alloc, plan.count),)
        label = f"{plan.direction} copy of {plan.count} B on {s_obj.label}"
        t = self._task(
            call,
            s_obj,
            s,
            TaskKind.COPY,
            res,
            duration,
            f"{plan.direction} copy",
            plan.count,
            reads,
            writes,
            label,
            plan.direction,
        )
        if not plan.pinned:
            lean = self.lean
            self._wait(
                call,
                "a pageable copy (staged through a pinned buffer)",
                HostWait("pageable", self._seq_of(t)),
                lambda: lean.t_end[t] >= 0,
            )
            vc = dict(self.t_record[t][7])
            for k, v in vc.items():
                if sim.runtime.host_vc.get(k, 0) < v:
                    sim.runtime.host_vc[k] = v
        return ACL_SUCCESS

    def matmul(self, a: int, b: int, c: int, m: int, n: int, k: int, stream: int, out_dtype: str = "fp16") -> int:
        call = self._call("acl.op.matmul")
        s_obj, s = self._stream(stream, "matmul")
        key = (a, b, c, m, n, k, out_dtype)
        kernel = self._kernels.get(key)
        if kernel is None:
            kernel = self._kernels[key] = OpMatmul.plan(self.sim, a, b, c, m, n, k, out_dtype)
        duration = max(1, round(kernel.seconds * 1e12))
        t = self._task(
            call,
            s_obj,
            s,
            TaskKind.KERNEL,
            _CORES,
            duration,
            kernel.name,
            kernel.nbytes,
            tuple(kernel.reads),
            tuple(kernel.writes),
            f"kernel {kernel.name} on {s_obj.label}",
        )
        self.sim.trace.set_task_flops(self.t_detail[t], kernel.flops)
        return ACL_SUCCESS

    def synchronize_stream(self, stream: int) -> int:
        call = self._call("acl.rt.synchronize_stream")
        s_obj, s = self._stream(stream, "synchronize_stream")
        lean = self.lean
        self._wait(call, f"{s_obj.label} to drain", HostWait("stream", s_obj.ident), lambda: lean.pending(s) == 0)
        rt = self.sim.runtime
        for k, v in s_obj.vc.items():
            if rt.host_vc.get(k, 0) < v:
                rt.host_vc[k] = v
        return ACL_SUCCESS

    def _seq_of(self, t: int) -> int:
        return self.t_record[t][0]

    # -- the end ------------------------------------------------------------------------------------
    def finish(self) -> None:
        """Append the section's rows (host first, then two per task in the order tasks finished), add the
        task records, and move the device clock to where the section left it."""
        sim = self.sim
        trace = sim.trace
        first = len(trace)
        cause = np.asarray(self.cause, dtype=np.int32)
        cause[cause >= 0] += first
        n_host = len(self.start)
        trace.extend(
            start=np.asarray(self.start, dtype=np.int64),
            end=np.asarray(self.end, dtype=np.int64),
            lane=np.full(n_host, sim.host_lane, dtype=np.int16),
            kind=np.asarray(self.kind, dtype=np.uint8),
            name=np.asarray(self.name, dtype=np.int16),
            src=np.asarray(self.src, dtype=np.int32),
            cause=cause,
            detail=np.asarray(self.detail, dtype=np.int32),
        )
        self._device_rows(first)
        lean = self.lean
        src = self.src
        for t, (seq, stream, kind, label, submit, reads, writes, vc) in enumerate(self.t_record):
            sim.runtime.records.append(
                TaskRecord(
                    seq,
                    stream.ident,
                    stream.label,
                    kind,
                    self.t_name[t],
                    label,
                    src[self.t_call[t]],
                    submit,
                    lean.t_start[t],
                    lean.t_end[t],
                    reads,
                    writes,
                    vc,
                )
            )
        sim.clock.now = max(sim.clock.now, lean.now)

    def _device_rows(self, first_host_row: int) -> None:
        sim = self.sim
        rt = sim.runtime
        lean = self.lean
        order = np.asarray(lean.finish_order, dtype=np.int64)
        if not len(order):
            return
        res = np.asarray(lean.t_res, dtype=np.int64)[order]
        start = np.asarray(lean.t_start, dtype=np.int64)[order]
        end = np.asarray(lean.t_end, dtype=np.int64)[order]
        unit = np.asarray(lean.t_unit, dtype=np.int64)[order]
        stream_lanes = np.array([s.lane for s in self._streams], dtype=np.int16)
        stream_lane = stream_lanes[np.asarray(lean.t_stream)[order]]
        calls = np.asarray(self.t_call, dtype=np.int64)[order]
        cause = (calls + first_host_row).astype(np.int32)
        src = np.asarray(self.src, dtype=np.int32)[calls]
        second_lane = np.full(len(order), rt.op_lane(), dtype=np.int16)
        for r, direction in ((_H2D, H2D), (_D2H, D2H)):
            sel = res == r
            second_lane[sel] = np.array(rt.pools[direction].lanes, dtype=np.int16)[unit[sel]]
        is_kernel = res == _CORES
        kind = np.where(is_kernel, Kind.KERNEL, Kind.COPY).astype(np.uint8)
        second_start = np.where(is_kernel, start + lean.kernel_start, start)
        name = np.asarray(self.t_name, dtype=np.int16)[order]
        nbytes = np.asarray(self.t_nbytes, dtype=np.int64)[order]
        detail = np.asarray(self.t_detail, dtype=np.int32)[order]

        def twice(x: np.ndarray) -> np.ndarray:
            return np.concatenate([x, x])

        sim.trace.extend(
            start=np.concatenate([start, second_start]),
            end=twice(end),
            lane=np.concatenate([stream_lane, second_lane]),
            kind=twice(kind),
            name=twice(name),
            nbytes=twice(nbytes),
            cause=twice(cause),
            src=twice(src),
            detail=twice(detail),
        )


def _range(side: tuple, count: int) -> tuple[tuple[str, int], int, int]:
    alloc, off = side
    return (alloc.where, alloc.ident), off, off + count
