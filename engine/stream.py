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
    """One unit of work queued on a stream."""

    __slots__ = (
        "cause",
        "detail",
        "end",
        "error",
        "event",
        "kind",
        "label",
        "name",
        "nbytes",
        "payload",
        "reads",
        "ready",
        "resource",
        "seq",
        "src",
        "start",
        "stream",
        "submit",
        "target",
        "unit",
        "vc",
        "writes",
    )

    def __init__(self, seq, stream, kind, name, submit, cause, src, resource=None, nbytes=0, payload=None):
        self.seq = seq
        self.stream = stream
        self.kind = kind
        self.name = name  # trace name id
        self.label = ""  # human text for diagnoses
        self.submit = submit
        self.cause = cause
        self.src = src
        self.resource = resource
        self.nbytes = nbytes
        self.payload = payload
        self.detail = -1  # its entry in the trace's task table (set when submitted)
        self.event = None
        self.error = 0  # an ACL code when the task failed (a kernel that trapped or hung)
        self.target = 0
        self.ready = -1
        self.start = -1
        self.end = -1
        self.unit = -1
        self.reads: tuple = ()
        self.writes: tuple = ()
        self.vc: dict[int, int] = {}  # vector clock over streams: what is known to have happened before


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

    @classmethod
    def of(cls, task: Task) -> TaskRecord:
        return cls(
            task.seq,
            task.stream.ident,
            task.stream.label,
            TaskKind(task.kind),
            task.name,
            task.label,
            task.src,
            task.submit,
            task.start,
            task.end,
            tuple(task.reads),
            tuple(task.writes),
            tuple(sorted(task.vc.items())),
            task.error,
        )

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
        pairs = np.unique(a * span + s)  # each (allocation, stream) once
        allocations, per_allocation = np.unique(pairs // span, return_counts=True)
        shared = np.isin(a, allocations[per_allocation > 1])
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
    """A FIFO task queue on the device."""

    __slots__ = (
        "closed",
        "count",
        "created_src",
        "error",
        "ident",
        "label",
        "lane",
        "priority",
        "queue",
        "running",
        "submitted",
        "vc",
    )

    def __init__(self, ident: int, label: str, lane: int, priority: int, created_src: str):
        self.ident = ident
        self.label = label
        self.lane = lane
        self.priority = priority
        self.created_src = created_src
        self.queue: deque[Task] = deque()
        self.count = 0  # tasks submitted: this stream's component of the vector clocks
        self.vc: dict[int, int] = {}  # vector clock of its last submitted task
        self.running: Task | None = None
        self.closed = False
        self.submitted = 0
        self.error = 0  # sticky: the first failed task's ACL code, returned by the next synchronize

    @property
    def idle(self) -> bool:
        return self.running is None and not self.queue

    def pending(self) -> int:
        return len(self.queue) + (self.running is not None)

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
        self.record_tasks: list[Task] = []  # by record number (the n-th record_event is [n - 1])
        self.records_done = 0
        self.record_times: list[int] = []
        self.last_record_src = ""
        self.destroyed = False
        self.waiters: list[Task] = []

    @property
    def last_time(self) -> int | None:
        return self.record_times[-1] if self.record_times else None

    def __repr__(self) -> str:
        return f"<AclEvent {self.label}>"
