"""The bulk host's log (``engine/scenarios/pipeline_fast.py``): what one call leaves, and the task
records built from it.

A call is one integer, ``((plan << PLAN_SHIFT) | (source line + 1)) << CODE_BITS | call``: its kind
(``MALLOC_HOST`` ... ``SYNC``, plus ``FAILED`` for a call that failed), the source line that made it,
and for a call that meets the device its *plan*: what every task of its kind on its stream shares,
a tuple indexed by the ``P_*`` fields (a synchronize's plan holds just its stream). A copy's plan also
says where its source and destination live; the allocations and offsets of each copy are kept beside
the log. :class:`BulkTasks` turns these columns back into :class:`~engine.stream.TaskRecord` objects
when someone reads them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..stream import TaskKind, TaskRecord, allocation_key, merge_clock

# the calls, in the log's low bits (a call that failed: its code + FAILED)
MALLOC_HOST, FREE_HOST, MEMCPY, MATMUL, SYNC = range(5)
FAILED = 8
CODE_BITS = 4
PLAN_SHIFT = 32  # log entry: (plan << 32 | (source line + 1)) << 4 | call
CALLS = (
    ("acl.rt.malloc_host", "malloc_us"),
    ("acl.rt.free_host", "free_us"),
    ("acl.rt.memcpy_async", "memcpy_call_us"),
    ("acl.op.matmul", "launch_call_us"),
    ("acl.rt.synchronize_stream", "sync_call_us"),
)
# device resources and events
RES_H2D, RES_D2H, RES_CORES = 0, 1, 2
# what a waiting host waits for
ROOM, PAGEABLE, DRAIN = 0, 1, 2
MIN_RUN = 16  # plain submissions played in numpy at once, at least
# a plan: what every task of one kind on one stream shares (a synchronize's plan: just its stream)
P_STREAM, P_RES, P_RUN, P_KIND, P_NAME, P_BYTES, P_LABEL, P_DIR, P_FLOPS, P_READS, P_WRITES, P_WHERE = range(12)


def task_clock(base: dict, host: dict, ident: int, count: int) -> dict:
    """A task's vector clock: its stream's clock before the section merged with the host's when it was
    submitted, its own stream's entry set to its count (``DeviceRuntime.submit``)."""
    vc = dict(base)
    merge_clock(vc, host)
    vc[ident] = count
    return vc


@dataclass(frozen=True)
class BulkTasks:
    """The tasks of one bulk section as columns (task ``i`` has submission number ``first_seq + i``); its
    :class:`TaskRecord` is built when read (tens of thousands of records cost more to build than the
    whole section). Plain data: it pickles, and keeps nothing of the simulation."""

    first_seq: int
    plan: list
    plans: tuple
    streams: tuple  # lean stream -> ident
    labels: tuple  # lean stream -> label
    texts: tuple
    src: list
    submit: list
    start: list
    end: list
    copy: list  # per task: its entry in ``copies`` (copies), or -1 (kernels)
    copies: list  # four numbers per copy: source allocation ident, offset, destination ident, offset
    count: list
    version: list
    base_vc: tuple
    host_vc: tuple

    def __len__(self) -> int:
        return len(self.plan)

    def footprints(self, places: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every (task, stream ident, allocation) of the tasks that ran (copies and kernels), as three arrays;
        an allocation ``(where, ident)`` as the number :func:`engine.stream.allocation_key` gives it (``places``:
        where -> code, shared with the caller's other parts). See :meth:`engine.stream.TaskRecords.shared_tasks`."""
        plans = self.plans
        plan = np.asarray(self.plan, dtype=np.int64)
        copy = np.asarray(self.copy, dtype=np.int64)
        kinds = np.array([p[P_KIND] for p in plans], dtype=np.int64)[plan]
        ran = (np.asarray(self.end, dtype=np.int64) >= 0) & np.isin(kinds, (TaskKind.COPY, TaskKind.KERNEL))
        stream = np.array([self.streams[p[P_STREAM]] for p in plans], dtype=np.int64)[plan]
        task_parts, alloc_parts = [], []
        idx = np.flatnonzero((copy >= 0) & ran)
        if len(idx):
            copies = np.asarray(self.copies, dtype=np.int64)
            for side, column in ((0, 0), (1, 2)):
                copying = [p[P_KIND] == TaskKind.COPY for p in plans]
                place = np.array(
                    [
                        places.setdefault(p[P_WHERE][side], len(places)) if c else 0
                        for p, c in zip(plans, copying, strict=True)
                    ]
                )
                task_parts.append(idx)
                alloc_parts.append(allocation_key(place[plan[idx]], copies[4 * copy[idx] + column]))
        for j, p in enumerate(plans):
            if p[P_KIND] != TaskKind.KERNEL:
                continue
            idx = np.flatnonzero((plan == j) & ran & (copy < 0))
            for (where, ident), _lo, _hi in (*p[P_READS], *p[P_WRITES]):
                task_parts.append(idx)
                alloc_parts.append(np.full(len(idx), allocation_key(places.setdefault(where, len(places)), ident)))
        if not task_parts:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty
        tasks = np.concatenate(task_parts)
        return tasks, stream[tasks], np.concatenate(alloc_parts).astype(np.int64)

    def record(self, i: int) -> TaskRecord:
        p = self.plans[self.plan[i]]
        s = p[P_STREAM]
        c = self.copy[i]
        if c >= 0:
            src_ident, src_off, dst_ident, dst_off = self.copies[4 * c : 4 * c + 4]
            src_where, dst_where, _pinned = p[P_WHERE]
            n = p[P_BYTES]
            reads = (((src_where, src_ident), src_off, src_off + n),)
            writes = (((dst_where, dst_ident), dst_off, dst_off + n),)
        else:
            reads, writes = p[P_READS], p[P_WRITES]
        vc = task_clock(self.base_vc[s], self.host_vc[self.version[i]], self.streams[s], self.count[i])
        return TaskRecord(
            self.first_seq + i,
            self.streams[s],
            self.labels[s],
            TaskKind(p[P_KIND]),
            p[P_NAME],
            self.texts[p[P_LABEL]],
            self.src[i],
            self.submit[i],
            self.start[i],
            self.end[i],
            reads,
            writes,
            tuple(sorted(vc.items())),
        )
