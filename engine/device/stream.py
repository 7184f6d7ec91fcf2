"""Streams, events and the tasks they carry.

A :class:`Stream` is a FIFO task queue: a task starts only when the one before it in the same
stream has finished. An :class:`AclEvent` marks a point in a stream (``record_event``); another
stream can wait for it (``stream_wait_event``) and the host can block on it (``synchronize_event``).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum

import numpy as np


class TaskKind(IntEnum):
    COPY = 0
    KERNEL = 1
    RECORD = 2  # record an event
    WAIT = 3  # wait for an event


class Task:
    """One task queued on a stream, as the runtime's task store holds it (a view: task ``index`` of the
    store, submission number ``index + 1``). What kernels, diagnoses and host calls read of a task."""

    __slots__ = ("index", "runtime")

    def __init__(self, runtime, index: int) -> None:
        self.runtime = runtime
        self.index = index

    @property
    def seq(self) -> int:
        return self.index + 1

    @property
    def plan(self):
        return self.runtime.store.plan_of(self.index)

    @property
    def stream(self) -> Stream:
        return self.runtime.streams[self.plan.stream]

    @property
    def kind(self) -> TaskKind:
        return self.plan.kind

    @property
    def name(self) -> int:
        return self.plan.name

    @property
    def label(self) -> str:
        return self.plan.label

    @property
    def event(self) -> AclEvent | None:
        return self.runtime.events.get(self.plan.event)

    @property
    def payload(self):
        return self.runtime.store.payload.get(self.index)

    @property
    def detail(self) -> int:
        return self.runtime.store.detail(self.index)

    @property
    def target(self) -> int:
        return self.runtime.store.target.get(self.index, 0)

    @property
    def cause(self) -> int:
        return self.runtime.store.cause[self.index]

    @property
    def src(self) -> int:
        return self.runtime.store.src[self.index]

    @property
    def submit(self) -> int:
        return self.runtime.store.submit[self.index]

    @property
    def start(self) -> int:
        return self.runtime.store.start[self.index]

    @property
    def end(self) -> int:
        return self.runtime.store.end[self.index]

    @property
    def error(self) -> int:
        """An ACL code when the task failed (a kernel that trapped or hung), else 0."""
        return self.runtime.store.error.get(self.index, 0)

    @error.setter
    def error(self, code: int) -> None:
        self.runtime.store.error[self.index] = code

    @property
    def vc(self) -> dict[int, int]:
        return self.runtime.task_vc(self.index)

    def __eq__(self, other) -> bool:
        return isinstance(other, Task) and other.runtime is self.runtime and other.index == self.index

    def __hash__(self) -> int:
        return self.index

    def __repr__(self) -> str:
        return f"<Task {self.seq}: {self.label}>"


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """A finished run's record of one task: plain data, for analysis (no link back to the simulation)."""

    seq: int
    stream: int  # the stream's ident
    stream_label: str
    kind: TaskKind
    name: int  # trace name id
    label: str
    src: int  # trace source id
    submit: int
    start: int  # -1: never started (stuck behind a deadlock)
    end: int
    reads: tuple
    writes: tuple
    vc: tuple  # vector clock as sorted (stream, count) pairs
    error: int = 0

    def clock(self, stream: int) -> int:
        """This task's vector-clock entry for ``stream`` (0: knows nothing of it)."""
        for s, count in self.vc:
            if s == stream:
                return count
        return 0


