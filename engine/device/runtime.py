"""The device side of the runtime: streams executing their tasks on copy engines and AI cores.

The host submits a task at its current (host) time; the device sees it from that instant on.
Tasks of one stream run in order; tasks of different streams run concurrently when the resource
they need is free: one copy engine per copy, a set of AI cores per kernel (as many as
:meth:`CoreArray.need` says). Events order work across streams. Everything happens through the event
core, in simulated-time order, so the device is simulated lazily: only as far as the host needs (a
synchronize) or at the end of a run.

Tasks live in one columnar store (:mod:`engine.device.task_store`), whichever way they were submitted: one
by one by a host call, or a block at a time by a host call log (:mod:`engine.host.call_log`). The runtime
has two speeds of the same rules. In **fast mode** (``Simulation(fast=True)``) it also watches its own
state for repetition and, once a state comes back, stamps the periods that follow instead of stepping
through them (:mod:`engine.device.runtime_stamp`); the rows of stamped tasks are written from the stamps at
the end, each placed where a call-by-call run appends it (:mod:`engine.trace.order`), and the data of
stamped copies moves when the host could first see it. ``tests/test_runtime_modes.py`` runs random
host programs at both speeds and compares them, row for row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..aicore.launch import DeviceCores
from ..trace import DIRECTIONS, TASK_DETAIL, LaneKind
from .copy_engine import D2D, D2H, H2D, CopyEnginePool
from .core_array import CoreArray, CoreGrant, DeviceKernel
from .runtime_stamp import Stamper
from .stream import AclEvent, Stream, Task, TaskKind, TaskRecords, merge_clock
from .stream_scheduler import StreamScheduler
from .task_store import CORES, TaskPlan, TaskStore

if TYPE_CHECKING:
    from ..simulation import Simulation

__all__ = ("CopyPlan", "CoreArray", "CoreGrant", "DeviceKernel", "DeviceRuntime")


class DeviceRuntime(StreamScheduler):
    """Streams, events, copy engines and cores of device 0, driven by the simulation's event core."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.clock = sim.clock
        self.trace = sim.trace
        profile = sim.profile
        h = profile.host
        self.link = sim.link
        self.pools = {
            H2D: CopyEnginePool(H2D, [self._engine_lane(H2D, i) for i in range(h.copy_engines_h2d)]),
            D2H: CopyEnginePool(D2H, [self._engine_lane(D2H, i) for i in range(h.copy_engines_d2h)]),
            D2D: CopyEnginePool(D2D, [self._engine_lane(D2D, i) for i in range(h.copy_engines_d2d)]),
        }
        self.cores = CoreArray(profile.chip.architecture, profile.chip.aic_cores, profile.chip.aiv_cores)
        self.kernel_start_ps = round(h.kernel_start_us * 1e6)
        self.numerics = sim.numerics
        self.streams: dict[int, Stream] = {}
        self.events: dict[int, AclEvent] = {}
        self._next_event = 0
        self.store = TaskStore()
        self.finished: list[int] = []  # tasks in the order they finished (every kind)
        self.seen = 0  # finished[:seen] have moved their data: where the host's view of the device is
        self.grants: dict[int, CoreGrant] = {}  # running kernels' cores
        self.waits_pending = 0  # wait tasks not finished: a stream may be stuck behind one
        self.ended_floor = 0  # every task below it has ended (see ended_below)
        self.host_vc: dict[int, int] = {}  # what the host has synchronised with
        self.host_version = 0  # bumped whenever the host learns something
        # where a call-by-call run would be (engine.trace.order): the device events the host has seen processed,
        # the last event processed step by step, and the trace's length when it began
        self.visible = 0
        self.last_live = 0
        self._event_row0 = 0
        self._ai_cores = None
        self.stamper = Stamper(self) if sim.fast else None

    # -- lanes --------------------------------------------------------------------------------
    def _engine_lane(self, direction: str, unit: int) -> int:
        thread = f"{direction} engine {unit}"
        return self.trace.lane("Device 0 copy engines", thread, 2, LaneKind.COPY_ENGINE, unit=unit, direction=direction)

    def op_lane(self) -> int:
        return self.trace.lane("Device 0 AI cores", "kernels", 3, LaneKind.KERNELS)

    def ai_cores(self):
        """Per-device AI-core state (lanes, buffers, L2), created on the first instruction-level kernel."""
        if self._ai_cores is None:
            self._ai_cores = DeviceCores(self.sim)
        return self._ai_cores

    # -- resources ----------------------------------------------------------------------------
    def new_stream(self, priority: int, src: str) -> Stream:
        ident = len(self.streams)
        label = "default stream" if ident == 0 else f"stream {ident}"  # app/present/lanes.py names it for a UI
        lane = self.trace.lane("Device 0 streams", label, 1, LaneKind.STREAM, unit=ident)
        stream = Stream(ident, label, lane, priority, src)
        self.streams[ident] = stream
        return stream

    def new_event(self, src: str) -> AclEvent:
        self._next_event += 1
        event = AclEvent(self._next_event, src)
        self.events[event.ident] = event
        return event

    # -- plans --------------------------------------------------------------------------------
    def copy_plan(
        self, stream: Stream, direction: str, pinned: bool, count: int, src_where: str, dst_where: str
    ) -> int:
        plan = TaskPlan(
            stream.ident,
            TaskKind.COPY,
            direction,
            self.link.duration(direction, pinned, count),
            self.trace.name(f"{direction} copy"),
            count,
            f"{direction} copy of {count} B on {stream.label}",
            direction=direction,
            pinned=pinned,
            src_where=src_where,
            dst_where=dst_where,
        )
        return self.store.plan_id(plan)

    def kernel_plan(self, stream: Stream, kernel) -> int:
        fixed = getattr(kernel, "duration_ps", None)
        plan = TaskPlan(
            stream.ident,
            TaskKind.KERNEL,
            CORES,
            -1 if fixed is None else fixed,
            self.trace.name(kernel.name),
            getattr(kernel, "nbytes", 0),
            f"kernel {kernel.name} on {stream.label}",
            flops=0 if fixed is None else kernel.flops,
            core_type=kernel.core_type,
            block_dim=kernel.block_dim,
            reads=() if fixed is None else tuple(kernel.reads),
            writes=() if fixed is None else tuple(kernel.writes),
        )
        return self.store.plan_id(plan)

    def event_plan(self, stream: Stream, kind: TaskKind, event: AclEvent) -> int:
        if kind == TaskKind.RECORD:
            name, label = f"record {event.label}", f"record {event.label} on {stream.label}"
        else:
            name, label = f"wait {event.label}", f"{stream.label} waits for {event.label}"
        return self.store.plan_id(
            TaskPlan(stream.ident, kind, "", 0, self.trace.name(name), 0, label, event=event.ident)
        )

    # -- submission ---------------------------------------------------------------------------
    def submit(self, stream: Stream, plan: int, cause: int, src: int, at: int, **extra) -> int:
        """Queue a task of ``plan`` on ``stream``; the device sees it at ``at`` (host time). ``extra``:
        ``payload`` (what it computes or moves), ``copy`` (a copy's four numbers: source allocation ident,
        offset, destination ident, offset) or ``copy_at`` (their entry, see :meth:`extend_copies`),
        ``footprint`` ((reads, writes) of a kernel running its own code), ``target`` (a wait's record
        number). Returns the task's index (submission number - 1).

        Also gives the task its vector clock: what is known to happen before it (the earlier tasks of its
        stream, what the host had synchronised with, and for a wait the record it waits for). The
        memory-consistency check (engine.device.consistency) compares these clocks.
        """
        store = self.store
        t = len(store)
        p = store.plans[plan]
        target = extra.get("target", 0)
        know = self._stream_knows(stream, p, target)
        stream.count += 1
        c = extra.get("copy_at", -1)
        copy = extra.get("copy")
        if copy is not None:
            c = self.extend_copies(copy)
        store.append(plan, at, cause, src, stream.count, know, c)
        for key, column in (("payload", store.payload), ("footprint", store.footprint)):
            if extra.get(key) is not None:
                column[t] = extra[key]
        if target:
            store.target[t] = target
        detail = self.trace.task(t + 1, stream.ident, int(p.kind), at, p.event, p.direction)
        if detail != TASK_DETAIL + t:
            raise RuntimeError("the trace's task table and the runtime's task store disagree")
        if p.flops:
            self.trace.set_task_flops(detail, p.flops)
        if p.kind == TaskKind.RECORD:
            self.events[p.event].record_tasks.append(t)
        elif p.kind == TaskKind.WAIT:
            self.waits_pending += 1
        self._enqueue(stream, t, at)
        return t

    def submit_block(self, streams, plans, causes, srcs, at, copy_at, payloads: list) -> int:
        """Queue many copies and fixed-duration kernels at once, in this order (a host call log's): per task
        (arrays) its stream's ident, plan, host row, source line, submit time and copy entry (-1: a kernel),
        and what it moves or computes (a list, None: nothing). Every stream must be busy (no task arrives at an
        idle stream). Returns the first task's index."""
        store = self.store
        t0 = len(store)
        n = len(plans)
        count = np.zeros(n, dtype=np.int64)
        know = np.zeros(n, dtype=np.int64)
        per_stream = []
        for ident in np.unique(streams).tolist():
            stream = self.streams[ident]
            if stream.idle:
                raise RuntimeError(f"submit_block: {stream.label} is idle")
            here = np.flatnonzero(streams == ident)
            know[here] = self._stream_knows(stream, None, 0)
            count[here] = stream.count + 1 + np.arange(len(here))
            stream.count += len(here)
            per_stream.append((stream, (here + t0).tolist()))
        store.extend(plans, at, causes, srcs, count, know, copy_at)
        store.payload.update((t0 + i, p) for i, p in enumerate(payloads) if p is not None)
        for stream, mine in per_stream:
            stream.tasks.extend(mine)
            stream.queue.extend(mine)
        kind, direction, flops = self._plan_columns(plans)
        self.trace.extend_tasks(
            seq=np.arange(t0 + 1, t0 + n + 1),
            stream=streams,
            kind=kind,
            submit=at,
            event=np.full(n, -1),
            direction=direction,
            flops=flops,
        )
        return t0

    def extend_copies(self, numbers: list[int]) -> int:
        """Add copies' four numbers each (see :meth:`submit`); returns the first one's entry."""
        first = len(self.store.copies) // 4
        self.store.copies.fromlist(numbers)  # in C: half the time of a numpy array's bytes
        return first

    def _plan_columns(self, plans: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ps = self.store.plans
        ids = np.asarray(plans, dtype=np.int64)
        kind = np.array([p.kind for p in ps], dtype=np.int64)[ids]
        direction = np.array([DIRECTIONS.index(p.direction) for p in ps], dtype=np.int64)[ids]
        flops = np.array([p.flops for p in ps], dtype=np.int64)[ids]
        return kind, direction, flops

    def _stream_knows(self, stream: Stream, plan: TaskPlan | None, target: int) -> int:
        """What ``stream``'s next task knows to happen before it, as an index in ``stream.known``."""
        wait = plan is not None and plan.kind == TaskKind.WAIT
        if stream.host_version != self.host_version or wait:
            known = dict(stream.known[-1])
            merge_clock(known, self.host_vc)
            if wait:
                records = self.events[plan.event].record_tasks
                if 0 < target <= len(records):
                    merge_clock(known, self.task_vc(records[target - 1]))
            stream.host_version = self.host_version
            if known != stream.known[-1]:
                stream.known.append(known)
        return len(stream.known) - 1

    def _enqueue(self, stream: Stream, t: int, at: int) -> None:
        stream.tasks.append(t)
        if stream.running < 0 and not stream.queue and at < self.clock.now and self.stamper is not None:
            self.stamper.rewind(at)  # the device was stamped ahead of the host: back to before ``at``
        if stream.running < 0 and not stream.queue:
            stream.queue.append(t)
            self.clock.schedule(at, self.arrive, stream.ident)
        else:
            stream.queue.append(t)

    def task(self, t: int) -> Task:
        return Task(self, t)

    def task_vc(self, t: int) -> dict[int, int]:
        """Task ``t``'s vector clock."""
        store = self.store
        stream = store.plans[store.plan[t]].stream
        vc = dict(self.streams[stream].known[store.know[t]])
        vc[stream] = store.count[t]
        return vc

    def host_learns(self, vc: dict[int, int]) -> None:
        """The host waited for work with clock ``vc``: everything it submits later comes after it."""
        if any(self.host_vc.get(k, 0) < v for k, v in vc.items()):
            merge_clock(self.host_vc, vc)
            self.host_version += 1

    # -- driving ------------------------------------------------------------------------------
    def wait_for(self, tasks: list[int] | None) -> bool:
        """Simulate until every task of ``tasks`` has ended (None: one that never can), the host seeing
        them; False if that never happens (nothing left to run)."""
        end = self.store.end
        if tasks is None:
            ok = self.clock.run_until(lambda: False)
        elif len(tasks) == 1:
            x = tasks[0]
            ok = self.clock.run_until(lambda: end[x] >= 0)
        else:
            ok = self.clock.run_until(lambda: all(end[x] >= 0 for x in tasks))
        if ok:
            self.see_tasks(tasks)
        else:
            self.bring_data_up()
            self.host_sees(self.clock.processed)
        return ok

    def see_tasks(self, tasks: list[int]) -> None:
        """The host sees ``tasks`` end (they have ended): their data and that of the tasks that ended before
        them move, and it has seen the events up to the last of their ends."""
        if tasks:
            last = max(tasks, key=self.store.fin.__getitem__)  # the last to end
            self._see(self.store.fin[last] + 1)
            self.host_sees(self.end_event(last))

    def end_event(self, t: int) -> int:
        """The device event that ended task ``t`` (it has ended)."""
        e = self.store.end_ev[t]
        return e if e >= 0 else int(self.stamper.end_events(np.array([self.store.fin[t]]))[0])

    def see_ended(self, tasks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`see_tasks` for many tasks (an array); returns when each one ended and the device event
        that ended it."""
        store = self.store
        lo, hi = int(tasks.min()), int(tasks.max()) + 1
        at = tasks - lo
        fin = np.asarray(store.fin[lo:hi], dtype=np.int64)[at]
        ev = np.asarray(store.end_ev[lo:hi], dtype=np.int64)[at]
        stamped = ev < 0
        if stamped.any():
            ev[stamped] = self.stamper.end_events(fin[stamped])
        self._see(int(fin.max()) + 1)
        self.host_sees(int(ev.max()))
        return np.asarray(store.end[lo:hi], dtype=np.int64)[at], ev

    def run_to_idle(self) -> None:
        """Simulate until every stream is idle or stuck (nothing left to run)."""
        self.clock.run_until(self.all_idle)
        self.bring_data_up()
        self.host_sees(self.clock.processed)  # nothing is left when every stream is idle

    def run_until_time(self, time: int) -> None:
        """Simulate every event at or before ``time``; the host sees what ended by then."""
        self.clock.run_until_time(time)
        end, finished = self.store.end, self.finished
        while self.seen < len(finished) and end[finished[self.seen]] <= time:
            self._effect(finished[self.seen])
            self.seen += 1
        last = self.end_event(finished[self.seen - 1]) if self.seen else 0
        self.host_sees(max(self.last_live, last))

    def step(self) -> bool:
        """Process the next device event (a front end single-stepping); False when nothing is pending."""
        ok = self.clock.step()
        self.host_sees(self.last_live)
        return ok

    def drain(self) -> None:
        """Run every pending device event (end of a run), then write the rows kept for the end."""
        while self.clock.step():
            pass
        self.bring_data_up()
        if self.stamper is not None:
            self.stamper.write_rows()
        self.host_sees(self.clock.processed)

    def host_sees(self, events: int) -> None:
        """The host has seen the device process ``events`` events (a call-by-call run's device would have
        processed that many): its rows from now on come after theirs."""
        if events > self.visible:
            self.visible = events
        self.trace.order.live(len(self.trace), 2 * self.visible + 1)

    def all_idle(self) -> bool:
        return all(s.idle for s in self.streams.values())

    def blocked(self) -> list[Task]:
        """Tasks that can never run: each stream's head when nothing is left to simulate."""
        out = []
        for stream in self.streams.values():
            if stream.running >= 0:
                out.append(Task(self, stream.running))
            elif stream.queue:
                out.append(Task(self, stream.queue[0]))
        return out

    def queued(self, stream: Stream) -> list[Task]:
        """The tasks of ``stream`` not finished: the one it runs, then its queue."""
        ids = ([stream.running] if stream.running >= 0 else []) + list(stream.queue)
        return [Task(self, t) for t in ids]

    def records(self) -> TaskRecords:
        """Every task submitted, as records built when read (plain data)."""
        labels = {s.ident: s.label for s in self.streams.values()}
        known = {s.ident: tuple(s.known) for s in self.streams.values()}
        return TaskRecords([], [self.store.freeze(labels, known)])


@dataclass
class CopyPlan:
    """What a copy moves: resolved when it is submitted, performed when the engine finishes.

    ``source`` and ``target`` are ``(memory, allocation, offset)``: :meth:`source_bytes` and
    :meth:`target_bytes` are the ``count`` bytes read and written (a copy probe looks at them).
    """

    direction: str
    pinned: bool
    count: int
    source: tuple
    target: tuple

    def perform(self) -> None:
        self.target_bytes()[:] = self.source_bytes()

    def source_bytes(self) -> np.ndarray:
        mem, alloc, off = self.source
        return mem.view(alloc)[off : off + self.count]

    def target_bytes(self) -> np.ndarray:
        mem, alloc, off = self.target
        return mem.view(alloc)[off : off + self.count]
