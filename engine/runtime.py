"""The device side of the runtime: streams executing their tasks on copy engines and AI cores.

The host submits a task at its current (host) time; the device sees it from that instant on.
Tasks of one stream run in order; tasks of different streams run concurrently when the resource
they need is free: one copy engine per copy, a set of AI cores per kernel (as many as
:meth:`CoreArray.need` says). Events order work across streams. Everything happens through the event
core, in simulated-time order, so the device is simulated lazily: only as far as the host needs (a
synchronize) or at the end of a run.

Tasks live in one columnar store (:mod:`engine.task_store`), whichever way they were submitted: one
by one by a host call, or a block at a time by a host call log (:mod:`engine.host_log`). The runtime
has two speeds of the same rules. In **fast mode** (``Simulation(fast=True)``) it also watches its own
state for repetition and, once a state comes back, stamps the periods that follow instead of stepping
through them (:mod:`engine.runtime_stamp`); the rows of stamped tasks and of a call log's tasks are
written from the columns at the end, and the data of stamped copies moves when the host could first
see it. ``tests/test_runtime_modes.py`` runs random host programs at both speeds and compares them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from heapq import heappop, heappush
from typing import TYPE_CHECKING, Protocol

import numpy as np

from .copy_engine import D2D, D2H, H2D, CopyEnginePool
from .runtime_stamp import Stamper
from .stream import AclEvent, Stream, Task, TaskKind, TaskRecords, merge_clock
from .task_store import CORES, TaskPlan, TaskStore
from .trace import DIRECTIONS, TASK_DETAIL, Kind, LaneKind

if TYPE_CHECKING:
    from .simulation import Simulation


class DeviceKernel(Protocol):
    """What a kernel launch hands the device: instruction-level kernels and library ops implement it.

    A kernel either runs its own code (``execute``), or has a fixed duration known when it is submitted
    (``duration_ps``: a library op costed by a model; the runtime then writes its row on the AI-core lane).
    """

    name: str
    core_type: str  # "cube", "vector" or "mix"
    block_dim: int

    def execute(self, runtime: DeviceRuntime, task: Task, start: int, cores: CoreGrant) -> int:
        """Run on the granted cores from ``start`` (ps); record trace events; return the end time."""
        ...


@dataclass(frozen=True)
class CoreGrant:
    """The physical cores a kernel received: AIC ids and AIV ids."""

    aic: tuple[int, ...]
    aiv: tuple[int, ...]


class CoreArray:
    """The AI cores of one device as two pools (AIC and AIV), granted to kernels in queue order."""

    def __init__(self, architecture: str, aic: int, aiv: int) -> None:
        self.architecture = architecture
        self.n_aic = aic
        self.n_aiv = aiv
        self.free_aic = list(range(aic))
        self.free_aiv = list(range(aiv))
        self.waiting: list[tuple] = []  # (priority, seq, task, kernel)

    def need(self, core_type: str, block_dim: int) -> tuple[int, int]:
        """(AIC, AIV) counts a kernel of this type and block count occupies."""
        if self.architecture == "coupled":
            if core_type == "vector":
                n = min(block_dim, self.n_aic + self.n_aiv)
                a = min(n, self.n_aic)
                return a, n - a
            return min(block_dim, self.n_aic), 0
        if core_type == "cube":
            return min(block_dim, self.n_aic), 0
        if core_type == "vector":
            return 0, min(block_dim, self.n_aiv)
        groups = min(block_dim, self.n_aic, self.n_aiv // 2)
        return groups, 2 * groups

    def request(self, priority: int, seq: int, task, kernel=None) -> None:
        """Queue ``task`` for cores; ``kernel`` (default: ``task.payload``) says its core type and block count."""
        heappush(self.waiting, (priority, seq, task, kernel if kernel is not None else task.payload))

    def grant(self) -> tuple[CoreGrant, object] | None:
        """Grant the first waiting kernel if its cores are free (no overtaking: FIFO by priority)."""
        if not self.waiting:
            return None
        _priority, _seq, task, kernel = self.waiting[0]
        a, v = self.need(kernel.core_type, kernel.block_dim)
        if a > len(self.free_aic) or v > len(self.free_aiv):
            return None
        self.free_aic.sort()
        self.free_aiv.sort()
        if kernel.core_type == "mix" and self.architecture == "split":
            # whole AI cores: AIC i works with AIV 2i and 2i+1 (mode-2 cross-core flags stay inside one)
            free_aiv = set(self.free_aiv)
            aic = [i for i in self.free_aic if 2 * i in free_aiv and 2 * i + 1 in free_aiv][:a]
            if len(aic) < a:
                return None
            aiv = [j for i in aic for j in (2 * i, 2 * i + 1)]
            self.free_aic = [i for i in self.free_aic if i not in aic]
            self.free_aiv = [j for j in self.free_aiv if j not in aiv]
        else:
            aic, self.free_aic = self.free_aic[:a], self.free_aic[a:]
            aiv, self.free_aiv = self.free_aiv[:v], self.free_aiv[v:]
        heappop(self.waiting)
        return CoreGrant(tuple(aic), tuple(aiv)), task

    def release(self, grant: CoreGrant) -> None:
        self.free_aic.extend(grant.aic)
        self.free_aiv.extend(grant.aiv)


class DeviceRuntime:
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
            from .aicore.launch import DeviceCores

            self._ai_cores = DeviceCores(self.sim)
        return self._ai_cores

    # -- resources ----------------------------------------------------------------------------
    def new_stream(self, priority: int, src: str, label: str | None = None) -> Stream:
        ident = len(self.streams)
        label = label or ("default stream" if ident == 0 else f"stream {ident}")
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
        number), ``later`` (its rows are written from the columns at the end). Returns the task's index
        (submission number - 1).

        Also gives the task its vector clock: what is known to happen before it (the earlier tasks of its
        stream, what the host had synchronised with, and for a wait the record it waits for). The
        memory-consistency check of the analysis compares these clocks.
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
        store.append(plan, at, cause, src, stream.count, know, c, 1 if extra.get("later") else 0)
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

    def submit_block(
        self, streams: list, plans: list, causes: list, srcs: list, at: list, copy_at: list, payloads: dict
    ) -> int:
        """Queue many copies and fixed-duration kernels at once, in this order (a host call log's): per task
        its stream's ident, plan, host row, source line, submit time and copy entry (-1: a kernel);
        ``payloads``: position -> what it moves or computes. Every stream must be busy (no task arrives at an
        idle stream). Their rows are written from the columns at the end. Returns the first task's index."""
        store = self.store
        t0 = len(store)
        n = len(plans)
        ids = np.asarray(streams, dtype=np.int64)
        count = np.zeros(n, dtype=np.int64)
        know = np.zeros(n, dtype=np.int64)
        per_stream = []
        for ident in np.unique(ids).tolist():
            stream = self.streams[ident]
            if stream.idle:
                raise RuntimeError(f"submit_block: {stream.label} is idle")
            here = np.flatnonzero(ids == ident)
            know[here] = self._stream_knows(stream, None, 0)
            count[here] = stream.count + 1 + np.arange(len(here))
            stream.count += len(here)
            per_stream.append((stream, (here + t0).tolist()))
        store.extend(plans, at, causes, srcs, count.tolist(), know.tolist(), copy_at)
        for i, payload in payloads.items():
            store.payload[t0 + i] = payload
        for stream, mine in per_stream:
            stream.tasks.extend(mine)
            stream.queue.extend(mine)
        kind, direction, flops = self._plan_columns(plans)
        self.trace.extend_tasks(
            seq=np.arange(t0 + 1, t0 + n + 1),
            stream=ids,
            kind=kind,
            submit=np.asarray(at, dtype=np.int64),
            event=np.full(n, -1),
            direction=direction,
            flops=flops,
        )
        return t0

    def set_causes(self, first: int, causes: list) -> None:
        """The host rows of tasks ``first...`` (a call log writes its calls' rows after playing them)."""
        self.store.cause[first : first + len(causes)] = causes

    def extend_copies(self, numbers: list) -> int:
        """Add copies' four numbers each (see :meth:`submit`); returns the first one's entry."""
        first = len(self.store.copies) // 4
        self.store.copies.extend(numbers)
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
            self.clock.schedule(at, self._arrive, stream.ident)
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

    # -- the device ---------------------------------------------------------------------------
    def _arrive(self, ident: int) -> None:
        if self.stamper is not None:
            self.stamper.stepped()
        stream = self.streams[ident]
        if stream.running < 0:
            self._advance(stream)

    def _advance(self, stream: Stream) -> None:
        """Start the next task of an idle stream, if any."""
        if not stream.queue:
            return
        store = self.store
        t = stream.queue[0]
        now = self.clock.now
        if store.submit[t] > now:  # its predecessor finished before the host had submitted it
            self.clock.schedule(store.submit[t], self._arrive, stream.ident)
            return
        stream.queue.popleft()
        stream.running = t
        plan = store.plans[store.plan[t]]
        kind = plan.kind
        if kind == TaskKind.COPY:
            pool = self.pools[plan.resource]
            if pool.free and not pool.waiting:  # an engine is idle and nobody queues: start now
                self._start_copy(t, heappop(pool.free))
            else:
                pool.request(stream.priority, t, t)
                self._dispatch_copies(pool)
        elif kind == TaskKind.KERNEL:
            self.cores.request(stream.priority, t, t, plan)
            self._dispatch_kernels()
        elif kind == TaskKind.RECORD:
            event = self.events[plan.event]
            event.records_done += 1
            event.record_times.append(now)
            store.start[t] = store.end[t] = now
            self.trace.add(
                now,
                now,
                stream.lane,
                Kind.MARK,
                plan.name,
                cause=store.cause[t],
                src=store.src[t],
                detail=TASK_DETAIL + t,
            )
            waiters, event.waiters = event.waiters, []
            for waiter in waiters:
                self._try_wait(waiter)
            self._complete(t)
        else:  # WAIT
            store.start[t] = now
            self._try_wait(t)

    def _try_wait(self, t: int) -> None:
        store = self.store
        plan = store.plans[store.plan[t]]
        event = self.events[plan.event]
        if event.records_done >= store.target[t]:
            now = self.clock.now
            store.end[t] = now
            lane = self.streams[plan.stream].lane
            self.trace.add(
                store.start[t],
                now,
                lane,
                Kind.WAIT,
                plan.name,
                cause=store.cause[t],
                src=store.src[t],
                detail=TASK_DETAIL + t,
            )
            self.waits_pending -= 1
            self._complete(t)
        else:
            event.waiters.append(t)

    def _dispatch_copies(self, pool: CopyEnginePool) -> None:
        while (granted := pool.grant()) is not None:
            self._start_copy(granted[1], granted[0])

    def _start_copy(self, t: int, unit: int) -> None:
        store = self.store
        store.unit[t] = unit
        store.start[t] = now = self.clock.now
        self.clock.schedule(now + store.plans[store.plan[t]].run, self.end_task, t)

    def _dispatch_kernels(self) -> None:
        store = self.store
        while (granted := self.cores.grant()) is not None:
            grant, t = granted
            store.start[t] = now = self.clock.now
            plan = store.plans[store.plan[t]]
            start = now + self.kernel_start_ps
            if plan.run >= 0:  # a fixed duration (a library op): its row on the AI-core lane
                end = start + plan.run
                if not store.later[t]:
                    self.trace.add(
                        start,
                        end,
                        self.op_lane(),
                        Kind.KERNEL,
                        plan.name,
                        plan.nbytes,
                        store.cause[t],
                        store.src[t],
                        TASK_DETAIL + t,
                    )
            else:  # runs its own code, reading device memory as it is now
                self.bring_data_up()
                kernel = store.payload[t]
                end = kernel.execute(self, Task(self, t), start, grant)
                reads = store.footprint.get(t, ((), ()))[0]
                store.footprint[t] = (reads, tuple(getattr(kernel, "writes", ())))  # known once it ran
                self.trace.set_task_flops(TASK_DETAIL + t, getattr(kernel, "flops", 0))  # counted as it ran
            self.grants[t] = grant
            self.clock.schedule(end, self.end_task, t)

    def end_task(self, t: int) -> None:
        """A copy or a kernel ends: its rows, its data, its engine or cores back, the next task of its stream."""
        stamper = self.stamper
        if stamper is not None:
            stamper.stepped()
        store = self.store
        now = self.clock.now
        store.end[t] = now
        plan = store.plans[store.plan[t]]
        if not store.later[t]:
            self.finish_rows(t)
        self._finished(t)
        if plan.kind == TaskKind.COPY:
            pool = self.pools[plan.resource]
            pool.release(store.unit[t])
            self._dispatch_copies(pool)
        else:
            self.cores.release(self.grants.pop(t))
            self._dispatch_kernels()
        self._complete(t)
        if stamper is not None and plan.repeatable:
            stamper.ended(t)

    def finish_rows(self, t: int) -> None:
        """The rows a copy or kernel writes when it ends: on its stream's lane, and a copy on its engine's."""
        store = self.store
        plan = store.plans[store.plan[t]]
        lane = self.streams[plan.stream].lane
        args = (plan.name, plan.nbytes, store.cause[t], store.src[t], TASK_DETAIL + t)
        if plan.kind == TaskKind.COPY:
            engine = self.pools[plan.resource].lanes[store.unit[t]]
            self.trace.add_pair(store.start[t], store.end[t], lane, engine, Kind.COPY, *args)
        else:
            self.trace.add(store.start[t], store.end[t], lane, Kind.KERNEL, *args)

    def _finished(self, t: int) -> None:
        place = len(self.finished)
        self.finished.append(t)
        self.store.fin[t] = place
        if self.seen < place:  # stamped tasks before it move their data first
            self._see(place)
        if self.seen == place:
            self._effect(t)
            self.seen = place + 1
        # else: a task stepped through again after a rewind, whose data moved the first time

    def _complete(self, t: int) -> None:
        store = self.store
        stream = self.streams[store.plans[store.plan[t]].stream]
        error = store.error.get(t, 0)
        if error and not stream.error:
            stream.error = error
        stream.running = -1
        if store.fin[t] < 0:  # a record or a wait
            self._finished(t)
        self._advance(stream)

    # -- data ---------------------------------------------------------------------------------
    def _effect(self, t: int) -> None:
        """What a finished task does to memory: a copy moves its bytes (between the copy probe's two looks),
        a library kernel writes its result."""
        store = self.store
        payload = store.payload.get(t)
        if payload is None:
            return
        kind = store.plans[store.plan[t]].kind
        if kind == TaskKind.COPY:
            if self.numerics:
                probe = self.sim.copy_probe
                if probe is not None:
                    probe(t + 1, payload, "before")
                payload.perform()
                if probe is not None:
                    probe(t + 1, payload, "after")
        elif kind == TaskKind.KERNEL:
            finish = getattr(payload, "finish", None)
            if finish is not None:
                finish()

    def _see(self, upto: int) -> None:
        """The host's view reaches ``finished[:upto]``: their data moves, in the order they finished."""
        if not self.numerics:  # nothing moves (a library kernel computes only with numerics)
            self.seen = max(self.seen, upto)
            return
        finished = self.finished
        while self.seen < upto:
            self._effect(finished[self.seen])
            self.seen += 1

    def bring_data_up(self) -> None:
        """Everything the device has finished moves its data (before something reads device memory)."""
        self._see(len(self.finished))

    def see_through(self, t: int) -> None:
        """The host saw task ``t`` end (it had ended): its data and that of the tasks before it move."""
        self._see(self.store.fin[t] + 1)

    def ended_below(self) -> int:
        """The first task that has not ended (every task below it has)."""
        end, k = self.store.end, self.ended_floor
        while k < len(end) and end[k] >= 0:
            k += 1
        self.ended_floor = k
        return k

    def seen_ended(self, t: int) -> bool:
        """Has the host's view of the device seen task ``t`` end (the device simulated that far)?"""
        fin = self.store.fin[t]
        return 0 <= fin < self.seen

    def pending(self, stream: Stream) -> int:
        """Tasks of ``stream`` the host's view has not seen end."""
        tasks = stream.tasks
        n = 0
        for t in reversed(tasks):
            if self.seen_ended(t):
                break
            n += 1
        return n

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
            fin = self.store.fin
            self._see(max((fin[x] for x in tasks), default=-1) + 1)
        else:
            self.bring_data_up()
        return ok

    def run_until(self, done: Callable[[], bool]) -> bool:
        """Simulate the device until ``done()`` holds; False if it never can (nothing left to run)."""
        ok = self.clock.run_until(done)
        self.bring_data_up()
        return ok

    def run_until_time(self, time: int) -> None:
        """Simulate every event at or before ``time``; the host sees what ended by then."""
        self.clock.run_until_time(time)
        end, finished = self.store.end, self.finished
        while self.seen < len(finished) and end[finished[self.seen]] <= time:
            self._effect(finished[self.seen])
            self.seen += 1

    def drain(self) -> None:
        """Run every pending device event (end of a run), then write the rows kept for the end."""
        while self.clock.step():
            pass
        self.bring_data_up()
        self._later_rows()

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

    # -- rows from the columns ------------------------------------------------------------------
    def _later_rows(self) -> None:
        """Two rows per copy or kernel whose rows were kept for the end, in the order they finished: its
        stream's lane, and its engine or the AI-core lane (a kernel's row there starts after the launch
        overhead)."""
        store = self.store
        later = np.asarray(store.later, dtype=np.int64) > 0
        if not later.any():
            return
        order = np.asarray(self.finished, dtype=np.int64)
        order = order[later[order]]
        ps = store.plans
        if not len(order) or not ps:
            return
        plan = np.asarray(store.plan, dtype=np.int64)[order]
        kind = np.array([p.kind for p in ps], dtype=np.int64)[plan]
        keep = np.isin(kind, (TaskKind.COPY, TaskKind.KERNEL))
        order, plan, kind = order[keep], plan[keep], kind[keep]
        start = np.asarray(store.start, dtype=np.int64)[order]
        end = np.asarray(store.end, dtype=np.int64)[order]
        unit = np.asarray(store.unit, dtype=np.int64)[order]
        stream_lane = np.array([self.streams[p.stream].lane for p in ps], dtype=np.int16)[plan]
        is_kernel = kind == TaskKind.KERNEL
        second = np.full(len(order), self.op_lane() if is_kernel.any() else -1, dtype=np.int16)
        for direction, pool in self.pools.items():
            sel = np.array([p.resource == direction for p in ps], dtype=bool)[plan]
            if sel.any():
                second[sel] = np.array(pool.lanes, dtype=np.int16)[unit[sel]]
        row_kind = np.where(is_kernel, Kind.KERNEL, Kind.COPY).astype(np.uint8)
        name = np.array([p.name for p in ps], dtype=np.int16)[plan]
        nbytes = np.array([p.nbytes for p in ps], dtype=np.int64)[plan]
        cause = np.asarray(store.cause, dtype=np.int32)[order]
        src = np.asarray(store.src, dtype=np.int32)[order]
        detail = (order + TASK_DETAIL).astype(np.int32)
        # a kernel that started on the fly wrote its AI-core row then
        two = ~is_kernel | (np.asarray(store.later, dtype=np.int64)[order] == 1)

        def both(x: np.ndarray) -> np.ndarray:
            return np.concatenate([x, x[two]])

        self.trace.extend(
            start=np.concatenate([start, np.where(is_kernel, start + self.kernel_start_ps, start)[two]]),
            end=both(end),
            lane=np.concatenate([stream_lane, second[two]]),
            kind=both(row_kind),
            name=both(name),
            nbytes=both(nbytes),
            cause=both(cause),
            src=both(src),
            detail=both(detail),
        )
        store.later[:] = [0] * len(store.later)


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
