"""The runtime's task store: every task the host submitted to a stream, as columns.

A task is a row: what it shares with every task of its kind on its stream (its :class:`TaskPlan`: its
stream, kind, engine or cores and duration, name and size), when it was submitted, started and ended,
the engine that ran it, the host call and source line that made it, and its vector-clock entry. Rows
are typed columns (``array("q")``: numpy reads and writes them in place, without converting a list),
appended one at a time (a host call) or a block at a time (a host call log), so tens of thousands of
tasks cost no Python object each. Task ``i`` has submission number ``i + 1``.

:class:`FinishedTasks` is the store frozen at the end of a run: plain data that builds each task's
:class:`~engine.device.stream.TaskRecord` when read and answers the cross-stream check from its columns.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

import numpy as np

from ..trace import TASK_DETAIL
from .stream import TaskKind, TaskRecord, allocation_key

CORES = "cores"  # the resource of a kernel: the AI cores (the core array decides how many)


@dataclass(frozen=True)
class TaskPlan:
    """What every task of one kind on one stream shares: how it runs and what the trace calls it."""

    stream: int  # the stream's ident
    kind: TaskKind
    resource: str  # a copy engine direction (H2D, D2H, D2D), CORES, or "" (record, wait)
    run: int  # ps on its engine, or on the cores after the launch overhead; -1: a kernel that runs its own code
    name: int  # trace name id
    nbytes: int
    label: str
    direction: str = ""  # copies
    pinned: bool = True  # copies: host memory pinned (or no host memory)
    src_where: str = ""  # copies: where the source and destination live
    dst_where: str = ""
    flops: int = 0  # kernels of a fixed duration
    core_type: str = ""  # kernels: "cube", "vector" or "mix"
    block_dim: int = 0
    event: int = -1  # record, wait: the event's ident
    reads: tuple = ()  # kernels of a fixed duration: what every run reads and writes
    writes: tuple = ()

    @property
    def repeatable(self) -> bool:
        """Its course is decided by the plan alone (a copy, or a kernel of a fixed duration): a fast path
        may stamp tasks of such plans from earlier ones."""
        return self.kind == TaskKind.COPY or (self.kind == TaskKind.KERNEL and self.run >= 0)


class TaskStore:
    """Every submitted task as columns (lists, changed in place), plus sparse per-task values."""

    def __init__(self) -> None:
        self.plans: list[TaskPlan] = []
        self._plan_ids: dict[TaskPlan, int] = {}
        self._repeatable = np.zeros(0, dtype=bool)
        self.plan = array("q")
        self.submit = array("q")
        self.start = array("q")
        self.end = array("q")
        self.unit = array("q")  # the copy engine that ran it, -1 otherwise
        self.cause = array("q")  # trace row of the host call that made it
        self.src = array("q")  # trace source id of that call's line
        self.count = array("q")  # its stream's count: its own entry of its vector clock
        self.know = array("q")  # what its stream knew before it: an index in the stream's ``known``
        self.fin = array("q")  # its place in the order tasks finished, -1 until then
        # the device event (numbered from 1) in which it ended step by step, -1 until then or when stamped
        # (see Stamper.end_events): where a call-by-call run appends its rows (engine.trace.order)
        self.end_ev = array("q")
        self.copy = array("q")  # a copy: its entry in ``copies``, else -1
        self.copies = array("q")  # four numbers per copy: source allocation ident, offset, destination ident, offset
        self.payload: dict[int, object] = {}  # what a task computes or moves (a kernel, a CopyPlan with numerics)
        self.footprint: dict[int, tuple] = {}  # (reads, writes) of a kernel that runs its own code
        self.target: dict[int, int] = {}  # a wait: the record number it waits for
        self.error: dict[int, int] = {}  # a failed task: its ACL code

    def __len__(self) -> int:
        return len(self.plan)

    def plan_id(self, plan: TaskPlan) -> int:
        found = self._plan_ids.get(plan)
        if found is None:
            found = self._plan_ids[plan] = len(self.plans)
            self.plans.append(plan)
        return found

    def repeatable(self) -> np.ndarray:
        """Per plan id: :attr:`TaskPlan.repeatable`."""
        if len(self._repeatable) != len(self.plans):
            self._repeatable = np.array([p.repeatable for p in self.plans], dtype=bool)
        return self._repeatable

    def plan_of(self, t: int) -> TaskPlan:
        return self.plans[self.plan[t]]

    @staticmethod
    def detail(t: int) -> int:
        """The detail id of task ``t``'s rows: its entry in the trace's task table (tasks enter it in order)."""
        return TASK_DETAIL + t

    def append(self, plan: int, submit: int, cause: int, src: int, count: int, know: int, copy: int) -> None:
        self.plan.append(plan)
        self.submit.append(submit)
        self.start.append(-1)
        self.end.append(-1)
        self.unit.append(-1)
        self.cause.append(cause)
        self.src.append(src)
        self.count.append(count)
        self.know.append(know)
        self.fin.append(-1)
        self.end_ev.append(-1)
        self.copy.append(copy)

    def extend(self, plan, submit, cause, src, count, know, copy) -> None:
        """Append a block of tasks (a host call log's): each argument an int64 numpy array of the block's values."""
        for column, values in (
            (self.plan, plan),
            (self.submit, submit),
            (self.cause, cause),
            (self.src, src),
            (self.count, count),
            (self.know, know),
            (self.copy, copy),
        ):
            column.frombytes(np.ascontiguousarray(values, dtype=np.int64).tobytes())
        none = array("q", (-1,)) * len(plan)
        for column in (self.start, self.end, self.unit, self.fin, self.end_ev):
            column.extend(none)

    def freeze(self, labels: dict[int, str], known: dict[int, tuple]) -> FinishedTasks:
        """The store as plain data (``labels``: stream ident -> label; ``known``: stream ident -> its
        ``known`` clocks)."""
        return FinishedTasks(
            plans=tuple(self.plans),
            labels=dict(labels),
            known=dict(known),
            plan=self.plan[:],
            src=self.src[:],
            submit=self.submit[:],
            start=self.start[:],
            end=self.end[:],
            count=self.count[:],
            know=self.know[:],
            copy=self.copy[:],
            copies=self.copies[:],
            footprint=dict(self.footprint),
            error=dict(self.error),
        )


@dataclass(frozen=True)
class FinishedTasks:
    """The tasks of a finished run as columns (task ``i`` has submission number ``i + 1``); its
    :class:`TaskRecord` is built when read. Plain data: it pickles, and keeps nothing of the simulation."""

    plans: tuple
    labels: dict
    known: dict
    plan: array  # the store's columns, copied (typed: see TaskStore)
    src: array
    submit: array
    start: array
    end: array
    count: array
    know: array
    copy: array
    copies: array
    footprint: dict
    error: dict
    first_seq: int = 1

    def __len__(self) -> int:
        return len(self.plan)

    def _reads_writes(self, i: int) -> tuple[tuple, tuple]:
        p = self.plans[self.plan[i]]
        c = self.copy[i]
        if c >= 0:
            src_ident, src_off, dst_ident, dst_off = self.copies[4 * c : 4 * c + 4]
            return (((p.src_where, src_ident), src_off, src_off + p.nbytes),), (
                ((p.dst_where, dst_ident), dst_off, dst_off + p.nbytes),
            )
        return self.footprint.get(i, (p.reads, p.writes))

    def record(self, i: int) -> TaskRecord:
        p = self.plans[self.plan[i]]
        reads, writes = self._reads_writes(i)
        vc = dict(self.known[p.stream][self.know[i]])
        vc[p.stream] = self.count[i]
        return TaskRecord(
            self.first_seq + i,
            p.stream,
            self.labels[p.stream],
            TaskKind(p.kind),
            p.name,
            p.label,
            self.src[i],
            self.submit[i],
            self.start[i],
            self.end[i],
            tuple(reads),
            tuple(writes),
            tuple(sorted(vc.items())),
            self.error.get(i, 0),
        )

    def footprints(self, places: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every (task, stream ident, allocation) of the tasks that ran (copies and kernels), as three arrays;
        an allocation ``(where, ident)`` as the number :func:`engine.device.stream.allocation_key` gives it
        (``places``: where -> code, shared with the caller's other parts). See
        :meth:`engine.device.stream.TaskRecords.shared_tasks`."""
        plans = self.plans
        plan = np.frombuffer(self.plan, dtype=np.int64)
        copy = np.frombuffer(self.copy, dtype=np.int64)
        kinds = np.array([p.kind for p in plans], dtype=np.int64)[plan] if plans else plan
        ran = (np.frombuffer(self.end, dtype=np.int64) >= 0) & np.isin(kinds, (TaskKind.COPY, TaskKind.KERNEL))
        stream = np.array([p.stream for p in plans], dtype=np.int64)[plan] if plans else plan
        task_parts, alloc_parts = [], []
        idx = np.flatnonzero((copy >= 0) & ran)
        if len(idx):
            copies = np.frombuffer(self.copies, dtype=np.int64)
            for where, column in (("src_where", 0), ("dst_where", 2)):
                place = np.array([places.setdefault(getattr(p, where), len(places)) for p in plans])
                task_parts.append(idx)
                alloc_parts.append(allocation_key(place[plan[idx]], copies[4 * copy[idx] + column]))
        own = set(self.footprint)
        for j, p in enumerate(plans):
            if p.kind != TaskKind.KERNEL:
                continue
            idx = np.flatnonzero((plan == j) & ran & (copy < 0))
            if own:
                idx = idx[~np.isin(idx, list(own))]
            for (where, ident), _lo, _hi in (*p.reads, *p.writes):
                task_parts.append(idx)
                alloc_parts.append(np.full(len(idx), allocation_key(places.setdefault(where, len(places)), ident)))
        for i in sorted(own):
            if self.end[i] < 0:
                continue
            reads, writes = self.footprint[i]
            for (where, ident), _lo, _hi in (*reads, *writes):
                task_parts.append(np.array([i], dtype=np.int64))
                alloc_parts.append(np.array([allocation_key(places.setdefault(where, len(places)), ident)]))
        if not task_parts:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty
        tasks = np.concatenate(task_parts)
        return tasks, stream[tasks], np.concatenate(alloc_parts).astype(np.int64)
