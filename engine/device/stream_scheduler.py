"""The device side of the runtime's rules: streams starting their tasks on copy engines and AI cores.

A stream starts its next task when the previous one finished and the host had submitted it; a copy takes
a free engine of its direction, a kernel the cores :class:`~engine.device.core_array.CoreArray` grants it, or
waits for them, granted by (stream priority, submission order); a record marks its event, a wait waits for
its record. :class:`StreamScheduler` is the half of :class:`~engine.device.runtime.DeviceRuntime` the event core
calls back: its state is the runtime's (streams, events, pools, cores, task store). It also moves each
finished task's data when the host can first see it end.
"""

from __future__ import annotations

from heapq import heappop

import numpy as np

from ..trace import TASK_DETAIL, Kind
from .copy_engine import CopyEnginePool
from .stream import Stream, Task, TaskKind

_SCAN = 256  # tasks ended_below looks at per step


class StreamScheduler:
    """The device's event handlers and its data (a base of :class:`~engine.device.runtime.DeviceRuntime`)."""

    # -- the device ---------------------------------------------------------------------------
    def _live(self) -> None:
        """An event is processed step by step: its rows are appended where a call-by-call run has them."""
        if self.stamper is not None:
            self.stamper.stepped()
        self.last_live = d = self.clock.processed
        self._event_row0 = row = len(self.trace)
        self.trace.order.live(row, 2 * d)

    def arrive(self, ident: int) -> None:
        self._live()
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
            self.clock.schedule(store.submit[t], self.arrive, stream.ident)
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
            store.end_ev[t] = self.clock.processed
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
            store.end_ev[t] = self.clock.processed
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
                if self.stamper is not None:  # where a stamped copy of it appends its row
                    self.stamper.kernel_starts[t] = (self.clock.processed, len(self.trace) - self._event_row0)
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
        self._live()
        store = self.store
        now = self.clock.now
        store.end[t] = now
        store.end_ev[t] = self.clock.processed
        plan = store.plans[store.plan[t]]
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
        if self.stamper is not None and plan.repeatable:
            self.stamper.ended(t)

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

    def ended_below(self) -> int:
        """The first task that has not ended (every task below it has): the store's end column read from the last
        answer on, a few hundred tasks at a time (a host call log asks once per run of submissions)."""
        end, k = self.store.end, self.ended_floor
        n = len(end)
        if k < n and end[k] >= 0:
            ends = np.frombuffer(end, dtype=np.int64)  # a view, let go of on return (the column grows later)
            while k < n:
                open_ = np.flatnonzero(ends[k : k + _SCAN] < 0)
                if len(open_):
                    k += int(open_[0])
                    break
                k = min(n, k + _SCAN)
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
