"""The runtime's fast mode: stamping the device ahead once its state repeats.

Thousands of identical batches bring the device into a state that repeats: the same tasks (relative to
the one that just ended) running on the same engines and cores and waiting in the same order, the same
events pending at the same times after now. From then on, while nothing outside the device can change its
course, each period is the one before it, ``delta`` tasks and ``delta_t`` picoseconds on. The
:class:`Stamper` looks at the state every few ends of a marker task; when a state comes back, it writes the
next periods' starts, ends and engines into the task store at once and moves the state that many periods
on, as long as

* every task of a stamped period is a copy or a fixed-duration kernel (its course is its plan's), has the
  plan of its counterpart ``delta`` tasks back, and has been submitted;
* nothing but task ends happened in the period (no task reached the head of its stream before the host
  had submitted it, nothing arrived at an idle stream);
* every task of a stamped period was submitted by the time it reaches the head of its stream.

The events are those the step-by-step loop would process, in the same order; only *when* they are
processed changes. The device may so run ahead of the host; the one thing the host can then do that
would have changed the stamped course, submit to an idle stream at a time already stamped, rewinds the
last stamp to a period boundary before that time (:meth:`Stamper.rewind`) and the device steps on from
there. The host's view of memory never runs ahead: a stamped copy moves its data when the host could
first see it end (``DeviceRuntime.seen``). The stamps are kept, and at the end of the run they write the
rows of what they stamped (:meth:`Stamper.write_rows`), each keyed by the event that appends it step by
step (:mod:`engine.trace.order`): the trace is the step-by-step run's, row for row.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from heapq import heapify
from typing import TYPE_CHECKING

import numpy as np

from ..trace import TASK_DETAIL, Kind
from .stream import TaskKind

if TYPE_CHECKING:
    from .runtime import DeviceRuntime

PROBE_EVERY = 8  # look at the state at every 8th end of a marker task
MARKER_PATIENCE = 64  # ends of other repeatable tasks before another plan becomes the marker


@dataclass
class Stamp:
    """One stamp: the state it started from (task ``f`` had just ended at ``now``) and the periods it wrote."""

    f: int
    now: int
    delta: int
    delta_t: int
    periods: int
    window: list  # the tasks that ended in the period seen
    started: list  # the tasks that started in it
    ends: int  # tasks finished when it started
    events: int  # device events processed when it started
    running: list  # per stream: its running task, -1
    pending: list  # (time, task) of the pending ends
    copy_waiting: list  # per pool: (priority, task) waiting
    core_waiting: list  # (priority, task, kernel) waiting for cores
    grants: dict  # running kernel -> its cores


class Stamper:
    """Watches a runtime's state for repetition and stamps the periods that follow (the runtime's fast mode)."""

    def __init__(self, runtime: DeviceRuntime) -> None:
        self.rt = runtime
        self.stamped = 0  # tasks whose end was stamped
        self._marker = -1  # the plan whose ends are counted
        self._marks = 0
        self._misses = 0
        self._seen: dict[tuple, tuple] = {}  # state -> (task that just ended, now, ends so far, events so far)
        self._ahead: Stamp | None = None  # the last stamp, while nothing has happened after it
        self.stamps: list[Stamp] = []  # every stamp kept (its rows are written from it at the end)
        self._firsts: list[int] = []  # per stamp: the place its first end has in the order tasks finished
        # kernels of a fixed duration started step by step: task -> (device event, rows that event had appended
        # before its AI-core row), where a stamped copy of it appends its row
        self.kernel_starts: dict[int, tuple[int, int]] = {}

    def stepped(self) -> None:
        """The device processes an event step by step: the last stamp is behind it."""
        self._ahead = None

    def ended(self, t: int) -> None:
        """Repeatable task ``t`` just ended (step by step)."""
        plan = self.rt.store.plan[t]
        if plan != self._marker:
            self._misses += 1
            if self._marker < 0 or self._misses > MARKER_PATIENCE:
                self._marker, self._marks, self._misses = plan, 0, 0
                self._seen.clear()
            return
        self._misses = 0
        self._marks += 1
        if self._marks % PROBE_EVERY == 0:
            self._probe(t)

    # -- the state ------------------------------------------------------------------------------------
    def _state(self, f: int) -> tuple | None:
        """The device's state relative to task ``f`` (which just ended) and now, or None when it is not one
        that can repeat (an arrival pending)."""
        rt = self.rt
        now = rt.clock.now
        pending = []
        for time, callback, arg in rt.clock.pending_events():
            if callback != rt.end_task:
                return None
            pending.append((time - now, arg - f))
        streams = rt.streams.values()
        return (
            tuple(pending),
            tuple(s.running - f if s.running >= 0 else None for s in streams),
            tuple(s.queue[0] - f if s.queue else None for s in streams),
            tuple(
                (tuple(sorted(p.free)), tuple(sorted((w[0], w[1] - f) for w in p.waiting))) for p in rt.pools.values()
            ),
            tuple(sorted(rt.cores.free_aic)),
            tuple(sorted(rt.cores.free_aiv)),
            tuple(sorted((w[0], w[1] - f) for w in rt.cores.waiting)),
            tuple(sorted((t - f, g.aic, g.aiv) for t, g in rt.grants.items())),
        )

    def _probe(self, f: int) -> None:
        state = self._state(f)
        if state is None:
            self._seen.clear()
            return
        rt = self.rt
        ends, events = len(rt.finished), rt.clock.processed
        before = self._seen.get(state)
        self._seen[state] = (f, rt.clock.now, ends, events)
        if before is None:
            return
        f0, now0, ends0, events0 = before
        if events - events0 != ends - ends0:  # something but task ends happened in between
            return
        periods = self._periods(f - f0, rt.clock.now - now0, ends0, ends)
        if periods > 0:
            self._stamp(f, f - f0, rt.clock.now - now0, ends0, ends, periods)
            self._seen.clear()

    def _touched(self) -> list[int]:
        """Every task the state holds: running, first in a queue, or waiting for an engine or cores."""
        rt = self.rt
        touched = [s.running for s in rt.streams.values() if s.running >= 0]
        touched += [s.queue[0] for s in rt.streams.values() if s.queue]
        touched += [w[1] for p in rt.pools.values() for w in p.waiting]
        touched += [w[1] for w in rt.cores.waiting]
        return touched

    def _periods(self, delta: int, delta_t: int, ends0: int, ends: int) -> int:
        """How many more periods of ``delta`` tasks and ``delta_t`` ps can be stamped (the module's conditions)."""
        rt = self.rt
        store = rt.store
        window = rt.finished[ends0:ends]
        touched = window + self._touched()
        lo, hi = min(touched), max(touched)
        submitted = len(store)
        periods = (submitted - 1 - hi) // delta  # every task of the last one submitted
        if periods <= 0:
            return 0
        plan = np.asarray(store.plan[lo : hi + periods * delta + 1], dtype=np.int64)
        repeatable = store.repeatable()
        odd = np.flatnonzero(~repeatable[plan])
        if len(odd):  # the periods must end before the first task that is not a copy or a fixed kernel
            periods = min(periods, (lo + int(odd[0]) - 1 - hi) // delta)
        differ = np.flatnonzero(plan[delta:] != plan[:-delta])  # plan[lo + delta + i] != plan[lo + i]
        if len(differ):  # ... and before the first task unlike its counterpart
            periods = min(periods, (lo + delta + int(differ[0]) - 1 - hi) // delta)
        if periods <= 0:
            return 0
        heads = [(self._next_of(p), store.end[p]) for p in window]  # who reached the head of its stream, when
        heads = np.array([h for h in heads if h[0] >= 0], dtype=np.int64).reshape(-1, 2)
        if len(heads):
            ks = np.arange(1, periods + 1)
            submit = np.asarray(store.submit[: hi + periods * delta + 1], dtype=np.int64)
            late = submit[heads[:, :1] + delta * ks] > heads[:, 1:] + delta_t * ks  # (head, period)
            first_late = np.flatnonzero(late.any(axis=0))
            if len(first_late):
                periods = int(first_late[0])
        return max(periods, 0)

    def _next_of(self, t: int) -> int:
        """The task after ``t`` on its stream, or -1."""
        store = self.rt.store
        mine = self.rt.streams[store.plans[store.plan[t]].stream].tasks
        i = bisect_left(mine, t) + 1
        return mine[i] if i < len(mine) else -1

    # -- stamping -------------------------------------------------------------------------------------
    def _stamp(self, f: int, delta: int, delta_t: int, ends0: int, ends: int, periods: int) -> None:
        """Write ``periods`` copies of the period that ended ``finished[ends0:ends]`` and move the state that
        many periods on."""
        rt = self.rt
        store = rt.store
        window = rt.finished[ends0:ends]
        running = [s.running for s in rt.streams.values()]
        start, end, unit, fin = store.start, store.end, store.unit, store.fin
        before = {r - delta for r in running if r >= 0 and start[r] >= 0}  # on an engine when the period began
        started = [
            t for t in dict.fromkeys(window + [r for r in running if r >= 0]) if start[t] >= 0 and t not in before
        ]
        stamp = Stamp(
            f,
            rt.clock.now,
            delta,
            delta_t,
            periods,
            window,
            started,
            ends,
            rt.clock.processed,
            running,
            [(time, t) for time, _callback, t in rt.clock.pending_events()],
            [[(w[0], w[1]) for w in p.waiting] for p in rt.pools.values()],
            [(w[0], w[1], w[3]) for w in rt.cores.waiting],
            dict(rt.grants),
        )
        ks = np.arange(1, periods + 1)[:, None]
        new_ends = (
            np.asarray(window, dtype=np.int64) + delta * ks
        ).ravel()  # period by period, in the order they ended
        _scatter(end, new_ends, (np.array([end[t] for t in window], dtype=np.int64) + delta_t * ks).ravel())
        _scatter(fin, new_ends, np.arange(ends, ends + len(new_ends)))
        if started:
            began = np.asarray(started, dtype=np.int64)
            new_starts = (began + delta * ks).ravel()
            _scatter(start, new_starts, (np.array([start[t] for t in started]) + delta_t * ks).ravel())
            _scatter(unit, new_starts, np.tile(np.array([unit[t] for t in started]), periods))
        rt.finished.extend(new_ends.tolist())
        self.stamps.append(stamp)
        self._firsts.append(ends)
        rt.clock.processed += periods * len(window)
        self.stamped += periods * len(window)
        self._move(stamp, periods)
        self._ahead = stamp

    def rewind(self, time: int) -> None:
        """The host submits at ``time`` to an idle stream while the device was stamped ahead of it: undo the
        last stamp's periods from the first that ends after ``time`` (the device steps through them again)."""
        stamp = self._ahead
        if stamp is None:
            return
        keep = max(0, (time - stamp.now) // stamp.delta_t)
        if keep >= stamp.periods:
            return
        rt = self.rt
        store = rt.store
        n = len(stamp.window)
        ks = np.arange(keep + 1, stamp.periods + 1)[:, None]
        undo_ends = (np.asarray(stamp.window, dtype=np.int64) + stamp.delta * ks).ravel()
        for column in (store.end, store.fin):
            _scatter(column, undo_ends, -1)
        if len(undo_ends):
            rt.ended_floor = min(rt.ended_floor, int(undo_ends.min()))
        if stamp.started:
            undo_starts = (np.asarray(stamp.started, dtype=np.int64) + stamp.delta * ks).ravel()
            for column in (store.start, store.unit):
                _scatter(column, undo_starts, -1)
        if not keep:  # (stepped through again: their rows are written as they run)
            self.stamps.pop()
            self._firsts.pop()
        del rt.finished[stamp.ends + keep * n :]
        rt.clock.processed -= (stamp.periods - keep) * n
        self.stamped -= (stamp.periods - keep) * n
        stamp.periods = keep
        self._move(stamp, keep)
        self._ahead = None
        self._seen.clear()

    # -- what the stamps wrote ------------------------------------------------------------------------
    def end_events(self, fins: np.ndarray) -> np.ndarray:
        """The device events that ended stamped tasks, given their places in the order tasks finished (each
        event of a stamp ends one task, in that order)."""
        firsts = np.asarray(self._firsts, dtype=np.int64)
        i = np.searchsorted(firsts, fins, side="right") - 1
        return np.array([st.events for st in self.stamps], dtype=np.int64)[i] + 1 + fins - firsts[i]

    def write_rows(self) -> None:
        """The rows of every stamped end and start (the end of a run), each with its place in a call-by-call
        run (:mod:`engine.trace.order`): an end's rows (on its stream's lane, then a copy's on its engine's)
        are the first its event appends; a kernel's start appends its AI-core row (after the launch overhead)
        as many rows into its event as its stepped counterpart did."""
        if not self.stamps:
            return
        rt = self.rt
        store = rt.store
        # per stamped end and start: task, plan, start, end (an end's), unit (a copy's), event, rows before it
        ends, starts = [], []
        for st in self.stamps:
            ks = np.arange(1, st.periods + 1)[:, None]
            ends.append(_stamped(st, st.window, ks, store, store.end))
            ends[-1][5] = st.events + 1 + np.arange(len(ends[-1][0]))  # in the order they ended, one an event
            ends[-1][6] = np.zeros(len(ends[-1][0]), np.int64)  # its event's first rows
            fixed = [t for t in st.started if t in self.kernel_starts]
            if fixed:
                starts.append(_stamped(st, fixed, ks, store, store.start))  # (ends: set below)
                ev, sub = np.array([self.kernel_starts[t] for t in fixed], dtype=np.int64).T
                starts[-1][5] = (ev + len(st.window) * ks).ravel()
                starts[-1][6] = np.tile(sub, st.periods)
        ends = [np.concatenate(c) for c in zip(*ends, strict=True)]
        starts = [np.concatenate(c) for c in zip(*starts, strict=True)] if starts else [np.zeros(0, np.int64)] * 7
        ps = store.plans
        is_copy = np.array([p.kind == TaskKind.COPY for p in ps], dtype=bool)
        copy = is_copy[ends[1]]
        engine_lane = np.full(int(copy.sum()), -1, dtype=np.int16)
        for direction, pool in rt.pools.items():
            sel = np.array([p.resource == direction for p in ps], dtype=bool)[ends[1][copy]]
            if sel.any():
                engine_lane[sel] = np.array(pool.lanes, dtype=np.int16)[ends[4][copy][sel]]
        task, of, start, end = (np.concatenate([ends[i], ends[i][copy], starts[i]]) for i in range(4))
        n_end = len(task) - len(starts[0])
        start[n_end:] += rt.kernel_start_ps
        end[n_end:] = start[n_end:] + np.array([p.run for p in ps], dtype=np.int64)[starts[1]]
        stream_lane = np.array([rt.streams[p.stream].lane for p in ps], dtype=np.int16)
        op_lane = np.full(len(starts[0]), rt.op_lane() if len(starts[0]) else -1, np.int16)  # (made when first used)
        lo, hi = int(task.min()), int(task.max()) + 1
        first = rt.trace.extend(
            start=start,
            end=end,
            lane=np.concatenate([stream_lane[ends[1]], engine_lane, op_lane]),
            kind=np.where(is_copy[of], Kind.COPY, Kind.KERNEL).astype(np.uint8),
            name=np.array([p.name for p in ps], dtype=np.int16)[of],
            nbytes=np.array([p.nbytes for p in ps], dtype=np.int64)[of],
            cause=np.asarray(store.cause[lo:hi], dtype=np.int32)[task - lo],
            src=np.asarray(store.src[lo:hi], dtype=np.int32)[task - lo],
            detail=(task + TASK_DETAIL).astype(np.int32),
        )
        major = 2 * np.concatenate([ends[5], ends[5][copy], starts[5]])
        sub = np.concatenate([ends[6], ends[6][copy] + 1, starts[6]])  # a copy's engine row after its stream's
        rt.trace.order.place(first, major, sub)
        self.stamps.clear()
        self._firsts.clear()

    def _move(self, stamp: Stamp, periods: int) -> None:
        """Put the device in the state ``periods`` periods after the one ``stamp`` started from."""
        rt = self.rt
        shift, dt = periods * stamp.delta, periods * stamp.delta_t
        rt.clock.now = stamp.now + dt
        rt.clock.replace_pending([(time + dt, rt.end_task, t + shift) for time, t in stamp.pending])
        for stream, r in zip(rt.streams.values(), stamp.running, strict=False):
            if r < 0:
                continue
            stream.running = r + shift
            mine = stream.tasks
            stream.queue.clear()
            stream.queue.extend(mine[bisect_left(mine, r + shift) + 1 :])
        for pool, waiting in zip(rt.pools.values(), stamp.copy_waiting, strict=True):
            pool.waiting[:] = [(p, t + shift, t + shift) for p, t in waiting]
            heapify(pool.waiting)
        rt.cores.waiting[:] = [(p, t + shift, t + shift, k) for p, t, k in stamp.core_waiting]
        heapify(rt.cores.waiting)
        rt.grants.clear()
        rt.grants.update({t + shift: g for t, g in stamp.grants.items()})


def _stamped(stamp: Stamp, tasks: list, ks: np.ndarray, store, end: list) -> list:
    """The stamped copies of ``tasks`` (of the period ``stamp`` saw), period by period: their tasks, plans,
    starts, ends (``end``: the store's column to shift, its ends or its starts), units, and two places for
    their events and the rows before them (periods ``ks``)."""
    periods, dt = stamp.periods, stamp.delta_t * ks
    return [
        (np.array(tasks, dtype=np.int64) + stamp.delta * ks).ravel(),
        np.tile(np.array([store.plan[t] for t in tasks], dtype=np.int64), periods),
        (np.array([store.start[t] for t in tasks], dtype=np.int64) + dt).ravel(),
        (np.array([end[t] for t in tasks], dtype=np.int64) + dt).ravel(),
        np.tile(np.array([store.unit[t] for t in tasks], dtype=np.int64), periods),
        None,
        None,
    ]


def _scatter(values, at: np.ndarray, new) -> None:
    """``values[at[i]] = new[i]`` (``new``: an array or one number) for every i, in place (``values``: a typed column
    of the task store; the view lets go of it at once, so the column can grow again)."""
    if len(at):
        np.frombuffer(values, dtype=np.int64)[at] = new
