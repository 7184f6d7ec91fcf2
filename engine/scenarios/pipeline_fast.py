"""The bulk host: the pipeline's batch section at a fraction of the cost per call.

A call-by-call run costs ~15 us of Python per ``memcpy_async`` (context managers, task objects,
the event core) and ~3 us per device task. For thousands of small batches that is the whole cost,
so the fast path hands the batch section of the *same* host program (``host_buffers``,
``submit_batch``, the synchronisations and ``free_host`` in :mod:`engine.scenarios.pipeline`) a
:class:`BulkHost` instead of ``sim.acl``. It implements the calls that section makes in two halves:

* **the call** does at once what decides its return value: the checks of the call-by-call host
  (initialised, device set, a live stream, ``Simulation.plan_copy``'s rules for pointers, sizes and
  kinds, ``OpMatmul.plan``), answered from what the call site and arguments decided before (its
  source line, stream, plan) plus a lookup of each pointer, and by the simulator's own code for
  anything new; and the real host allocator. Then it logs one integer (its call site, its kind and
  its *plan*: the stream, engine, duration, bytes and names every call of its kind on its stream
  shares) and, for a copy, what it reads and writes.
* :meth:`BulkHost.flush` (at the end, before a call that fails, and with numerics at each
  synchronize) plays the log: the host clock advances by each call's profile cost (numpy prefix
  sums); the calls that meet the device run the runtime's scheduling rules on integers
  (:mod:`engine.scenarios.lean_device`: FIFO streams, copy engines and the core array granted by
  (priority, submission order), the host blocking when a stream holds ``stream_depth`` tasks, a
  pageable copy must finish or a stream must drain, the device advanced lazily, only as far as a
  waiting host needs, exactly as ``Simulation.host_block_until`` does, and stamped ahead once its
  state repeats). Every call and wait becomes its row, every
  task its task-table entry, its two rows (stream lane and engine / kernel lane) and its
  :class:`~engine.stream.TaskRecord` (reads, writes, vector clock, for the cross-stream check), built
  when read from the columns of a :class:`BulkTasks`. With numerics, the tasks that finished move
  their bytes and compute their matmuls in the order the device finished them (as the runtime does
  at each task's end), so what the host reads after a synchronize is there.

A failing call plays the log, then goes through the call-by-call host's error handling
(:class:`~engine.simulation.ApiCall`): the same call row, error row, finding and return code.
``tests/test_pipeline_fast.py`` runs both hosts on small cases (pinned and pageable, deep and shallow
streams, one sync per batch, with and without numerics, failing calls) and checks every column of
every row, the task table, the task records, the findings and the numbers agree. A call the bulk
host does not implement is an AttributeError, not a silent difference.
"""

from __future__ import annotations

from dataclasses import dataclass
from sys import _getframe

import numpy as np

from ..acl_codes import ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE, ACL_SUCCESS, AclError
from ..copy_engine import D2H, H2D
from ..detail import HostWait
from ..op_matmul import OpMatmul
from ..stream import TaskKind, TaskRecord
from ..trace import DIRECTIONS, Kind
from .lean_device import LeanDevice

# the calls, in the log's low bits (a call that failed: its code + _FAILED)
_MALLOC_HOST, _FREE_HOST, _MEMCPY, _MATMUL, _SYNC = range(5)
_FAILED = 8
_CODE_BITS = 4
_PLAN_SHIFT = 32  # log entry: (plan << 32 | (source line + 1)) << 4 | call
_CALLS = (
    ("acl.rt.malloc_host", "malloc_us"),
    ("acl.rt.free_host", "free_us"),
    ("acl.rt.memcpy_async", "memcpy_call_us"),
    ("acl.op.matmul", "launch_call_us"),
    ("acl.rt.synchronize_stream", "sync_call_us"),
)
# device resources and events
_H2D, _D2H, _CORES = 0, 1, 2
# what a waiting host waits for
_ROOM, _PAGEABLE, _DRAIN = 0, 1, 2
_MIN_RUN = 16  # plain submissions played in numpy at once, at least
# a plan: what every task of one kind on one stream shares (a synchronize's plan: just its stream)
_P_STREAM, _P_RES, _P_RUN, _P_KIND, _P_NAME, _P_BYTES, _P_LABEL, _P_DIR, _P_FLOPS, _P_READS, _P_WRITES, _P_WHERE = (
    range(12)
)


