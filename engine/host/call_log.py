"""The host call log: many host calls at a fraction of the cost of each, fed to the same runtime.

A call-by-call run costs ~15 us of Python per ``memcpy_async`` (the call's context manager, its row,
its checks). For thousands of small batches that is the whole cost, so a program (the pipeline's batch
section, :mod:`engine.scenarios.pipeline`) may hand its calls to a :class:`HostCallLog` instead of
``sim.acl``. It answers ``acl.rt.malloc_host``, ``free_host``, ``memcpy_async`` (host <-> device) and
``acl.op.matmul`` in two halves:

* **the call** does at once what decides its return value, with the simulator's own checks
  (``Simulation.plan_copy``, ``OpMatmul.plan``, the host allocator), answered from what the call site
  decided before when it can, and logs one integer: its kind, source line and task plan (the runtime's
  :class:`~engine.device.task_store.TaskPlan`);
* :meth:`HostCallLog.flush` plays the log: every call becomes its row (the cause its task names), the
  host clock advances by each call's profile cost (numpy prefix sums), the host waits for room in a full
  stream or for a pageable copy exactly as ``Simulation.host_block_until`` makes it wait, and every task
  goes to the runtime's ``submit`` (runs of submissions whose waits are already decided as one
  ``submit_block``); then the calls that waited get their times and the waits their rows, each row keyed
  where a call-by-call run appends it (:mod:`engine.trace.order`).

Any other call, a call that would fail, and any call while a stream may be stuck behind an event wait,
first plays the log and then goes to ``sim.acl`` as it is: the same row, error, finding and return code
as call by call. ``tests/test_runtime_modes.py`` and ``tests/test_pipeline_fast.py`` compare both.
"""

from __future__ import annotations

from sys import _getframe

import numpy as np

from ..device.copy_engine import D2H, H2D
from ..device.op_matmul import OpMatmul
from ..device.runtime import CopyPlan
from ..trace import Kind
from ..trace.detail import HostWait
from ..trace.order import SUB_STEP
from .acl_codes import ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE, ACL_SUCCESS, AclError

# the calls, in the log's low bits
MALLOC_HOST, FREE_HOST, MEMCPY, MATMUL = range(4)
CODE_BITS = 4
SRC_BITS = 32  # log entry: ((plan + 1) << 32 | (source line + 1)) << 4 | call
CALLS = (
    ("acl.rt.malloc_host", "malloc_us"),
    ("acl.rt.free_host", "free_us"),
    ("acl.rt.memcpy_async", "memcpy_call_us"),
    ("acl.op.matmul", "launch_call_us"),
)
MIN_RUN = 16  # plain submissions played in numpy at once, at least


