"""The device side of the runtime: streams executing their tasks on copy engines and AI cores.

The host submits a task at its current (host) time; the device sees it from that instant on.
Tasks of one stream run in order; tasks of different streams run concurrently when the resource
they need is free: one copy engine per copy, a set of AI cores per kernel. Events order work across
streams. Everything happens through the event core, in simulated-time order, so the device is
simulated lazily: only as far as the host needs (a synchronize) or at the end of a run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from heapq import heappop, heappush
from typing import TYPE_CHECKING, Protocol

import numpy as np

from .copy_engine import D2D, D2H, H2D, H2H, CopyEnginePool
from .stream import AclEvent, Stream, Task, TaskKind, merge_clock
from .trace import Kind, LaneKind

if TYPE_CHECKING:
    from .simulation import Simulation


class DeviceKernel(Protocol):
    """What a kernel launch hands the device: instruction-level kernels and library ops implement it."""

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
        self.waiting: list[tuple[int, int, Task]] = []

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

    def request(self, priority: int, seq: int, task: Task) -> None:
        heappush(self.waiting, (priority, seq, task))

    def grant(self) -> tuple[CoreGrant, Task] | None:
        """Grant the first waiting kernel if its cores are free (no overtaking: FIFO by priority)."""
        if not self.waiting:
            return None
        task = self.waiting[0][2]
        kernel = task.payload
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
        self._next_stream = 0
        self._next_event = 0
        self._seq = 0
        self.tasks_done = 0
        self.completed: list[Task] = []  # finished copies and kernels, for the memory-consistency check
        self._ai_cores = None
        self.history: list[Task] = []  # every submitted task, in submission order
        self.records: list = []  # the BulkTasks blocks of the tasks a bulk path ran outside this runtime
        self.host_vc: dict[int, int] = {}  # what the host has synchronised with
        self._names = {
            "wait": self.trace.name("stream_wait_event"),
            "record": self.trace.name("record_event"),
        }

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
        ident = self._next_stream
        self._next_stream += 1
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

    # -- submission ---------------------------------------------------------------------------
    def make_task(self, stream: Stream, kind: TaskKind, name: int, cause: int, src: int, **kw) -> Task:
        self._seq += 1
        return Task(self._seq, stream, kind, name, self.sim.host_now, cause, src, **kw)

    def submit(self, task: Task) -> None:
        """Queue ``task`` on its stream; the device sees it at ``task.submit`` (host time).

        Also stamps the task's vector clock: what is known to happen before it (the earlier tasks of
        its stream, what the host had synchronised with, and for a wait the record it waits for).
        The memory-consistency check of the analysis compares these clocks.
        """
        stream = task.stream
        stream.submitted += 1
        vc = dict(stream.vc)
        merge_clock(vc, self.host_vc)
        if task.kind == TaskKind.WAIT and 0 < task.target <= len(task.event.record_tasks):
            merge_clock(vc, task.event.record_tasks[task.target - 1].vc)
        stream.count += 1
        vc[stream.ident] = stream.count
        task.vc = stream.vc = vc
        direction = task.payload.direction if task.kind == TaskKind.COPY else ""
        event = task.event.ident if task.event is not None else -1
        task.detail = self.trace.task(task.seq, stream.ident, int(task.kind), task.submit, event, direction)
        if task.kind == TaskKind.RECORD:
            task.event.record_tasks.append(task)
        self.history.append(task)
        if stream.running is None and not stream.queue:
            stream.queue.append(task)
            self.clock.schedule(task.submit, self._arrive, stream)
        else:
            stream.queue.append(task)

    def _arrive(self, stream: Stream) -> None:
        if stream.running is None:
            self._advance(stream)

    def _advance(self, stream: Stream) -> None:
        """Start the next task of an idle stream, if any."""
        if not stream.queue:
            return
        task = stream.queue[0]
        now = self.clock.now
        if task.submit > now:  # its predecessor finished before the host had submitted it
            self.clock.schedule(task.submit, self._arrive, stream)
            return
        stream.queue.popleft()
        stream.running = task
        task.ready = now
        kind = task.kind
        if kind == TaskKind.COPY:
            pool = task.resource
            if pool.free and not pool.waiting:  # an engine is idle and nobody queues: start now
                self._start_copy(task, heappop(pool.free))
            else:
                pool.request(stream.priority, task.seq, task)
                self._dispatch_copies(pool)
        elif kind == TaskKind.KERNEL:
            self.cores.request(stream.priority, task.seq, task)
            self._dispatch_kernels()
        elif kind == TaskKind.RECORD:
            event = task.event
            event.records_done += 1
            event.record_times.append(now)
            task.start = task.end = now
            detail = task.detail
            self.trace.add(now, now, stream.lane, Kind.MARK, task.name, cause=task.cause, src=task.src, detail=detail)
            waiters, event.waiters = event.waiters, []
            for waiter in waiters:
                self._try_wait(waiter)
            self._complete(task)
        else:  # WAIT
            task.start = now
            self._try_wait(task)

    def _try_wait(self, task: Task) -> None:
        event = task.event
        if event.records_done >= task.target:
            now = self.clock.now
            task.end = now
            self.trace.add(
                task.start,
                now,
                task.stream.lane,
                Kind.WAIT,
                task.name,
                cause=task.cause,
                src=task.src,
                detail=task.detail,
            )
            self._complete(task)
        else:
            event.waiters.append(task)

    def _dispatch_copies(self, pool: CopyEnginePool) -> None:
        while (granted := pool.grant()) is not None:
            self._start_copy(granted[1], granted[0])

    def _start_copy(self, task: Task, unit: int) -> None:
        task.unit = unit
        task.start = now = self.clock.now
        plan = task.payload
        self.clock.schedule(now + self.link.duration(plan.direction, plan.pinned, task.nbytes), self._finish_copy, task)

    def _finish_copy(self, task: Task) -> None:
        now = self.clock.now
        task.end = now
        pool = task.resource
        self.trace.add_pair(
            task.start,
            now,
            task.stream.lane,
            pool.lanes[task.unit],
            Kind.COPY,
            task.name,
            task.nbytes,
            task.cause,
            task.src,
            task.detail,
        )
        if self.numerics:
            probe = self.sim.copy_probe
            if probe is not None:
                probe(task.seq, task.payload, "before")
            task.payload.perform()
            if probe is not None:
                probe(task.seq, task.payload, "after")
        pool.release(task.unit)
        self.completed.append(task)
        self._dispatch_copies(pool)
        self._complete(task)

    def _dispatch_kernels(self) -> None:
        while (granted := self.cores.grant()) is not None:
            grant, task = granted
            task.start = self.clock.now
            kernel = task.payload
            end = kernel.execute(self, task, task.start + self.kernel_start_ps, grant)
            task.writes = tuple(getattr(kernel, "writes", task.writes))  # known once it ran
            self.trace.set_task_flops(task.detail, getattr(kernel, "flops", 0))  # counted as it ran
            task.unit = -1
            self.clock.schedule(end, self._finish_kernel, (task, grant))

    def _finish_kernel(self, arg: tuple[Task, CoreGrant]) -> None:
        task, grant = arg
        now = self.clock.now
        task.end = now
        self.trace.add(
            task.start,
            now,
            task.stream.lane,
            Kind.KERNEL,
            task.name,
            task.nbytes,
            task.cause,
            task.src,
            task.detail,
        )
        finish = getattr(task.payload, "finish", None)
        if finish is not None:
            finish()
        self.cores.release(grant)
        self.completed.append(task)
        self._dispatch_kernels()
        self._complete(task)

    def _complete(self, task: Task) -> None:
        stream = task.stream
        if task.error and not stream.error:
            stream.error = task.error
        stream.running = None
        self.tasks_done += 1
        self._advance(stream)

    def host_learns(self, vc: dict[int, int]) -> None:
        """The host waited for work with clock ``vc``: everything it submits later comes after it."""
        merge_clock(self.host_vc, vc)

    # -- driving ------------------------------------------------------------------------------
    def run_until(self, done: Callable[[], bool]) -> bool:
        """Simulate the device until ``done()`` holds; False if it never can (nothing left to run)."""
        return self.clock.run_until(done)

    def drain(self) -> None:
        """Run every pending device event (end of a run)."""
        while self.clock.step():
            pass

    def stream_done(self, stream: Stream) -> bool:
        return stream.running is None and not stream.queue

    def all_idle(self) -> bool:
        return all(s.running is None and not s.queue for s in self.streams.values())

    def blocked(self) -> list[Task]:
        """Tasks that can never run: each stream's head when nothing is left to simulate."""
        out = []
        for stream in self.streams.values():
            if stream.running is not None:
                out.append(stream.running)
            elif stream.queue:
                out.append(stream.queue[0])
        return out


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


DIRECTIONS = (H2D, D2H, D2D, H2H)
