"""Indexes over a finished trace, built once with numpy, that make any step a binary search away.

A replay must answer "what was true at step s" for any s of a run with millions of rows without
replaying from the start. Everything it shows is the *latest* row of some entity at or before s:
the instruction a pipe runs, the call the host is in, the last operation on a queue slot, the last
write into a buffer slot. So rows are grouped once per entity (a lane, a core's queue slot, a
core's buffer slot, a GM allocation), each group sorted by row, and a step is answered with one
``searchsorted`` per entity on the screen: O(log n), whatever the step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.trace import Kind, LaneKind, TraceData
from engine.trace.data import rows_by_key
from engine.trace.detail import GM, Instr, QueueOp, QueueOpKind
from engine.trace.locations import CoreRef, SourceLine

INIT_SLOT = 1023  # the queue-index slot of init_buffer rows


def groups(keys: np.ndarray, rows: np.ndarray) -> dict[int, np.ndarray]:
    """``{key: rows with that key, ascending}`` (``rows`` ascending on input)."""
    if not len(rows):
        return {}
    narrow = int(keys.min()) >= 0 and int(keys.max()) < 1 << 16  # numpy's stable sort of 16-bit keys is a radix sort
    order = np.argsort(keys.astype(np.uint16) if narrow else keys, kind="stable")
    k = keys[order]
    r = rows[order]
    cut = np.flatnonzero(np.diff(k)) + 1
    starts = np.concatenate([[0], cut])
    ends = np.concatenate([cut, [len(k)]])
    return {int(k[a]): r[a:b] for a, b in zip(starts, ends, strict=True)}


def last_at_or_before(rows: np.ndarray, row: int) -> int:
    """The last of ascending ``rows`` that is <= ``row``, or -1."""
    i = int(rows.searchsorted(row, side="right")) - 1  # the method: np.searchsorted's dispatch costs as much
    return int(rows[i]) if i >= 0 else -1


class Effects:
    """Rows that change something when they *end* (a write lands, a wait is released), in that order.

    Kept sorted by (end, row). At step ``row`` (time ``time``) a row has taken effect when
    ``(end, row) <= (time, step row)``: it ended earlier, or it ends at this instant and is not later
    in the step order. A wait still waiting, or a copy still streaming, has not.
    """

    __slots__ = ("_chains", "ends", "rows")

    def __init__(self, rows: np.ndarray, ends: np.ndarray) -> None:
        order = np.lexsort((rows, ends))
        self.rows = rows[order]
        self.ends = ends[order]
        self._chains: tuple | None = None

    def position(self, row: int) -> int:
        """Where ``row`` is in this group (the writes into one slot land in the order they started)."""
        i = int(self.rows.searchsorted(row))
        if i < len(self.rows) and self.rows[i] == row:
            return i
        return int(np.flatnonzero(self.rows == row)[0])

    def accumulations(self, tables: DetailTables, dindex: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For a slot the Cube accumulates into: per write, the position of the ``mmad`` that started its
        sum and the K summed so far."""
        if self._chains is None:
            d = dindex[self.rows]
            k, init = tables.mm_k[d], tables.mm_init[d]
            n = len(self.rows)
            first = np.maximum.accumulate(np.where(init, np.arange(n), 0))
            total = np.cumsum(k)
            self._chains = (first, total - total[first] + k[first])
        return self._chains

    def last(self, time: int, row: int) -> int:
        """The row that took effect last by (``time``, ``row``), or -1."""
        hi = int(self.ends.searchsorted(time, side="right"))
        lo = int(self.ends.searchsorted(time, side="left"))
        j = lo + int(self.rows[lo:hi].searchsorted(row, side="right")) if hi > lo else lo  # a tie at ``time``: by row
        return int(self.rows[j - 1]) if j > 0 else -1

    def last_many(self, times: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """:meth:`last` for many steps at once (``times``, ``rows``: int64 arrays): one search for all of them.

        The group is sorted by (end, row); a complex number orders the same way (real part, then imaginary),
        and holds both exactly while they are below 2**53 (a run's picoseconds and rows are far below)."""
        if not len(self.rows):
            return np.full(len(rows), -1, dtype=np.int64)
        if max(int(self.ends[-1]), int(self.rows.max()), int(times.max(initial=0)), int(rows.max(initial=0))) >= 2**53:
            return np.array([self.last(int(a), int(b)) for a, b in zip(times, rows, strict=True)], dtype=np.int64)
        keys = self.ends.astype(np.float64) + 1j * self.rows.astype(np.float64)
        j = np.searchsorted(keys, times.astype(np.float64) + 1j * rows.astype(np.float64), side="right")
        return np.where(j > 0, self.rows[np.maximum(j - 1, 0)], -1).astype(np.int64)


def effect_groups(keys: np.ndarray, rows: np.ndarray, ends: np.ndarray) -> dict:
    return {k: Effects(r, ends[r]) for k, r in groups(keys, rows).items()}


@dataclass(frozen=True)
class Core:
    """A physical core of the run: which one (``ref``), its pipe lanes and its block lane."""

    ref: CoreRef
    pipes: dict  # pipe value -> lane id
    block_lane: int


def source_lines(t: TraceData) -> tuple[SourceLine, ...]:
    """The trace's source locations as records, indexed like its ``src`` column.

    The trace keeps them as "file:line" text (:attr:`engine.trace.TraceData.srcs`); this is the one place
    above it that reads that text, once per run.
    """
    return tuple(SourceLine.parse(text) for text in t.srcs)


class DetailTables:
    """Per detail record (indexed like ``TraceData.detail_index()``): the fields the replay queries."""

    def __init__(self, t: TraceData) -> None:
        n = len(t.details) + 1
        self.q_op = np.full(n, -1, dtype=np.int16)  # QueueOpKind, -1: not a queue op
        self.q_queue = np.full(n, -1, dtype=np.int32)
        self.q_slot = np.full(n, -1, dtype=np.int32)
        self.w_buf = np.full(n, -1, dtype=np.int16)  # an instruction's destination buffer, -1: none
        self.w_owner = np.full(n, -1, dtype=np.int64)  # its queue / TBuf (on chip) or GM allocation
        self.w_slot = np.full(n, -1, dtype=np.int32)
        self.r_buf = np.full(n, -1, dtype=np.int16)  # a store to GM: the on-chip buffer it reads, -1: none
        self.r_owner = np.full(n, -1, dtype=np.int64)
        self.r_slot = np.full(n, -1, dtype=np.int32)
        self.mm_k = np.zeros(n, dtype=np.int64)  # mmad: its K
        self.mm_init = np.zeros(n, dtype=bool)  # mmad: C = A @ B (True) or C += A @ B
        for i, d in enumerate(t.details, start=1):
            if isinstance(d, QueueOp):
                self.q_op[i] = d.op
                self.q_queue[i] = d.queue
                self.q_slot[i] = d.slot
            elif isinstance(d, Instr) and d.dst is not None:
                self.w_buf[i] = d.dst.buf
                self.w_owner[i] = d.dst.owner
                self.w_slot[i] = d.dst.slot
                if d.dst.buf == GM and d.srcs and d.srcs[0].buf != GM:
                    self.r_buf[i], self.r_owner[i], self.r_slot[i] = d.srcs[0].buf, d.srcs[0].owner, d.srcs[0].slot
                if d.op == "mmad":
                    self.mm_k[i] = d.params[2]
                    self.mm_init[i] = d.params[3]


class TraceIndex:
    """Rows by lane, by core queue slot, by core buffer slot and by GM allocation written."""

    def __init__(self, t: TraceData) -> None:
        self.t = t
        self.lane_rows = t.lane_rows()
        self.dindex = t.detail_index()
        self.tables = DetailTables(t)
        self.sources = source_lines(t)
        self.cores = self._cores()
        self.core_of_lane = np.full(max(1, len(t.lanes)), -1, dtype=np.int32)
        for c, core in enumerate(self.cores):
            for lane in (*core.pipes.values(), core.block_lane):
                self.core_of_lane[lane] = c
        self._core_rows: list[np.ndarray] | None = None
        self._queue_index: dict[int, dict[int, Effects]] = {}
        self._writer_index: dict[int, dict[tuple, Effects]] = {}
        self._store_index: dict[int, dict[tuple, np.ndarray]] = {}
        self._gm_writers: dict[int, Effects] | None = None
        self._tasks: tuple | None = None
        self.task_of_row = t.task_rows()  # per row: its task-table index, or -1

    def _cores(self) -> list[Core]:
        found: dict[CoreRef, dict] = {}
        for i, lane in enumerate(self.t.lanes):
            ref = CoreRef.of_lane(lane)
            if ref is None:
                continue
            entry = found.setdefault(ref, {"pipes": {}, "block": -1})
            if lane.kind == LaneKind.PIPE:
                entry["pipes"][lane.pipe] = i
            elif lane.kind == LaneKind.BLOCK:
                entry["block"] = i
        return [Core(ref, found[ref]["pipes"], found[ref]["block"]) for ref in sorted(found)]

    def core_index(self, ref: CoreRef) -> int:
        """The position of core ``ref`` in :attr:`cores` (KeyError: the run has no such core)."""
        for i, core in enumerate(self.cores):
            if core.ref == ref:
                return i
        raise KeyError(f"no core {ref.label} in this run")

    def source_of(self, row: int) -> SourceLine | None:
        """The source line that issued row ``row``, or None."""
        src = int(self.t.src[row])
        return self.sources[src] if src >= 0 else None

    # -- per core ---------------------------------------------------------------------------------
    def core_rows(self, c: int) -> np.ndarray:
        """Every instruction row of core ``c`` (its pipe lanes), ascending (every core's grouped at once, on first
        use)."""
        if self._core_rows is None:
            core_of = np.zeros(max(1, len(self.t.lanes)), dtype=np.uint16)  # 0: no core's pipe, else core + 1
            for i, core in enumerate(self.cores):
                core_of[list(core.pipes.values())] = i + 1
            self._core_rows = rows_by_key(core_of[self.t.lane], len(self.cores) + 1)[1:]
        return self._core_rows[c]

    def queue_index(self, c: int) -> dict[int, Effects]:
        """``{queue * 1024 + slot: rows}`` of core ``c``'s queue operations; ``slot`` is 1023 for a queue's
        ``init_buffer`` rows and NO_SLOT (255) for a TBuf's ``get`` rows."""
        found = self._queue_index.get(c)
        if found is None:
            rows = self.core_rows(c)
            d = self.dindex[rows]
            op = self.tables.q_op[d]
            rows = rows[op >= 0]
            d = self.dindex[rows]
            slot = np.where(self.tables.q_op[d] == QueueOpKind.INIT, INIT_SLOT, self.tables.q_slot[d] & 1023)
            keys = self.tables.q_queue[d].astype(np.int64) * 1024 + slot
            found = self._queue_index[c] = effect_groups(keys, rows, self.t.end)
        return found

    def writer_index(self, c: int) -> dict[tuple, Effects]:
        """``{(buffer, owner, slot): rows}`` of the instructions of core ``c`` that write on-chip memory."""
        found = self._writer_index.get(c)
        if found is None:
            rows = self.core_rows(c)
            d = self.dindex[rows]
            buf = self.tables.w_buf[d]
            rows = rows[buf > GM]
            d = self.dindex[rows]
            owner = self.tables.w_owner[d]
            slot = self.tables.w_slot[d]
            keys = (self.tables.w_buf[d].astype(np.int64) << 40) | ((owner & 0xFFFF) << 16) | (slot & 0xFFFF)
            found = {}
            for key, members in effect_groups(keys, rows, self.t.end).items():
                found[(key >> 40, (key >> 16) & 0xFFFF, key & 0xFFFF)] = members
            self._writer_index[c] = found
        return found

    def next_store(self, c: int, key: tuple, row: int) -> int:
        """The first store to GM on core ``c`` after ``row`` that reads the on-chip slot ``key`` (``(buffer,
        owner, slot)`` as in :meth:`writer_index`), or -1: where the slot's content goes."""
        found = self._store_index.get(c)
        if found is None:
            rows = self.core_rows(c)
            rows = rows[self.tables.r_buf[self.dindex[rows]] >= 0]
            d = self.dindex[rows]
            owner, slot = self.tables.r_owner[d], self.tables.r_slot[d]
            keys = (self.tables.r_buf[d].astype(np.int64) << 40) | ((owner & 0xFFFF) << 16) | (slot & 0xFFFF)
            found = {(k >> 40, (k >> 16) & 0xFFFF, k & 0xFFFF): r for k, r in groups(keys, rows).items()}
            self._store_index[c] = found
        rows = found.get(key)
        if rows is None:
            return -1
        i = int(np.searchsorted(rows, row, side="right"))
        return int(rows[i]) if i < len(rows) else -1

    def gm_writers(self) -> dict[int, Effects]:
        """``{allocation ident: rows}`` of every instruction that writes GM (any core)."""
        if self._gm_writers is None:
            buf = self.tables.w_buf[self.dindex]
            rows = np.flatnonzero(buf == GM)
            self._gm_writers = effect_groups(self.tables.w_owner[self.dindex[rows]], rows, self.t.end)
        return self._gm_writers

    def block_at(self, c: int, row: int) -> int:
        """The BLOCK row of core ``c`` that began last at or before ``row``, or -1."""
        lane = self.cores[c].block_lane
        return last_at_or_before(self.lane_rows[lane], row) if lane >= 0 else -1

    # -- stream tasks -------------------------------------------------------------------------------
    def tasks(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per task of the task table: the row of its stream-lane event (-1: it never ran), its start and end."""
        if self._tasks is None:
            t = self.t
            n = len(t.tasks["seq"])
            row = np.full(n, -1, dtype=np.int64)
            on_stream = t.rows_on(LaneKind.STREAM)
            task = self.task_of_row
            sel = np.flatnonzero(on_stream & (task >= 0) & (t.kind != Kind.MARK))
            row[task[sel]] = sel
            marks = np.flatnonzero(on_stream & (task >= 0) & (t.kind == Kind.MARK))
            row[task[marks]] = marks
            start = np.where(row >= 0, t.start[np.maximum(row, 0)], -1)
            end = np.where(row >= 0, t.end[np.maximum(row, 0)], -1)
            self._tasks = (row, start, end)
        return self._tasks