class BulkHost:
    """Stands in for ``sim.acl`` in the pipeline's batch section (``acl.rt.*``, ``acl.op.matmul``, ``acl.util``).

    Implements ``rt.malloc_host``, ``rt.free_host``, ``rt.memcpy_async`` (host <-> device),
    ``op.matmul`` and ``rt.synchronize_stream``; :meth:`finish` ends the section. While a section
    runs the program calls only the bulk host (the simulation's host clock moves at each flush).
    """

    def __init__(self, sim) -> None:
        from ..simulation import INTERNAL_FILES

        if not sim.runtime.all_idle():
            raise RuntimeError("bulk host: the device still has work queued from before the section")
        self.sim = sim
        self.rt = self
        self.op = self
        self.util = sim.acl.util  # ptr_to_numpy: views of host memory, no host call
        self._numerics = sim.numerics
        self._copy_allocs: list = []  # with numerics, per copy: its source and destination allocations
        self._plan_kernels: dict[int, OpMatmul] = {}  # kernel plan -> the op it computes
        self._moved = 0  # finished tasks whose data has moved
        self._internal = INTERNAL_FILES
        host = sim.profile.host
        cost = [sim.us(getattr(host, attr)) for _name, attr in _CALLS]
        self._cost = cost + [0] * (_FAILED - len(cost)) + cost
        names = [sim.trace.name(name) for name, _attr in _CALLS]
        self._call_names = names + [0] * (_FAILED - len(names)) + names
        self._depth = sim.profile.limits.stream_depth
        self._kernel_start = sim.runtime.kernel_start_ps
        self._state = sim.state
        self._dev_alloc = sim.devmem.space.by_ptr
        self._pinned_alloc = sim.hostmem.pinned.by_ptr
        self._srcs = sim.trace.srcs.items
        self._known: dict[tuple, tuple] = {}  # (code object, instruction offset, arguments...) -> what a call knows
        self._malloc = sim.hostmem.malloc_host
        self._free = sim.hostmem.free_host
        self._streams: list = []  # lean index -> Stream
        self._plans: list[tuple] = []  # plan id -> plan (see _P_*)
        self._plan_ids: dict[tuple, int] = {}
        self._table: dict[str, np.ndarray] | None = None
        self._wait_rows: dict[tuple[int, int], tuple[int, int]] = {}
        self._names: dict[str, int] = {}
        self._texts: list[str] = []  # task labels
        self._text_ids: dict[str, int] = {}
        # the log
        self._log: list[int] = []  # per call
        self._append = self._log.append
        self._copies: list[int] = []  # per copy, four numbers: source ident, offset, destination ident, offset
        self._played = 0  # calls already played
        self._played_copies = 0
        self._played_rows: list[tuple[int, int]] = []  # per flush: its first call and that call's trace row
        self._played_src: list[np.ndarray] = []  # per flush: the source line of each call
        self._first_seq = sim.runtime._seq + 1
        self._device = LeanDevice((host.copy_engines_h2d, host.copy_engines_d2h, 1))
        # per task, filled when played
        self.t_plan: list[int] = []
        self.t_call: list[int] = []  # the call that submitted it
        self.t_copy: list[int] = []  # its entry in _copies, or -1
        self.t_count: list[int] = []  # its stream's count (vector-clock entry)
        self.t_version: list[int] = []  # the host's clock when it was submitted (index in host_vc)
        self.t_detail: list[int] = []  # its task-table entry (detail id of its rows)
        self.s_tasks = self._device.s_tasks  # lean stream -> its tasks in order
        self.s_count: list[int] = []  # lean stream -> its count before the section
        self.base_vc: list[dict] = []  # lean stream -> its vector clock before the section
        self.host_vc: list[dict] = [dict(sim.runtime.host_vc)]  # the host's clock, one entry per change

    # -- the calls ----------------------------------------------------------------------------------
    # Each call first looks up what it already knows about its call site and arguments (``_known``: its
    # source line, stream, plan, the log entry it makes); only the pointers are checked every time.
    def malloc_host(self, size: int) -> tuple[int, int]:
        f = _getframe(1)
        known = self._known.get((f.f_code, f.f_lasti))
        if known is None:
            known = self._learn_site(f, _MALLOC_HOST)
        try:
            if not self._state.initialized:
                self.sim.require_init()
            ptr = self._malloc(size, known[1]).ptr
        except AclError as exc:
            return 0, self._fail(_MALLOC_HOST, known[2], exc)
        self._append(known[0])
        return ptr, ACL_SUCCESS

    def free_host(self, ptr: int) -> int:
        f = _getframe(1)
        known = self._known.get((f.f_code, f.f_lasti))
        if known is None:
            known = self._learn_site(f, _FREE_HOST)
        try:
            if not self._state.initialized:
                self.sim.require_init()
            self._free(ptr, known[1])
        except AclError as exc:
            return self._fail(_FREE_HOST, known[2], exc)
        self._append(known[0])
        return ACL_SUCCESS

    def memcpy_async(self, dst, dst_max: int, src, count: int, kind: int, stream: int) -> int:
        f = _getframe(1)
        known = self._known.get((f.f_code, f.f_lasti, stream, kind, count, dst_max))
        # the common case: a copy like one this call site made before, whole live allocations by pointer
        if (
            known is not None
            and not known[1].closed
            and self._state.device is not None
            and type(dst) is int
            and type(src) is int
            and type(count) is int
            and type(dst_max) is int
        ):
            if kind == ACL_MEMCPY_HOST_TO_DEVICE:
                d, s_ = self._dev_alloc.get(dst), self._pinned_alloc.get(src)
            else:  # ACL_MEMCPY_DEVICE_TO_HOST: only those two kinds are known here
                d, s_ = self._pinned_alloc.get(dst), self._dev_alloc.get(src)
            if (
                d is not None
                and s_ is not None
                and not d.freed_at
                and not s_.freed_at
                and count <= d.size
                and count <= s_.size
            ):
                self._append(known[0])
                self._copies.extend((s_.ident, 0, d.ident, 0))
                if self._numerics:
                    self._copy_allocs.extend((s_, d))
                return ACL_SUCCESS
        return self._memcpy(f, dst, dst_max, src, count, kind, stream)

    def _memcpy(self, f, dst, dst_max: int, src, count: int, kind: int, stream: int) -> int:
        """``memcpy_async`` checked by the simulator's own rules (they raise what the call-by-call host raises)."""
        site = self._site(f)
        try:
            if self._state.device is None:
                self.sim.require_device()
            found = self._stream(stream, "memcpy_async")
            plan, (d, d_off), (s_, s_off) = self.sim.plan_copy(dst, dst_max, src, count, kind, "memcpy_async")
        except AclError as exc:
            return self._fail(_MEMCPY, site, exc)
        direction, pinned, count = plan.direction, plan.pinned, plan.count
        if direction not in (H2D, D2H):
            raise NotImplementedError(f"bulk host: {direction} copies are not part of the batch section")
        key = (found[1], direction, pinned, count, s_.where, d.where)
        plan = self._plan_ids.get(key)
        if plan is None:
            plan = self._copy_plan(found, key)
        entry = ((plan << _PLAN_SHIFT | (site + 1)) << _CODE_BITS) | _MEMCPY
        exact = kind == (ACL_MEMCPY_HOST_TO_DEVICE if direction == H2D else ACL_MEMCPY_DEVICE_TO_HOST)
        if exact and pinned and d_off == 0 and s_off == 0 and site >= 0 and type(count) is int:
            # the next copy like it from here takes the common case
            self._known[(f.f_code, f.f_lasti, stream, kind, count, dst_max)] = (entry, found[0])
        self._append(entry)
        self._copies.extend((s_.ident, s_off, d.ident, d_off))
        if self._numerics:
            self._copy_allocs.extend((s_, d))
        return ACL_SUCCESS

    def matmul(self, a: int, b: int, c: int, m: int, n: int, k: int, stream: int, out_dtype: str = "fp16") -> int:
        f = _getframe(1)
        known = self._known.get((f.f_code, f.f_lasti, a, b, c, m, n, k, stream, out_dtype))
        if known is not None:
            entry, found, kernel = known
            if (
                not found.closed
                and self._state.device is not None
                and not (kernel.a[0].freed_at or kernel.b[0].freed_at or kernel.c[0].freed_at)
            ):
                self._append(entry)
                return ACL_SUCCESS
        site = self._site(f)
        try:
            if self._state.device is None:
                self.sim.require_device()
            found = self._stream(stream, "matmul")
            kernel = OpMatmul.plan(self.sim, a, b, c, m, n, k, out_dtype)
        except AclError as exc:
            return self._fail(_MATMUL, site, exc)
        key = (found[1], a, b, c, m, n, k, out_dtype)
        plan = self._plan_ids.get(key)
        if plan is None:
            plan = self._kernel_plan(found, kernel, key)
        entry = ((plan << _PLAN_SHIFT | (site + 1)) << _CODE_BITS) | _MATMUL
        if site >= 0:
            self._known[(f.f_code, f.f_lasti, a, b, c, m, n, k, stream, out_dtype)] = (entry, found[0], kernel)
        self._append(entry)
        return ACL_SUCCESS

    def synchronize_stream(self, stream: int) -> int:
        site = self._site(_getframe(1))
        try:
            if self._state.device is None:
                self.sim.require_device()
            found = self._stream(stream, "synchronize_stream")
        except AclError as exc:
            return self._fail(_SYNC, site, exc)
        key = (found[1], "sync")
        plan = self._plan_ids.get(key)
        if plan is None:
            plan = self._add_plan(key, (found[1], -1, 0, -1, 0, 0, -1, 0, 0, None, None, None))
        self._append(((plan << _PLAN_SHIFT | (site + 1)) << _CODE_BITS) | _SYNC)
        if self._numerics:  # what the host reads after a synchronize must be there
            self.flush()
            self._move_data()
        return ACL_SUCCESS

    # -- helpers of the calls -----------------------------------------------------------------------
    def _site(self, frame) -> int:
        """The source line of a call made from ``frame``: the first frame outside the simulator."""
        internal = self._internal
        while frame is not None and frame.f_code.co_filename in internal:
            frame = frame.f_back
        return -1 if frame is None else self.sim.src_of(frame)

    def _learn_site(self, frame, code: int) -> tuple:
        """(log entry, source text, source id) of a host-only call from ``frame``, kept when the caller is
        the program itself (an internal caller's line depends on who called it)."""
        site = self._site(frame)
        known = ((site + 1) << _CODE_BITS | code, self._srcs[site] if site >= 0 else "", site)
        if frame.f_code.co_filename not in self._internal:
            self._known[(frame.f_code, frame.f_lasti)] = known
        return known

    def _stream(self, handle, what: str) -> tuple:
        """(Stream, lean index) of a handle, checked as the call-by-call host checks it."""
        stream = self.sim.stream(handle, what)
        s = next((i for i, known in enumerate(self._streams) if known is stream), None)
        if s is None:
            s = len(self._streams)
            self._streams.append(stream)
            self._device.add_stream(stream.priority)
            self.s_count.append(stream.count)
            self.base_vc.append(dict(stream.vc))
        return stream, s

    def _add_plan(self, key: tuple, plan: tuple) -> int:
        ident = self._plan_ids[key] = len(self._plans)
        self._plans.append(plan)
        return ident

    def _name(self, text: str) -> int:
        found = self._names.get(text)
        if found is None:
            found = self._names[text] = self.sim.trace.name(text)
        return found

    def _text(self, text: str) -> int:
        found = self._text_ids.get(text)
        if found is None:
            found = self._text_ids[text] = len(self._texts)
            self._texts.append(text)
        return found

    def _copy_plan(self, found: tuple, key: tuple) -> int:
        stream, s = found
        _s, direction, pinned, count, src_where, dst_where = key
        return self._add_plan(
            key,
            (
                s,
                _H2D if direction == H2D else _D2H,
                self.sim.link.duration(direction, pinned, count),
                TaskKind.COPY,
                self._name(f"{direction} copy"),
                count,
                self._text(f"{direction} copy of {count} B on {stream.label}"),
                DIRECTIONS.index(direction),
                0,
                None,
                None,
                (src_where, dst_where, pinned),
            ),
        )

    def _kernel_plan(self, found: tuple, kernel: OpMatmul, key: tuple) -> int:
        stream, s = found
        plan = self._add_plan(
            key,
            (
                s,
                _CORES,
                max(1, round(kernel.seconds * 1e12)) + self._kernel_start,
                TaskKind.KERNEL,
                self._name(kernel.name),
                kernel.nbytes,
                self._text(f"kernel {kernel.name} on {stream.label}"),
                0,
                kernel.flops,
                tuple(kernel.reads),
                tuple(kernel.writes),
                None,
            ),
        )
        self._plan_kernels[plan] = kernel
        return plan

    def _fail(self, code: int, site: int, exc: AclError) -> int:
        """A call that failed: play the log up to it, then let the call-by-call host's error handling
        (``ApiCall``) make its error row and finding; return its code (or raise, when strict)."""
        from ..simulation import ApiCall

        self._log.append((site + 1) << _CODE_BITS | (code + _FAILED))
        self.flush()
        sim = self.sim
        call = ApiCall(sim, _CALLS[code][0], self._cost[code])
        call.src = site
        first_call, first_row = self._played_rows[-1]
        call.row = first_row + len(self._log) - 1 - first_call
        call.start = sim.host_now - self._cost[code]
        if not call.__exit__(type(exc), exc, exc.__traceback__):
            raise exc
        return call.ret

    # -- playing the log ----------------------------------------------------------------------------
    def flush(self) -> None:
        """Play the calls logged since the last flush: host clock, device, rows, task table."""
        sim = self.sim
        trace = sim.trace
        k0, k1 = self._played, len(self._log)
        if k0 == k1:
            return
        log = np.asarray(self._log[k0:k1], dtype=np.int64)
        ops = log & ((1 << _CODE_BITS) - 1)
        src = ((log >> _CODE_BITS) & ((1 << _PLAN_SHIFT) - 1)) - 1
        cost = np.asarray(self._cost, dtype=np.int64)[ops]
        # the calls that meet the device (tasks and synchronizes), with their plans
        dev = np.flatnonzero((ops >= _MEMCPY) & (ops <= _SYNC))
        plans = log[dev] >> (_CODE_BITS + _PLAN_SHIFT)
        ready = sim.host_now + np.cumsum(cost)[dev]  # each one's cost paid, if nothing before it waited
        is_copy = ops[dev] == _MEMCPY
        copies = np.full(len(dev), -1, dtype=np.int64)
        copies[is_copy] = np.arange(self._played_copies, self._played_copies + int(is_copy.sum()))
        self._played_copies += int(is_copy.sum())
        waits, extra = self._play(k0 + dev, plans, ready, copies)
        # the host rows: every call, stretched by its waits, and the waits
        stretch = np.zeros(len(ops), dtype=np.int64)
        stretch[dev] = extra
        end = sim.host_now + np.cumsum(cost + stretch)
        n = len(ops)
        first = trace.extend(
            start=end - cost - stretch,
            end=end,
            lane=np.full(n, sim.host_lane, dtype=np.int16),
            kind=np.full(n, Kind.CALL, dtype=np.uint8),
            name=np.asarray(self._call_names, dtype=np.int16)[ops],
            src=src.astype(np.int32),
        )
        self._played_rows.append((k0, first))
        self._played_src.append(src)
        if waits:
            calls, w_start, w_end, w_name, w_detail = (np.asarray(c, dtype=np.int64) for c in zip(*waits, strict=True))
            calls -= k0
            trace.extend(
                start=w_start,
                end=w_end,
                lane=np.full(len(calls), sim.host_lane, dtype=np.int16),
                kind=np.full(len(calls), Kind.WAIT, dtype=np.uint8),
                name=w_name.astype(np.int16),
                src=src[calls].astype(np.int32),
                cause=(calls + first).astype(np.int32),
                detail=w_detail.astype(np.int32),
            )
        sim.host_now = int(end[-1])
        self._played = k1

    def _play(self, calls: np.ndarray, plans: np.ndarray, ready: np.ndarray, copies: np.ndarray):
        """Run the logged calls that meet the device: their call numbers, plans, when each one's cost is
        paid if nothing waited before it, and copy entries (-1: not a copy). Return the host's waits
        ``(call, start, end, name, detail)`` and each call's total wait."""
        sim = self.sim
        lean = self._device
        table = self._plan_table()
        n = len(plans)
        stream = table["stream"][plans]
        self._calls, self._run_streams = calls.tolist(), stream
        is_sync = table["res"][plans] < 0
        on_dev = np.flatnonzero(~is_sync)  # the tasks, by position
        first_task = len(self.t_plan)
        n_new = len(on_dev)
        task_of = np.full(n, -1, dtype=np.int64)
        task_of[on_dev] = np.arange(first_task, first_task + n_new)
        new_plans = plans[on_dev]
        self.t_plan.extend(new_plans.tolist())
        self.t_call.extend(calls[on_dev].tolist())
        self.t_copy.extend(copies[on_dev].tolist())
        lean.add_tasks(
            new_plans.tolist(),
            stream[on_dev].tolist(),
            table["res"][new_plans].tolist(),
            table["run"][new_plans].tolist(),
        )
        # per call, the task the host must see finished before going on: for a task, the one ``depth``
        # places back on its stream (a full stream); for a synchronize, its stream's last one
        target = np.full(n, -1, dtype=np.int64)
        count = np.zeros(n_new, dtype=np.int64)
        depth = self._depth
        for s, mine in enumerate(self.s_tasks):
            here = np.flatnonzero(stream == s)
            if not len(here):
                continue
            tasks = here[~is_sync[here]]
            known = len(mine)
            mine.extend(task_of[tasks].tolist())
            ids = np.asarray(mine, dtype=np.int64)
            place = known + np.arange(len(tasks))  # each task's place on its stream
            count[task_of[tasks] - first_task] = self.s_count[s] + place + 1
            full = place >= depth
            target[tasks[full]] = ids[place[full] - depth]
            syncs = here[is_sync[here]]
            before = known + np.searchsorted(tasks, syncs)  # tasks of the stream before each synchronize
            target[syncs] = np.where(before > 0, ids[before - 1], -1)
        self.t_count.extend(count.tolist())
        version = first_version = len(self.host_vc) - 1
        self.t_version.extend([version] * n_new)
        staged_mask = table["pageable"][plans]
        pageable = staged_mask.tolist()
        queues, running, t_end, t_submit = lean.queues, lean.running, lean.t_end, lean.t_submit
        run_to = lean.run_to
        t_version = self.t_version
        waits: list[tuple] = []
        extra = [0] * n
        shift = 0  # waits so far in this flush
        submitted = first_task
        # runs of plain submissions (pinned tasks) whose waits are decided are played in numpy
        special = np.flatnonzero(is_sync | staged_mask)
        reach = np.maximum.accumulate(target) if n else target  # the furthest task waited for so far
        targets, tasks, paid_at, streams = target.tolist(), task_of.tolist(), ready.tolist(), stream.tolist()
        j = 0
        # per call: the task the host waits for first, the task it submits, when its cost is paid, its stream.
        # A wait lasts until the task's end: the device reaches it now, or reached it already (stamping)
        while j < n:
            x, t, s = targets[j], tasks[j], streams[j]
            if t >= 0 and not pageable[j]:
                stop = self._plain_run(j, special, reach)
                if stop - j >= _MIN_RUN:
                    shift, submitted = self._submit_run(j, stop, target, task_of, ready, stream, shift, waits, extra)
                    if version != first_version:
                        t_version[tasks[j] : submitted] = [version] * (submitted - tasks[j])
                    j = stop
                    continue
            h = paid_at[j] + shift
            if x >= 0:
                if t_end[x] < 0:
                    run_to(x, submitted)
                end = t_end[x]
                if end > h:
                    waits.append((calls[j], h, end, *self._wait_row(_ROOM if t >= 0 else _DRAIN, s, x)))
                    extra[j] = end - h
                    shift += end - h
                    h = end
            j += 1
            if t < 0:  # synchronize_stream: the host now knows everything its stream did
                if self._learn(self._vc(x) if x >= 0 else self.base_vc[s]):
                    version += 1
                continue
            if version != first_version:
                t_version[t] = version
            if running[s] < 0 and not queues[s]:
                lean.submit(t, h)  # an idle stream: the task arrives at h
            else:
                t_submit[t] = h
                queues[s].append(t)
            submitted = t + 1
            if pageable[j - 1]:  # staged through a pinned buffer: the host waits for the copy
                if t_end[t] < 0:
                    run_to(t, submitted)
                end = t_end[t]
                if end > h:
                    waits.append((calls[j - 1], h, end, *self._wait_row(_PAGEABLE, s, t)))
                    extra[j - 1] += end - h
                    shift += end - h
                if self._learn(self._vc(t)):
                    version += 1
        # the task table: one entry per task submitted in this flush
        if n_new:
            first = sim.trace.extend_tasks(
                seq=np.arange(self._first_seq + first_task, self._first_seq + first_task + n_new),
                stream=table["ident"][new_plans],
                kind=table["kind"][new_plans],
                submit=np.asarray(t_submit[first_task:], dtype=np.int64),
                event=np.full(n_new, -1),
                direction=table["dir"][new_plans],
                flops=table["flops"][new_plans],
            )
            self.t_detail.extend(range(first, first + n_new))
        sim.runtime._seq = self._first_seq + first_task + n_new - 1
        return waits, extra

    def _plan_table(self) -> dict[str, np.ndarray]:
        """The plans' columns as arrays (per plan id)."""
        plans = self._plans
        if self._table is None or len(self._table["stream"]) != len(plans):
            idents = [st.ident for st in self._streams]
            self._table = {
                "stream": np.array([p[_P_STREAM] for p in plans], dtype=np.int64),
                "ident": np.array([idents[p[_P_STREAM]] for p in plans], dtype=np.int64),
                "res": np.array([p[_P_RES] for p in plans], dtype=np.int64),
                "run": np.array([p[_P_RUN] for p in plans], dtype=np.int64),
                "kind": np.array([p[_P_KIND] for p in plans], dtype=np.int64),
                "name": np.array([p[_P_NAME] for p in plans], dtype=np.int16),
                "bytes": np.array([p[_P_BYTES] for p in plans], dtype=np.int64),
                "dir": np.array([p[_P_DIR] for p in plans], dtype=np.int64),
                "flops": np.array([p[_P_FLOPS] for p in plans], dtype=np.int64),
                "pageable": np.array([p[_P_WHERE] is not None and not p[_P_WHERE][2] for p in plans], dtype=bool),
            }
        return self._table

    def _plain_run(self, j: int, special: np.ndarray, reach: np.ndarray) -> int:
        """End of the run of plain submissions from call ``j`` (pinned tasks, no synchronize) whose waits are
        decided (every task they wait for has ended) and whose streams are busy (no task arrives at an
        idle stream)."""
        lean = self._device
        stop = len(reach)
        i = np.searchsorted(special, j)
        if i < len(special):
            stop = int(special[i])
        stop = min(stop, int(np.searchsorted(reach, lean.ended_below())))  # reach[k] < ended_below before it
        idle = [s for s, r in enumerate(lean.running) if r < 0 and not lean.queues[s]]
        if idle and stop > j:
            first = np.flatnonzero(np.isin(self._run_streams[j:stop], idle))
            if len(first):
                stop = j + int(first[0])
        return stop

    def _submit_run(self, j, stop, target, task_of, ready, stream, shift, waits, extra) -> tuple[int, int]:
        """Calls ``j..stop`` (a plain run): each waits for its task's end if that is after it paid its cost,
        then submits its task. Returns the waits so far and the tasks submitted."""
        lean = self._device
        t_end = lean.t_end
        xs = target[j:stop]
        ends = np.array([t_end[x] if x >= 0 else -1 for x in xs.tolist()], dtype=np.int64)
        paid = ready[j:stop]
        after = np.maximum.accumulate(np.maximum(ends - paid, shift))  # the host's lateness after each call
        before = np.empty_like(after)
        before[0] = shift
        before[1:] = after[:-1]
        ss = stream[j:stop]
        waited = np.flatnonzero(after > before)
        calls, wait_row = self._calls, self._wait_row
        for i, start, end, s, x, extra_i in zip(
            waited.tolist(),
            (paid + before)[waited].tolist(),
            ends[waited].tolist(),
            ss[waited].tolist(),
            xs[waited].tolist(),
            (after - before)[waited].tolist(),
            strict=True,
        ):
            waits.append((calls[j + i], start, end, *wait_row(_ROOM, s, x)))
            extra[j + i] = extra_i
        first, last = int(task_of[j]), int(task_of[stop - 1]) + 1  # consecutive tasks
        lean.t_submit[first:last] = (paid + after).tolist()
        queues = lean.queues
        for s in np.unique(ss).tolist():
            queues[s].extend(task_of[j:stop][ss == s].tolist())
        return int(after[-1]), last

    def _wait_row(self, phase: int, s: int, x: int) -> tuple[int, int]:
        """(name id, detail id) of a host wait's row (on lean stream ``s``, for task ``x``)."""
        if phase != _PAGEABLE:  # the same for every wait of its kind on its stream
            found = self._wait_rows.get((phase, s))
            if found is None:
                found = self._wait_rows[(phase, s)] = self._new_wait_row(phase, s, x)
            return found
        return self._new_wait_row(phase, s, x)

    def _new_wait_row(self, phase: int, s: int, x: int) -> tuple[int, int]:
        stream = self._streams[s]
        if phase == _ROOM:
            what, on = f"room in {stream.label} (depth {self._depth})", HostWait("room", stream.ident)
        elif phase == _PAGEABLE:
            what, on = "a pageable copy (staged through a pinned buffer)", HostWait("pageable", self._first_seq + x)
        else:
            what, on = f"{stream.label} to drain", HostWait("stream", stream.ident)
        return self._name(f"wait: {what}"), self.sim.trace.detail(on)

    def _vc(self, t: int) -> dict:
        """Task ``t``'s vector clock (what ``DeviceRuntime.submit`` gives it)."""
        s = self._plans[self.t_plan[t]][_P_STREAM]
        return _clock(self.base_vc[s], self.host_vc[self.t_version[t]], self._streams[s].ident, self.t_count[t])

    def _learn(self, vc: dict) -> bool:
        """The host synchronised with work of clock ``vc``; True if that taught it something new."""
        known = self.host_vc[-1]
        if all(known.get(k, 0) >= v for k, v in vc.items()):
            return False
        merged = dict(known)
        for k, v in vc.items():
            if merged.get(k, 0) < v:
                merged[k] = v
        self.host_vc.append(merged)
        return True

    # -- the end ------------------------------------------------------------------------------------
    def finish(self) -> None:
        """Play what is left, run the device until every task has finished, append the tasks' rows and
        records, and leave streams, runtime and clocks where the call-by-call host would have."""
        sim = self.sim
        rt = sim.runtime
        self.flush()
        lean = self._device
        lean.drain()
        if self._numerics:
            self._move_data()
        sim.clock.now = max(sim.clock.now, lean.now)
        sim.clock.processed += lean.events
        n = len(self.t_plan)
        if not n:
            return
        self._device_rows()
        for s, stream in enumerate(self._streams):
            mine = self.s_tasks[s]
            if mine:
                stream.submitted += len(mine)
                stream.count = self.t_count[mine[-1]]
                stream.vc = self._vc(mine[-1])
        rt.host_vc.clear()
        rt.host_vc.update(self.host_vc[-1])
        rt.tasks_done += n
        src = np.concatenate(self._played_src)
        rt.records.append(
            BulkTasks(
                first_seq=self._first_seq,
                plan=self.t_plan,
                plans=tuple(self._plans),
                streams=tuple(st.ident for st in self._streams),
                labels=tuple(st.label for st in self._streams),
                texts=tuple(self._texts),
                src=src[np.asarray(self.t_call, dtype=np.int64)].tolist(),
                submit=lean.t_submit,
                start=lean.t_start,
                end=lean.t_end,
                copy=self.t_copy,
                copies=self._copies,
                count=self.t_count,
                version=self.t_version,
                base_vc=tuple(self.base_vc),
                host_vc=tuple(self.host_vc),
            )
        )

    def _move_data(self) -> None:
        """With numerics: the tasks that finished since the last call move their bytes (a copy) or compute
        their result (a matmul), in the order the device finished them, as the runtime does at each task's
        end."""
        sim = self.sim
        finished = self._device.finished
        copies, allocs, plans = self._copies, self._copy_allocs, self._plans
        for t in finished[self._moved :]:
            c = self.t_copy[t]
            if c < 0:
                self._plan_kernels[self.t_plan[t]].finish()
                continue
            src, dst = allocs[2 * c], allocs[2 * c + 1]
            s_off, d_off, n = copies[4 * c + 1], copies[4 * c + 3], plans[self.t_plan[t]][_P_BYTES]
            d_mem = sim.devmem if dst.where == "device" else sim.hostmem
            s_mem = sim.devmem if src.where == "device" else sim.hostmem
            d_mem.view(dst)[d_off : d_off + n] = s_mem.view(src)[s_off : s_off + n]
        self._moved = len(finished)

    def _device_rows(self) -> None:
        """Two rows per task, in the order tasks finished: its stream's lane, and its engine or the
        AI-core array (a kernel's row there starts after the launch overhead)."""
        sim = self.sim
        rt = sim.runtime
        lean = self._device
        order = np.asarray(lean.finished, dtype=np.int64)
        table = self._plan_table()
        plan = np.asarray(self.t_plan, dtype=np.int64)[order]
        res = table["res"][plan]
        start = np.asarray(lean.t_start, dtype=np.int64)[order]
        end = np.asarray(lean.t_end, dtype=np.int64)[order]
        unit = np.asarray(lean.t_unit, dtype=np.int64)[order]
        stream_lanes = np.array([s.lane for s in self._streams], dtype=np.int16)
        stream_lane = stream_lanes[table["stream"][plan]]
        calls = np.asarray(self.t_call, dtype=np.int64)[order]
        first_calls, first_rows = (np.array(c, dtype=np.int64) for c in zip(*self._played_rows, strict=True))
        played = np.searchsorted(first_calls, calls, side="right") - 1
        cause = (first_rows[played] + calls - first_calls[played]).astype(np.int32)
        src = np.concatenate(self._played_src)[calls].astype(np.int32)
        second_lane = np.full(len(order), rt.op_lane(), dtype=np.int16)
        for r, direction in ((_H2D, H2D), (_D2H, D2H)):
            sel = res == r
            second_lane[sel] = np.array(rt.pools[direction].lanes, dtype=np.int16)[unit[sel]]
        is_kernel = res == _CORES
        kind = np.where(is_kernel, Kind.KERNEL, Kind.COPY).astype(np.uint8)
        second_start = np.where(is_kernel, start + self._kernel_start, start)
        name = table["name"][plan]
        nbytes = table["bytes"][plan]
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