class TaskRecords(Sequence):
    """Every task of a run in submission order: :class:`TaskRecord` objects, and *blocks* a bulk path
    recorded as columns (``first_seq``, ``len()`` and ``record(i)``, the TaskRecord of submission
    ``first_seq + i``, built when read). Compares equal to any sequence of the same records."""

    def __init__(self, records: list[TaskRecord], blocks: list = ()) -> None:
        records = sorted(records, key=_by_seq)
        parts: list = []
        for block in sorted(blocks, key=lambda b: b.first_seq):
            if not len(block):
                continue
            cut = bisect_right([r.seq for r in records], block.first_seq)
            if (cut and records[cut - 1].seq == block.first_seq) or (
                cut < len(records) and records[cut].seq < block.first_seq + len(block)
            ):
                raise ValueError("a task block shares submission numbers with other tasks")
            if cut:
                parts.append(records[:cut])
            parts.append(block)
            records = records[cut:]
        if records or not parts:
            parts.append(records)
        self._parts = parts
        self._ends: list[int] = []
        total = 0
        for part in parts:
            total += len(part)
            self._ends.append(total)

    def __len__(self) -> int:
        return self._ends[-1]

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("task index out of range")
        p = bisect_right(self._ends, index)
        part = self._parts[p]
        i = index - (self._ends[p - 1] if p else 0)
        return part[i] if isinstance(part, list) else part.record(i)

    def __iter__(self):
        for part in self._parts:
            if isinstance(part, list):
                yield from part
            else:
                for i in range(len(part)):
                    yield part.record(i)

    def __eq__(self, other) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str) or len(other) != len(self):
            return False
        return all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None

    def __repr__(self) -> str:
        return f"<TaskRecords: {len(self)} tasks>"

    def shared_tasks(self) -> list[int]:
        """Indices, in order, of the tasks that ran (copies and kernels) and touch an allocation that a task
        of another stream touches too: the only ones that can race across streams (bulk blocks answer from
        their columns, so their records are not built)."""
        places: dict = {}
        tasks, streams, allocs = [], [], []
        offset = 0
        for part in self._parts:
            if isinstance(part, list):
                t, s, a = [], [], []
                for i, r in enumerate(part):
                    if r.kind in (TaskKind.COPY, TaskKind.KERNEL) and r.end >= 0:
                        for (where, ident), _lo, _hi in (*r.reads, *r.writes):
                            t.append(i)
                            s.append(r.stream)
                            a.append(allocation_key(places.setdefault(where, len(places)), ident))
                t, s, a = (np.asarray(x, dtype=np.int64) for x in (t, s, a))
            else:
                t, s, a = part.footprints(places)
            tasks.append(t + offset)
            streams.append(s)
            allocs.append(a)
            offset += len(part)
        t, s, a = (np.concatenate(x) if x else np.zeros(0, dtype=np.int64) for x in (tasks, streams, allocs))
        if not len(t):
            return []
        s = s - s.min()
        span = int(s.max()) + 1
        pairs = np.sort(a * span + s)  # (allocation, stream), sorted: a sort and two comparisons, not np.unique's hash
        allocations = pairs[np.concatenate(([True], pairs[1:] != pairs[:-1]))] // span  # each pair once
        again = allocations[1:] == allocations[:-1]  # an allocation met again: with another stream
        if not again.any():
            return []
        shared = np.isin(a, allocations[1:][again])
        chosen = np.zeros(offset, dtype=bool)
        chosen[t[shared]] = True
        return np.flatnonzero(chosen).tolist()


def merge_clock(into: dict[int, int], other: dict[int, int]) -> None:
    """Vector clocks: ``into`` learns what ``other`` knows (entry-wise maximum, in place)."""
    for k, v in other.items():
        if into.get(k, 0) < v:
            into[k] = v


def allocation_key(place, ident):
    """An allocation ``(where, ident)`` as one number (``place``: a small code of ``where``; idents < 2**40)."""
    return place * (1 << 40) + ident


def _by_seq(record: TaskRecord) -> int:
    return record.seq


class Stream:
    """A FIFO task queue on the device (its tasks by index in the runtime's task store)."""

    __slots__ = (
        "closed",
        "count",
        "created_src",
        "error",
        "host_version",
        "ident",
        "known",
        "label",
        "lane",
        "priority",
        "queue",
        "running",
        "tasks",
    )

    def __init__(self, ident: int, label: str, lane: int, priority: int, created_src: str):
        self.ident = ident
        self.label = label
        self.lane = lane
        self.priority = priority
        self.created_src = created_src
        self.queue: deque[int] = deque()  # submitted, not started yet
        self.running = -1  # the task it runs (or waits in), -1: none
        self.tasks: list[int] = []  # every task submitted to it, in order
        self.count = 0  # tasks submitted: this stream's component of the vector clocks
        # what its tasks know to happen before them (vector clocks without their own entry), one entry per
        # change, and the version of the host's knowledge merged last
        self.known: list[dict[int, int]] = [{}]
        self.host_version = 0
        self.closed = False
        self.error = 0  # sticky: the first failed task's ACL code, returned by the next synchronize

    @property
    def idle(self) -> bool:
        return self.running < 0 and not self.queue

    @property
    def vc(self) -> dict[int, int]:
        """The vector clock of its last submitted task."""
        vc = dict(self.known[-1])
        if self.count:
            vc[self.ident] = self.count
        return vc

    def pending(self) -> int:
        return len(self.queue) + (self.running >= 0)

    def last_task(self) -> int:
        """Its last submitted task, or -1."""
        return self.tasks[-1] if self.tasks else -1

    def __repr__(self) -> str:
        return f"<Stream {self.label}>"


class AclEvent:
    """An ACL event: counts the records the host submitted and the records the device completed."""

    __slots__ = (
        "created_src",
        "destroyed",
        "ident",
        "label",
        "last_record_src",
        "record_tasks",
        "record_times",
        "records_done",
        "records_submitted",
        "waiters",
    )

    def __init__(self, ident: int, created_src: str):
        self.ident = ident
        self.label = f"event {ident}"
        self.created_src = created_src
        self.records_submitted = 0
        self.record_tasks: list[int] = []  # by record number (the n-th record_event is [n - 1]): task indices
        self.records_done = 0
        self.record_times: list[int] = []
        self.last_record_src = ""
        self.destroyed = False
        self.waiters: list[int] = []  # wait tasks not satisfied yet

    @property
    def last_time(self) -> int | None:
        return self.record_times[-1] if self.record_times else None

    def __repr__(self) -> str:
        return f"<AclEvent {self.label}>"
