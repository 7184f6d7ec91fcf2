"""The device of the bulk host (``engine/scenarios/pipeline_fast.py``): streams, copy engines and the
core array on integers, advanced lazily, and stamped ahead once it repeats itself.

The runtime's rules (``engine/runtime.py``) on lists: a stream starts its next task when the previous
one finished and the host had submitted it; a copy takes a free engine of its direction, a kernel the
whole core array, or waits for one, granted by (stream priority, submission order). Events are
``(time, seq, what, arg)`` in one heap, so ties run in the order they were scheduled, and the device is
advanced only as far as a waiting host needs (:meth:`LeanDevice.run_to`), exactly as the runtime is.

**Stamping.** Thousands of identical batches bring the device into a state that repeats: every stream
busy with its next task queued, the same tasks (relative to the one that just finished) running on the
same engines and waiting in the same order, the same events pending at the same times after now. From
then on, while nothing outside the device can change its course, each period is the one before it,
``delta`` tasks and ``delta_t`` picoseconds on. The device checks its state every few periods of a
marker task; when a state comes back, it appends the next periods' starts, ends and engines at once
and moves its state that many periods on, as long as

* the tasks repeat: every task of a stamped period has the plan (stream, engine, duration) of its
  counterpart ``delta`` tasks back, and has been submitted;
* no stream ever runs dry (so no submission can find a stream idle, the one way the host schedules an
  event), and no event but task ends happened in the period (no task reached the head of its stream
  before the host had submitted it);
* every task of a stamped period was submitted by the time it reaches the head of its stream.

Nothing else reaches the device, so its events are those the step-by-step loop would process, in the
same order; only *when* (in host-call order) they are processed changes, and a waiting host reads a
task's end (``t_end``), which is the same either way. ``tests/test_pipeline_fast.py`` runs long
pipelines both ways, with stamping checked to happen.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import deque
from heapq import heapify, heappop, heappush

import numpy as np

_CORES = 2  # the resource an op-level kernel takes: the whole core array
_ARRIVE, _FINISH = 0, 1
_PROBE_EVERY = 8  # check the state at every 8th end of a marker task


class LeanDevice:
    """The bulk host's device. Lists are changed in place only (``run_to`` unpacks them once per call)."""

    def __init__(self, units: tuple[int, ...]) -> None:
        self.heap: list[tuple[int, int, int, int]] = []  # (time, seq, what, stream or task)
        self.seq = 0
        self.now = 0
        self.events = 0
        self.stamped = 0  # tasks whose start and end were stamped
        self.queues: list[deque] = []
        self.running: list[int] = []
        self.priority: list[int] = []
        self.free = [list(range(u)) for u in units]  # per resource: a heap of free units
        self.waiting: list[list[tuple]] = [[] for _ in units]
        self.s_tasks: list[list[int]] = []  # per stream: its tasks in order
        # per task
        self.t_plan: list[int] = []  # what decides its course: stream, engine, duration
        self.t_stream: list[int] = []
        self.t_res: list[int] = []
        self.t_run: list[int] = []  # ps on its engine / the cores (kernels: with the launch overhead)
        self.t_submit: list[int] = []
        self.t_start: list[int] = []
        self.t_end: list[int] = []
        self.t_unit: list[int] = []
        self.finished: list[int] = []  # tasks in the order they finished
        self._lists = (
            self.heap,
            self.queues,
            self.running,
            self.free,
            self.waiting,
            self.priority,
            self.t_stream,
            self.t_res,
            self.t_run,
            self.t_submit,
            self.t_start,
            self.t_end,
            self.t_unit,
            self.finished,
        )
        # stamping
        self._marker = -1  # the plan whose ends are counted
        self._marks = 0
        self._seen: dict[tuple, tuple] = {}  # state -> (task that just ended, now, ends so far, events so far)
        self._ended_below = 0

    def add_stream(self, priority: int) -> None:
        self.queues.append(deque())
        self.running.append(-1)
        self.priority.append(priority)
        self.s_tasks.append([])

    def add_tasks(self, plan: list[int], stream: list[int], res: list[int], run: list[int]) -> None:
        """Tasks about to be submitted, in order (their submit times are set when they are)."""
        n = len(stream)
        if self._marker < 0 and plan:
            self._marker = plan[0]
        self.t_plan.extend(plan)
        self.t_stream.extend(stream)
        self.t_res.extend(res)
        self.t_run.extend(run)
        self.t_submit.extend([-1] * n)
        self.t_start.extend([-1] * n)
        self.t_end.extend([-1] * n)
        self.t_unit.extend([-1] * n)

    def submit(self, t: int, when: int) -> None:
        """The host queues task ``t`` at ``when`` (its stream's next task)."""
        self.t_submit[t] = when
        s = self.t_stream[t]
        q = self.queues[s]
        if self.running[s] < 0 and not q:
            if self.now > when:
                raise RuntimeError("bulk host: a stream went idle ahead of the host (stamping invariant)")
            heappush(self.heap, (when, self.seq, _ARRIVE, s))
            self.seq += 1
        q.append(t)

    def run_to(self, x: int, submitted: int) -> None:
        """Process events until task ``x`` has finished (the host waits for it; tasks below ``submitted``
        have been submitted)."""
        heap, queues, running, free, waiting, priority, t_stream, t_res, t_run = self._lists[:9]
        t_submit, t_start, t_end, t_unit, finished = self._lists[9:]
        t_plan, marker = self.t_plan, self._marker
        now, seq, events = self.now, self.seq, self.events
        while t_end[x] < 0:
            now, _q, what, arg = heappop(heap)
            events += 1
            ended = -1
            if what == _FINISH:
                t_end[arg] = now
                finished.append(arg)
                ended = arg
                r = t_res[arg]
                fr, wt = free[r], waiting[r]
                heappush(fr, t_unit[arg])
                while fr and wt:  # the freed unit goes to the first waiting task
                    t = heappop(wt)[2]
                    t_unit[t] = heappop(fr)
                    t_start[t] = now
                    heappush(heap, (now + t_run[t], seq, _FINISH, t))
                    seq += 1
                arg = t_stream[arg]
                running[arg] = -1
            elif running[arg] >= 0:  # an arrival at a busy stream
                continue
            q = queues[arg]
            if q:
                t = q[0]  # the stream's next task
                if t_submit[t] > now:  # the host had not submitted it yet: it arrives then
                    heappush(heap, (t_submit[t], seq, _ARRIVE, arg))
                    seq += 1
                else:
                    q.popleft()
                    running[arg] = t
                    r = t_res[t]
                    fr, wt = free[r], waiting[r]
                    if r != _CORES and fr and not wt:
                        t_unit[t] = heappop(fr)
                        t_start[t] = now
                        heappush(heap, (now + t_run[t], seq, _FINISH, t))
                        seq += 1
                    else:
                        heappush(wt, (priority[arg], t, t))  # by stream priority, then submission order
                        while fr and wt:
                            t = heappop(wt)[2]
                            t_unit[t] = heappop(fr)
                            t_start[t] = now
                            heappush(heap, (now + t_run[t], seq, _FINISH, t))
                            seq += 1
            if ended >= 0 and t_plan[ended] == marker:
                self._marks += 1
                if self._marks % _PROBE_EVERY == 0:
                    self.now, self.seq, self.events = now, seq, events
                    self._probe(ended, submitted)
                    now, seq, events = self.now, self.seq, self.events
        self.now, self.seq, self.events = now, seq, events

    def ended_below(self) -> int:
        """The first task that has not ended (every task below it has)."""
        t_end, k = self.t_end, self._ended_below
        while k < len(t_end) and t_end[k] >= 0:
            k += 1
        self._ended_below = k
        return k

    def drain(self) -> None:
        """Run until every submitted task has finished."""
        for t in range(len(self.t_end)):
            if self.t_end[t] < 0:
                self.run_to(t, len(self.t_end))

    # -- stamping -----------------------------------------------------------------------------------
    def _state(self, f: int) -> tuple | None:
        """The device's state relative to task ``f`` (which just ended) and now, or None when it is not
        one that can repeat (a stream idle or an arrival pending)."""
        if any(r < 0 for r in self.running):
            return None
        now = self.now
        pending = []
        for time, _seq, what, arg in sorted(self.heap):
            if what != _FINISH:
                return None
            pending.append((time - now, arg - f))
        return (
            tuple(pending),
            tuple(r - f for r in self.running),
            tuple(q[0] - f if q else None for q in self.queues),
            tuple(tuple(sorted(fr)) for fr in self.free),
            tuple(tuple(sorted((p, t - f) for p, t, _t in wt)) for wt in self.waiting),
        )

    def _probe(self, f: int, submitted: int) -> None:
        state = self._state(f)
        if state is None:
            self._seen.clear()
            return
        ends, events = len(self.finished), self.events
        before = self._seen.get(state)
        self._seen[state] = (f, self.now, ends, events)
        if before is None:
            return
        f0, now0, ends0, events0 = before
        if events - events0 != ends - ends0:  # something but task ends happened in between
            return
        periods = self._periods(f - f0, self.now - now0, ends0, ends, submitted)
        if periods:
            self._stamp(f - f0, self.now - now0, ends0, ends, periods, submitted)
            self._seen.clear()

    def _periods(self, delta: int, delta_t: int, ends0: int, ends: int, submitted: int) -> int:
        """How many more periods of ``delta`` tasks and ``delta_t`` ps can be stamped (the module's conditions)."""
        window = self.finished[ends0:ends]
        # every task the period touches: those that ended, and those running, queued first or waiting now
        touched = window + self.running + [q[0] for q in self.queues if q]
        touched += [t for wt in self.waiting for _p, t, _t in wt]
        lo, hi = min(touched), max(touched)
        periods = (submitted - 1 - hi) // delta  # every task of the last one submitted
        if periods <= 0:
            return 0
        plan = np.asarray(self.t_plan[lo : hi + periods * delta + 1])
        differ = np.flatnonzero(plan[delta:] != plan[:-delta])  # plan[lo + delta + i] != plan[lo + i]
        if len(differ):  # the periods must end before the first task unlike its counterpart
            periods = min(periods, (lo + delta + int(differ[0]) - 1 - hi) // delta)
        heads = [(self._next_of(p), self.t_end[p]) for p in window]  # who reached the head of its stream, when
        heads = np.array([h for h in heads if h[0] >= 0], dtype=np.int64).reshape(-1, 2)
        if periods > 0 and len(heads):
            ks = np.arange(1, periods + 1)
            submit = np.asarray(self.t_submit[: hi + periods * delta + 1], dtype=np.int64)
            late = submit[heads[:, :1] + delta * ks] > heads[:, 1:] + delta_t * ks  # (head, period)
            first_late = np.flatnonzero(late.any(axis=0))
            if len(first_late):
                periods = int(first_late[0])
        return max(periods, 0)

    def _next_of(self, t: int) -> int:
        """The task after ``t`` on its stream, or -1."""
        mine = self.s_tasks[self.t_stream[t]]
        i = bisect_left(mine, t) + 1
        return mine[i] if i < len(mine) else -1

    def _stamp(self, delta: int, delta_t: int, ends0: int, ends: int, periods: int, submitted: int) -> None:
        """Append ``periods`` copies of the period that ended ``finished[ends0:ends]`` and move the state that
        many periods on."""
        window = self.finished[ends0:ends]
        running = list(self.running)
        t_start, t_end, t_unit, finished = self.t_start, self.t_end, self.t_unit, self.finished
        before = {r - delta for r in running if t_start[r] >= 0}  # on an engine when the period began
        started = [t for t in dict.fromkeys(window + running) if t_start[t] >= 0 and t not in before]
        ks = np.arange(1, periods + 1)[:, None]
        ended = np.asarray(window, dtype=np.int64)
        new_ends = (ended + delta * ks).ravel()  # period by period, in the order they ended
        _scatter(t_end, new_ends, (np.array([t_end[t] for t in window], dtype=np.int64) + delta_t * ks).ravel())
        if started:
            began = np.asarray(started, dtype=np.int64)
            new_starts = (began + delta * ks).ravel()
            _scatter(t_start, new_starts, (np.array([t_start[t] for t in started]) + delta_t * ks).ravel())
            _scatter(t_unit, new_starts, np.tile(np.array([t_unit[t] for t in started]), periods))
        finished.extend(new_ends.tolist())
        shift, dt = periods * delta, periods * delta_t
        pending = sorted(self.heap)
        self.heap[:] = [(time + dt, self.seq + i, what, t + shift) for i, (time, _seq, what, t) in enumerate(pending)]
        self.seq += len(pending)
        for s, r in enumerate(running):
            self.running[s] = r + shift
            mine = self.s_tasks[s]
            queue = self.queues[s]
            queue.clear()
            queue.extend(mine[bisect_left(mine, r + shift) + 1 : bisect_left(mine, submitted)])
        for wt in self.waiting:
            wt[:] = [(p, t + shift, t + shift) for p, t, _t in wt]
            heapify(wt)
        self.now += dt
        self.events += periods * (ends - ends0)
        self.stamped += periods * len(window)


def _scatter(values: list, at: np.ndarray, new: np.ndarray) -> None:
    """``values[at[i]] = new[i]`` for every i, through one slice of the list."""
    lo, hi = int(at.min()), int(at.max()) + 1
    part = np.asarray(values[lo:hi], dtype=np.int64)
    part[at - lo] = new
    values[lo:hi] = part.tolist()