def _clock(base: dict, host: dict, ident: int, count: int) -> dict:
    """A task's vector clock: its stream's clock before the section merged with the host's when it was
    submitted, its own stream's entry set to its count (``DeviceRuntime.submit``)."""
    vc = dict(base)
    for k, v in host.items():
        if vc.get(k, 0) < v:
            vc[k] = v
    vc[ident] = count
    return vc


@dataclass(frozen=True)
class BulkTasks:
    """The tasks of one bulk section as columns (task ``i`` has submission number ``first_seq + i``); its
    :class:`TaskRecord` is built when read (tens of thousands of records cost more to build than the
    whole section). Plain data: it pickles, and keeps nothing of the simulation."""

    first_seq: int
    plan: list
    plans: tuple
    streams: tuple  # lean stream -> ident
    labels: tuple  # lean stream -> label
    texts: tuple
    src: list
    submit: list
    start: list
    end: list
    copy: list  # per task: its entry in ``copies`` (copies), or -1 (kernels)
    copies: list  # four numbers per copy: source allocation ident, offset, destination ident, offset
    count: list
    version: list
    base_vc: tuple
    host_vc: tuple

    def __len__(self) -> int:
        return len(self.plan)

    def record(self, i: int) -> TaskRecord:
        p = self.plans[self.plan[i]]
        s = p[_P_STREAM]
        c = self.copy[i]
        if c >= 0:
            src_ident, src_off, dst_ident, dst_off = self.copies[4 * c : 4 * c + 4]
            src_where, dst_where, _pinned = p[_P_WHERE]
            n = p[_P_BYTES]
            reads = (((src_where, src_ident), src_off, src_off + n),)
            writes = (((dst_where, dst_ident), dst_off, dst_off + n),)
        else:
            reads, writes = p[_P_READS], p[_P_WRITES]
        vc = _clock(self.base_vc[s], self.host_vc[self.version[i]], self.streams[s], self.count[i])
        return TaskRecord(
            self.first_seq + i,
            self.streams[s],
            self.labels[s],
            TaskKind(p[_P_KIND]),
            p[_P_NAME],
            self.texts[p[_P_LABEL]],
            self.src[i],
            self.submit[i],
            self.start[i],
            self.end[i],
            reads,
            writes,
            tuple(sorted(vc.items())),
        )
