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

from sys import _getframe

import numpy as np

from ..acl_codes import ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE, ACL_SUCCESS, AclError
from ..copy_engine import D2H, H2D
from ..op_matmul import OpMatmul
from ..stream import TaskKind
from ..trace import DIRECTIONS
from .bulk_log import (
    CALLS,
    CODE_BITS,
    FAILED,
    FREE_HOST,
    MALLOC_HOST,
    MATMUL,
    MEMCPY,
    PLAN_SHIFT,
    RES_CORES,
    RES_D2H,
    RES_H2D,
    SYNC,
    BulkTasks,
)
from .bulk_play import LogPlayer
from .lean_device import LeanDevice


class BulkHost(LogPlayer):
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
        cost = [sim.us(getattr(host, attr)) for _name, attr in CALLS]
        self._cost = cost + [0] * (FAILED - len(cost)) + cost
        names = [sim.trace.name(name) for name, _attr in CALLS]
        self._call_names = names + [0] * (FAILED - len(names)) + names
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
            known = self._learn_site(f, MALLOC_HOST)
        try:
            if not self._state.initialized:
                self.sim.require_init()
            ptr = self._malloc(size, known[1]).ptr
        except AclError as exc:
            return 0, self._fail(MALLOC_HOST, known[2], exc)
        self._append(known[0])
        return ptr, ACL_SUCCESS

    def free_host(self, ptr: int) -> int:
        f = _getframe(1)
        known = self._known.get((f.f_code, f.f_lasti))
        if known is None:
            known = self._learn_site(f, FREE_HOST)
        try:
            if not self._state.initialized:
                self.sim.require_init()
            self._free(ptr, known[1])
        except AclError as exc:
            return self._fail(FREE_HOST, known[2], exc)
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
            return self._fail(MEMCPY, site, exc)
        direction, pinned, count = plan.direction, plan.pinned, plan.count
        if direction not in (H2D, D2H):
            raise NotImplementedError(f"bulk host: {direction} copies are not part of the batch section")
        key = (found[1], direction, pinned, count, s_.where, d.where)
        plan = self._plan_ids.get(key)
        if plan is None:
            plan = self._copy_plan(found, key)
        entry = ((plan << PLAN_SHIFT | (site + 1)) << CODE_BITS) | MEMCPY
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
                if not len(self._log) & 4095:  # progress, once in a while: the calls logged so far
                    self.sim.trace.progress(len(self._log))
                return ACL_SUCCESS
        site = self._site(f)
        try:
            if self._state.device is None:
                self.sim.require_device()
            found = self._stream(stream, "matmul")
            kernel = OpMatmul.plan(self.sim, a, b, c, m, n, k, out_dtype)
        except AclError as exc:
            return self._fail(MATMUL, site, exc)
        key = (found[1], a, b, c, m, n, k, out_dtype)
        plan = self._plan_ids.get(key)
        if plan is None:
            plan = self._kernel_plan(found, kernel, key)
        entry = ((plan << PLAN_SHIFT | (site + 1)) << CODE_BITS) | MATMUL
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
            return self._fail(SYNC, site, exc)
        key = (found[1], "sync")
        plan = self._plan_ids.get(key)
        if plan is None:
            plan = self._add_plan(key, (found[1], -1, 0, -1, 0, 0, -1, 0, 0, None, None, None))
        self._append(((plan << PLAN_SHIFT | (site + 1)) << CODE_BITS) | SYNC)
        if self._numerics:  # what the host reads after a synchronize must be there
            self.flush()
            self._move_data()
        return ACL_SUCCESS

    # -- helpers of the calls -----------------------------------------------------------------------
    def _site(self, frame) -> int:
        """The source line of a call made from ``frame``: the first frame outside the simulator."""
        return self.sim.src_from(frame)

    def _learn_site(self, frame, code: int) -> tuple:
        """(log entry, source text, source id) of a host-only call from ``frame``, kept when the caller is
        the program itself (an internal caller's line depends on who called it)."""
        site = self._site(frame)
        known = ((site + 1) << CODE_BITS | code, self._srcs[site] if site >= 0 else "", site)
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
                RES_H2D if direction == H2D else RES_D2H,
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
                RES_CORES,
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

        self._log.append((site + 1) << CODE_BITS | (code + FAILED))
        self.flush()
        sim = self.sim
        call = ApiCall(sim, CALLS[code][0], self._cost[code])
        call.src = site
        first_call, first_row = self._played_rows[-1]
        call.row = first_row + len(self._log) - 1 - first_call
        call.start = sim.host_now - self._cost[code]
        if not call.__exit__(type(exc), exc, exc.__traceback__):
            raise exc
        return call.ret

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