class HostCallLog:
    """Stands in for ``sim.acl`` (``acl.rt``, ``acl.op``, ``acl.util`` and the top level); :meth:`flush`
    plays what it logged (call it at the end)."""

    def __init__(self, sim) -> None:
        self.sim = sim
        self.rt = self
        self.op = self
        self.util = sim.acl.util  # ptr_to_numpy: views of host memory, no host call
        self._acl = sim.acl
        self._runtime = sim.runtime
        host = sim.profile.host
        self._cost = np.array([sim.us(getattr(host, attr)) for _name, attr in CALLS], dtype=np.int64)
        self._call_names = np.full(len(CALLS), -1, dtype=np.int16)  # interned when first played
        self._depth = sim.profile.limits.stream_depth
        self._state = sim.state
        self._numerics = sim.numerics
        self._malloc = sim.hostmem.malloc_host
        self._free = sim.hostmem.free_host
        self._dev_alloc = sim.devmem.space.by_ptr
        self._pinned_alloc = sim.hostmem.pinned.by_ptr
        self._srcs = sim.trace.srcs.items
        # (id of the call site's code object, instruction offset, arguments...) -> what a call knows. Keyed by the
        # code object's id, not the object: hashing a code object hashes its constants and names, every call
        self._known: dict[tuple, tuple] = {}
        self._codes: dict[int, object] = {}  # id -> code object, held so that no other code object takes its id
        self._log: list[int] = []  # per call
        self._append = self._log.append
        self._copies: list[int] = []  # per copy, four numbers: source ident, offset, destination ident, offset
        self._payloads: list = []  # per copy with numerics: its CopyPlan; per matmul: its OpMatmul
        self._kernels: dict[int, OpMatmul] = {}  # task plan -> the matmul it computes
        self._wait_rows: dict[tuple, tuple[int, int]] = {}
        # every other call plays the log, then goes to the call-by-call host's own (attributes set here: a
        # ``__getattr__`` would slow down every attribute this object reads in the calls above)
        for part in (sim.acl, sim.acl.op, sim.acl.rt):
            for name in dir(part):
                if not name.startswith("_") and name not in self.__dict__ and not hasattr(HostCallLog, name):
                    setattr(self, name, self._then(getattr(part, name)))

    def _then(self, call):
        """``call`` after playing the log."""

        def played_first(*args, **kwargs):
            self.flush()
            return call(*args, **kwargs)

        return played_first

    def _delegate(self, part, name: str, *args):
        self.flush()
        return getattr(part, name)(*args)

    # -- the calls ----------------------------------------------------------------------------------
    def malloc_host(self, size: int) -> tuple[int, int]:
        f = _getframe(1)
        known = self._known.get((id(f.f_code), f.f_lasti))
        if known is None or self.sim.caller is not None:
            known = self._site(f, MALLOC_HOST)
        try:
            if not self._state.initialized:
                raise AclError(0, "", "")
            ptr = self._malloc(size, known[1]).ptr
        except AclError:
            return self._delegate(self._acl.rt, "malloc_host", size)
        self._append(known[0])
        return ptr, ACL_SUCCESS

    def free_host(self, ptr: int) -> int:
        f = _getframe(1)
        known = self._known.get((id(f.f_code), f.f_lasti))
        if known is None or self.sim.caller is not None:
            known = self._site(f, FREE_HOST)
        try:
            if not self._state.initialized:
                raise AclError(0, "", "")
            self._free(ptr, known[1])
        except AclError:
            return self._delegate(self._acl.rt, "free_host", ptr)
        self._append(known[0])
        return ACL_SUCCESS

    def memcpy_async(self, dst, dst_max: int, src, count: int, kind: int, stream: int) -> int:
        f = _getframe(1)
        key = (id(f.f_code), f.f_lasti, stream, kind, count, dst_max)
        known = self._known.get(key)
        # the common case: a pinned copy like one this call site made before, whole live allocations by pointer
        if (
            known is not None
            and not known[1].closed
            and self._state.device is not None
            and type(dst) is int
            and type(src) is int
            and not self._runtime.waits_pending
            and self.sim.caller is None
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
                    sm, dm = (self.sim.hostmem, self.sim.devmem)[:: 1 if kind == ACL_MEMCPY_HOST_TO_DEVICE else -1]
                    self._payloads.append(CopyPlan(known[2], True, count, (sm, s_, 0), (dm, d, 0)))
                return ACL_SUCCESS
        return self._memcpy(f, key, dst, dst_max, src, count, kind, stream)

    def _memcpy(self, f, key, dst, dst_max: int, src, count: int, kind: int, stream: int) -> int:
        """``memcpy_async`` checked by the simulator's own rules; anything they refuse goes call by call."""
        sim = self.sim
        args = (dst, dst_max, src, count, kind, stream)
        if sim.state.device is None or self._runtime.waits_pending:
            return self._delegate(self._acl.rt, "memcpy_async", *args)
        try:
            found = sim.stream(stream, "memcpy_async")
            plan, (d, d_off), (s_, s_off) = sim.plan_copy(dst, dst_max, src, count, kind, "memcpy_async")
        except AclError:
            return self._delegate(self._acl.rt, "memcpy_async", *args)
        if plan.direction not in (H2D, D2H):
            return self._delegate(self._acl.rt, "memcpy_async", *args)
        site = sim.src_from(f)
        task_plan = self._runtime.copy_plan(found, plan.direction, plan.pinned, plan.count, s_.where, d.where)
        entry = (((task_plan + 1) << SRC_BITS | (site + 1)) << CODE_BITS) | MEMCPY
        exact = kind == (ACL_MEMCPY_HOST_TO_DEVICE if plan.direction == H2D else ACL_MEMCPY_DEVICE_TO_HOST)
        if (
            exact
            and plan.pinned
            and d_off == 0
            and s_off == 0
            and site >= 0
            and type(count) is int
            and sim.caller is None
        ):
            self._remember(key, f, (entry, found, plan.direction))  # the next copy like it from here: the common case
        self._append(entry)
        self._copies.extend((s_.ident, s_off, d.ident, d_off))
        if sim.numerics:
            self._payloads.append(plan)
        return ACL_SUCCESS

    def matmul(self, a: int, b: int, c: int, m: int, n: int, k: int, stream: int, out_dtype: str = "fp16") -> int:
        sim = self.sim
        f = _getframe(1)
        key = (id(f.f_code), f.f_lasti, a, b, c, m, n, k, stream, out_dtype)
        known = self._known.get(key)
        args = (a, b, c, m, n, k, stream, out_dtype)
        if known is not None and sim.caller is None:
            entry, found, kernel = known
            if (
                not found.closed
                and self._state.device is not None
                and not self._runtime.waits_pending
                and not (kernel.a[0].freed_at or kernel.b[0].freed_at or kernel.c[0].freed_at)
            ):
                self._append(entry)
                if not len(self._log) & 4095:  # progress, once in a while: the calls logged so far
                    sim.trace.progress(len(self._log))
                return ACL_SUCCESS
        if sim.state.device is None or self._runtime.waits_pending:
            return self._delegate(self._acl.op, "matmul", *args)
        try:
            found = sim.stream(stream, "matmul")
            kernel = OpMatmul.plan(sim, a, b, c, m, n, k, out_dtype)
        except AclError:
            return self._delegate(self._acl.op, "matmul", *args)
        site = sim.src_from(f)
        task_plan = self._runtime.kernel_plan(found, kernel)
        self._kernels.setdefault(task_plan, kernel)
        entry = (((task_plan + 1) << SRC_BITS | (site + 1)) << CODE_BITS) | MATMUL
        if site >= 0 and sim.caller is None:
            self._remember(key, f, (entry, found, self._kernels[task_plan]))
        self._append(entry)
        return ACL_SUCCESS

    def _site(self, frame, code: int) -> tuple:
        """(log entry, source text) of a host-only call from ``frame``, kept per call site (unless the line
        comes from ``Simulation.caller``)."""
        site = self.sim.src_from(frame)
        known = ((site + 1) << CODE_BITS | code, self._srcs[site] if site >= 0 else "")
        if self.sim.caller is None:
            self._remember((id(frame.f_code), frame.f_lasti), frame, known)
        return known

    def _remember(self, key: tuple, frame, known: tuple) -> None:
        self._codes[id(frame.f_code)] = frame.f_code
        self._known[key] = known

    # -- playing the log ----------------------------------------------------------------------------
    def flush(self) -> None:
        """Play the calls logged so far: host clock, waits, tasks, rows."""
        if not self._log:
            return
        sim = self.sim
        trace = sim.trace
        rt = self._runtime
        log = np.asarray(self._log, dtype=np.int64)
        self._log.clear()
        copies, self._copies = self._copies, []
        payloads, self._payloads = self._payloads, []
        ops = log & ((1 << CODE_BITS) - 1)
        src = ((log >> CODE_BITS) & ((1 << SRC_BITS) - 1)) - 1
        cost = self._cost[ops]
        for op in np.unique(ops).tolist():
            if self._call_names[op] < 0:
                self._call_names[op] = trace.name(CALLS[op][0])
        n = len(ops)
        h0 = sim.host_now
        paid = h0 + np.cumsum(cost)  # each call's cost paid, if nothing before it waited
        # the calls' rows first (their tasks name them as their cause); their times change if they wait
        first = trace.extend(
            start=paid - cost,
            end=paid,
            lane=np.full(n, sim.host_lane, dtype=np.int16),
            kind=np.full(n, Kind.CALL, dtype=np.uint8),
            name=self._call_names[ops],
            src=src.astype(np.int32),
        )
        sim.host_now = int(paid[-1])
        dev = np.flatnonzero(ops >= MEMCPY)  # the calls that meet the device
        if not len(dev):
            return
        seen0 = rt.visible
        plans = (log[dev] >> (CODE_BITS + SRC_BITS)) - 1
        waits, extra, seen = self._play(first + dev, plans, src[dev], paid[dev], copies, payloads)
        w_first, rows, w_seen = -1, None, None
        if waits:  # every call stretched by its waits, and the waits' rows
            stretch = np.zeros(n, dtype=np.int64)
            stretch[dev] = extra
            end = h0 + np.cumsum(cost + stretch)
            trace.rewrite(first, start=end - cost - stretch, end=end)
            rows, w_start, w_end, w_name, w_detail, w_seen = (
                np.asarray(c, dtype=np.int64) for c in zip(*waits, strict=True)
            )
            w_first = trace.extend(
                start=w_start,
                end=w_end,
                lane=np.full(len(rows), sim.host_lane, dtype=np.int16),
                kind=np.full(len(rows), Kind.WAIT, dtype=np.uint8),
                name=w_name.astype(np.int16),
                src=src[rows - first].astype(np.int32),
                cause=rows.astype(np.int32),
                detail=w_detail.astype(np.int32),
            )
            sim.host_now = int(end[-1])
        if waits or rt.visible > seen0:
            self._place(first, n, dev, seen, seen0, (w_first, rows, w_seen))
        rt.host_sees(rt.visible)

    def _place(self, first: int, n: int, dev, seen, seen0: int, waits: tuple) -> None:
        """Where a call-by-call run appends the rows of a flush's calls and waits (:mod:`engine.trace.order`):
        a call once the host has seen what the calls before it waited for (``seen``: per call that meets the
        device, the device events the host had seen after it; ``seen0``: before the flush), each wait after
        its call (a pageable copy's after its wait for room), once the host has seen what it waited for
        (``waits``: the first wait's row, each wait's call row and events seen, or None)."""
        order = self.sim.trace.order
        after = np.full(n, -1, dtype=np.int64)
        after[dev] = seen
        before = np.maximum.accumulate(np.concatenate([[seen0], after[:-1]]))
        order.place(first, 2 * before + 1, (first + np.arange(n)) * SUB_STEP)
        w_first, rows, w_seen = waits
        if rows is not None:
            again = np.diff(rows, prepend=-1) == 0  # a call's second wait
            order.place(w_first, 2 * w_seen + 1, rows * SUB_STEP + 1 + again)

    def finish(self) -> None:
        """The end of the section: play what is left."""
        self.flush()

    def _play(self, calls, plans, srcs, ready, copies, payloads):
        """Submit the logged tasks (``calls``: their calls' rows; ``ready``: when each one's cost is paid if
        nothing waited before it), the host waiting as the call-by-call host does. Returns the waits ``(call
        row, start, end, name, detail, events seen)``, each task's total wait and the device events the host
        had seen after each."""
        rt = self._runtime
        store = rt.store
        n = len(calls)
        table = rt.store.plans
        stream = np.array([p.stream for p in table], dtype=np.int64)[plans]
        pageable = np.array([not p.pinned for p in table], dtype=bool)[plans]
        is_copy = np.array([p.src_where != "" for p in table], dtype=bool)[plans]
        copy_at = np.full(n, -1, dtype=np.int64)
        copy_at[is_copy] = rt.extend_copies(copies) + np.arange(int(is_copy.sum()))
        kernels = self._kernels
        payload = [None if c else kernels[p] for c, p in zip(is_copy.tolist(), plans.tolist(), strict=True)]
        if payloads:
            for j, p in zip(np.flatnonzero(is_copy).tolist(), payloads, strict=True):
                payload[j] = p
        # per task, the task the host must see finished first: the one ``depth`` places back on its stream
        first_task = len(store)
        target = np.full(n, -1, dtype=np.int64)
        depth = self._depth
        on = {}  # stream ident -> the places of its calls
        for ident in np.unique(stream).tolist():
            here = on[ident] = np.flatnonzero(stream == ident)
            mine = rt.streams[ident].tasks
            ids = np.concatenate([np.asarray(mine, dtype=np.int64), first_task + here])
            place = len(mine) + np.arange(len(here))
            full = place >= depth
            target[here[full]] = ids[place[full] - depth]
        play = _Play(calls, plans, srcs, ready, stream, copy_at, payload, target)
        reach = np.maximum.accumulate(target)  # the furthest task waited for so far
        special = np.flatnonzero(pageable)
        shift = 0  # waits so far in this flush
        end = store.end
        extra, seen, waits = play.extra, play.seen, play.waits
        j = 0
        while j < n:
            if not pageable[j]:
                stop = self._plain_run(j, special, reach, on)
                if stop - j >= MIN_RUN:
                    shift = self._submit_run(play, j, stop, shift)
                    j = stop
                    continue
            x, s, call = target.item(j), rt.streams[stream.item(j)], calls.item(j)
            h = ready.item(j) + shift
            if x >= 0 and not rt.seen_ended(x):
                rt.wait_for([x])
                if end[x] > h:
                    waits.append((call, h, end[x], *self._wait_row("room", s, x), rt.visible))
                    extra[j] = end[x] - h
                    shift += end[x] - h
                    h = end[x]
            t = rt.submit(s, plans.item(j), call, srcs.item(j), h, payload=payload[j], copy_at=copy_at.item(j))
            if pageable[j]:  # staged through a pinned buffer: the host waits for the copy
                if not rt.seen_ended(t):
                    rt.wait_for([t])
                    if end[t] > h:
                        waits.append((call, h, end[t], *self._wait_row("pageable", s, t), rt.visible))
                        extra[j] += end[t] - h
                        shift += end[t] - h
                rt.host_learns(rt.task_vc(t))
            seen[j] = rt.visible
            j += 1
        return waits, extra, seen

    def _plain_run(self, j: int, special: np.ndarray, reach: np.ndarray, on: dict) -> int:
        """End of the run of plain submissions from call ``j`` (pinned, before the next pageable copy) whose
        waits are decided (every task they wait for has ended) and whose streams are busy (no task arrives at
        an idle stream; ``on``: stream ident -> the places of its calls)."""
        rt = self._runtime
        stop = len(reach)
        i = np.searchsorted(special, j)
        if i < len(special):
            stop = int(special[i])
        stop = min(stop, int(np.searchsorted(reach, rt.ended_below())))  # reach[k] < ended_below before it
        for ident, s in rt.streams.items():
            if s.running < 0 and not s.queue and ident in on:  # idle: the run ends at its next call
                mine = on[ident]
                k = np.searchsorted(mine, j)
                if k < len(mine):
                    stop = min(stop, int(mine[k]))
        return stop

    def _submit_run(self, play: _Play, j: int, stop: int, shift: int) -> int:
        """Calls ``j..stop`` (a plain run): each waits for its task's end if that is after it paid its cost,
        then submits its task, all in one block. Returns the waits so far."""
        rt = self._runtime
        xs = play.target[j:stop]
        ends = np.full(len(xs), -1, dtype=np.int64)
        # what the host has seen after each call: the device events up to the last end it waited for
        visible = np.full(len(xs), rt.visible, dtype=np.int64)
        waits_for = xs >= 0
        if waits_for.any():
            ends[waits_for], events = rt.see_ended(xs[waits_for])
            visible[waits_for] = np.maximum(events, visible[0])
        visible = np.maximum.accumulate(visible)
        play.seen[j:stop] = visible
        paid = play.ready[j:stop]
        after = np.maximum.accumulate(np.maximum(ends - paid, shift))  # the host's lateness after each call
        before = np.empty_like(after)
        before[0] = shift
        before[1:] = after[:-1]
        ss = play.stream[j:stop]
        waited = np.flatnonzero(after > before)
        if len(waited):
            play.extra[j + waited] = (after - before)[waited]
            for call, start, stop_at, s, x, events in zip(
                play.calls[j + waited].tolist(),
                (paid + before)[waited].tolist(),
                ends[waited].tolist(),
                ss[waited].tolist(),
                xs[waited].tolist(),
                visible[waited].tolist(),
                strict=True,
            ):
                play.waits.append((call, start, stop_at, *self._wait_row("room", rt.streams[s], x), events))
        rt.submit_block(
            ss,
            play.plans[j:stop],
            play.calls[j:stop],
            play.srcs[j:stop],
            paid + after,
            play.copy_at[j:stop],
            play.payload[j:stop],
        )
        return int(after[-1])

    def _wait_row(self, what: str, stream, x: int) -> tuple[int, int]:
        """(name id, detail id) of a host wait's row (on ``stream``, for task ``x``)."""
        key = (what, stream.ident) if what == "room" else (what, x)
        found = self._wait_rows.get(key)
        if found is None:
            trace = self.sim.trace
            if what == "room":
                text, on = f"room in {stream.label} (depth {self._depth})", HostWait("room", stream.ident)
            else:
                text, on = "a pageable copy (staged through a pinned buffer)", HostWait("pageable", x + 1)
            found = (trace.name(f"wait: {text}"), trace.detail(on))
            if what == "room":
                self._wait_rows[key] = found
        return found


class _Play:
    """One flush's calls that meet the device, as arrays (see :meth:`HostCallLog._play`), and what playing
    them finds: the waits, each call's total wait and the device events the host had seen after it."""

    __slots__ = ("calls", "copy_at", "extra", "payload", "plans", "ready", "seen", "srcs", "stream", "target", "waits")

    def __init__(self, calls, plans, srcs, ready, stream, copy_at, payload, target) -> None:
        self.calls, self.plans, self.srcs, self.ready = calls, plans, srcs, ready
        self.stream, self.copy_at, self.payload, self.target = stream, copy_at, payload, target
        self.waits: list[tuple] = []
        self.extra = np.zeros(len(calls), dtype=np.int64)
        self.seen = np.zeros(len(calls), dtype=np.int64)
