"""The trace: an append-only, columnar record of everything that happened in a simulation.

Each event is one row: ``start`` and ``end`` (integer picoseconds), ``lane`` (host thread, stream k,
copy engine, core c pipe p, ...), ``kind``, ``name``, ``nbytes``, ``cause`` (the row of the host call
that caused it, or -1), ``src`` (the file:line of the user code that issued it) and ``detail``: what
the event means, as a typed record (:mod:`engine.detail`: the queue, slot and offset of a buffer
event, the GM tensor and tile a move touches, a stream task's submit time, ...) interned in a side
table. Strings and details are stored once, so a row costs 41 bytes. Lanes carry their kind, core
and pipe as data (:class:`Lane`). ``flops``, ``buf`` and ``slot`` are derived from the details.

Rows are staged as tuples and packed into typed arrays every few thousand rows (cheap appends, no
per-event Python objects kept); bulk producers (the AI-core scheduler) append whole numpy columns.
:meth:`Trace.freeze` returns a :class:`TraceData`: numpy columns sorted by start time, the form
the analysis, the exports and the UIs read. State at any step is derived from it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from types import MappingProxyType

import numpy as np

from .detail import NO_SLOT, Instr, QueueOp, TaskInfo
from .intervals import covered

PS_PER_US = 1_000_000


class Kind(IntEnum):
    CALL = 0  # a host API call
    WAIT = 1  # something blocked: host in a synchronize, a stream on an event, a pipe on a flag
    COPY = 2  # a host-link or device copy (bytes)
    KERNEL = 3  # a kernel on a stream / on the core array
    MARK = 4  # an instant: event recorded, kernel launched
    MOVE = 5  # an on-chip transfer on an MTE or FIX pipe (bytes)
    COMPUTE = 6  # Cube, Vector or Scalar work (flops)
    FLAG_SET = 7
    FLAG_WAIT = 8
    BARRIER = 9
    BLOCK = 10  # one SPMD block running on a core
    ERROR = 11  # a failed call or a detected problem (a finding)
    HOST_WORK = 12  # host-side computation the user asked for (tiling, numerics check)
    BUFFER = 13  # an on-chip buffer event that implies no hardware flag (init_buffer, alloc_tensor, TBuf.get...)


class LaneKind(IntEnum):
    HOST = 0  # the host thread
    STREAM = 1  # a device stream (its tasks)
    COPY_ENGINE = 2  # a DMA engine of the host link or device
    KERNELS = 3  # the AI-core array: one bar per kernel
    PIPE = 4  # one pipe of one AI core
    BLOCK = 5  # the SPMD blocks one AI core ran
    OTHER = 6


# (column name, array typecode, numpy dtype)
_COLUMNS = (
    ("start", "q", np.int64),
    ("end", "q", np.int64),
    ("nbytes", "q", np.int64),
    ("cause", "i", np.int32),
    ("src", "i", np.int32),
    ("detail", "i", np.int32),
    ("name", "h", np.int16),
    ("lane", "h", np.int16),
    ("kind", "B", np.uint8),
)
COLUMN_NAMES = tuple(c[0] for c in _COLUMNS)
COLUMN_DTYPES = MappingProxyType({c[0]: np.dtype(c[2]) for c in _COLUMNS})
DERIVED_COLUMNS = ("flops", "buf", "slot")
BYTES_PER_ROW = sum(np.dtype(c[2]).itemsize for c in _COLUMNS)

_FLUSH_ROWS = 4096
_DEFAULTS = MappingProxyType({"nbytes": 0, "cause": -1, "src": -1, "detail": -1})
_MAX_NAMES = np.iinfo(np.int16).max

# Stream tasks are many (a pipeline of 10,000 batches has 40,000) and each is unique, so they are not
# detail records but rows of a columnar task table; a row's ``detail`` of TASK_DETAIL + i names task i.
TASK_DETAIL = 1 << 30
TASK_COLUMNS = (
    ("seq", np.int32),  # submission number, unique in the run
    ("stream", np.int16),
    ("kind", np.uint8),  # engine.stream.TaskKind
    ("submit", np.int64),  # when the host queued it (ps)
    ("event", np.int32),  # RECORD / WAIT: the event's ident, else -1
    ("direction", np.uint8),  # COPY: index in DIRECTIONS
    ("flops", np.int64),  # KERNEL: its flops
)
DIRECTIONS = ("", "H2D", "D2H", "D2D", "H2H")


@dataclass(frozen=True)
class Lane:
    """A horizontal track of the timeline: ``process`` groups lanes (Host, Device streams, AIC 3...).

    ``kind`` says what the lane is; ``core`` (the physical core's number), ``core_type`` ("AIC" or
    "AIV"), ``pipe`` (an ``aicore.pipes.Pipe`` value), ``unit`` (a stream's or engine's number) and
    ``direction`` (H2D, D2H, D2D for engines) say which, as data. -1 / "" where they do not apply.
    """

    process: str
    thread: str
    sort: int  # order of the process in a viewer
    kind: int = LaneKind.OTHER
    core: int = -1
    core_type: str = ""
    pipe: int = -1
    unit: int = -1
    direction: str = ""

    @property
    def label(self) -> str:
        return f"{self.process}/{self.thread}"


class Interner:
    """A string table: id -> string and string -> id."""

    __slots__ = ("_ids", "items")

    def __init__(self) -> None:
        self.items: list = []
        self._ids: dict = {}

    def __call__(self, item) -> int:
        i = self._ids.get(item)
        if i is None:
            i = self._ids[item] = len(self.items)
            self.items.append(item)
        return i

    def __len__(self) -> int:
        return len(self.items)


class Trace:
    """The growing trace a simulation appends to. Owned by exactly one simulation."""

    on_progress = None  # a front end's callback, given the rows recorded (or being recorded) so far
    _reported = 0  # the largest count reported (reports never go back)

    def __init__(self) -> None:
        self._chunks: list[dict[str, np.ndarray]] = []  # packed rows, in append order
        self._chunk_starts: list[int] = []
        self._rows: list[tuple] = []
        self._packed = 0
        self.names = Interner()
        self.srcs = Interner()
        self.lanes = Interner()
        self.lane_info: list[Lane] = []
        self.details = Interner()
        self.tasks: dict[str, list] = {name: [] for name, _dtype in TASK_COLUMNS}  # tasks added one by one
        self._task_parts: list[dict[str, np.ndarray]] = []  # tasks before them, as columns
        self._task_starts: list[int] = []
        self._task_packed = 0

    # -- tables -------------------------------------------------------------------------------
    def lane(self, process: str, thread: str, sort: int = 0, kind: int = LaneKind.OTHER, **which) -> int:
        """The id of a lane, created on first use with its kind and ``core``/``pipe``/``unit``/... fields."""
        key = (process, thread)
        n = len(self.lanes)
        i = self.lanes(key)
        if i == n:
            self.lane_info.append(Lane(process, thread, sort, kind, **which))
        return i

    def detail(self, record) -> int:
        """The id of a detail record (:mod:`engine.detail`), stored once however often it is used."""
        return self.details(record)

    def task(self, seq: int, stream: int, kind: int, submit: int, event: int = -1, direction: str = "") -> int:
        """Add a stream task to the task table; returns the detail id its rows carry."""
        t = self.tasks
        t["seq"].append(seq)
        t["stream"].append(stream)
        t["kind"].append(kind)
        t["submit"].append(submit)
        t["event"].append(event)
        t["direction"].append(DIRECTIONS.index(direction))
        t["flops"].append(0)
        return TASK_DETAIL + self._task_packed + len(t["seq"]) - 1

    def set_task_flops(self, detail: int, flops: int) -> None:
        i = detail - TASK_DETAIL - self._task_packed
        if i >= 0:
            self.tasks["flops"][i] = int(flops)
        else:
            p = bisect_right(self._task_starts, i + self._task_packed) - 1
            self._task_parts[p]["flops"][i + self._task_packed - self._task_starts[p]] = int(flops)

    def extend_tasks(self, **columns) -> int:
        """Add many tasks given as columns (every column of TASK_COLUMNS, direction as its index in
        DIRECTIONS); returns the first one's detail id."""
        self._pack_tasks()
        part = {name: np.asarray(columns[name], dtype=dtype) for name, dtype in TASK_COLUMNS}
        first = TASK_DETAIL + self._task_packed
        self._task_parts.append(part)
        self._task_starts.append(self._task_packed)
        self._task_packed += len(part["seq"])
        return first

    def _pack_tasks(self) -> None:
        """The tasks added one by one so far, as a part of columns."""
        t = self.tasks
        if t["seq"]:
            self._task_parts.append({name: np.array(t[name], dtype=dtype) for name, dtype in TASK_COLUMNS})
            self._task_starts.append(self._task_packed)
            self._task_packed += len(t["seq"])
            for column in t.values():
                column.clear()

    def task_table(self) -> dict[str, np.ndarray]:
        """Every task added so far, as one array per column."""
        self._pack_tasks()
        parts = self._task_parts
        if len(parts) != 1:
            merged = {
                name: np.concatenate([p[name] for p in parts]) if parts else np.zeros(0, dtype=dtype)
                for name, dtype in TASK_COLUMNS
            }
            self._task_parts, self._task_starts = [merged], [0]
        return self._task_parts[0]

    def name(self, text: str) -> int:
        i = self.names(text)
        if i > _MAX_NAMES:
            raise ValueError(f"trace name table full ({_MAX_NAMES} names): put varying details elsewhere")
        return i

    def src(self, location: str) -> int:
        return self.srcs(location)

    # -- rows ---------------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._packed + len(self._rows)

    def add(
        self,
        start: int,
        end: int,
        lane: int,
        kind: int,
        name: int,
        nbytes: int = 0,
        cause: int = -1,
        src: int = -1,
        detail: int = -1,
    ) -> int:
        """Append one event; returns its row number (stable until :meth:`freeze`)."""
        rows = self._rows
        rows.append((start, end, nbytes, cause, src, detail, name, lane, kind))
        if len(rows) >= _FLUSH_ROWS:
            self._pack()
        return self._packed + len(rows) - 1

    def add_pair(
        self,
        start: int,
        end: int,
        lane1: int,
        lane2: int,
        kind: int,
        name: int,
        nbytes: int,
        cause: int,
        src: int,
        detail: int,
    ) -> None:
        """Append the same event on two lanes (a copy on its stream and on its engine): one call, two rows."""
        rows = self._rows
        rows.append((start, end, nbytes, cause, src, detail, name, lane1, kind))
        rows.append((start, end, nbytes, cause, src, detail, name, lane2, kind))
        if len(rows) >= _FLUSH_ROWS:
            self._pack()

    def set_end(self, row: int, end: int) -> None:
        """Move the end of an event that is still open (a host call that turned out to block)."""
        staged = row - self._packed
        if staged >= 0:
            r = self._rows[staged]
            self._rows[staged] = (r[0], end, *r[2:])
        else:
            i = bisect_right(self._chunk_starts, row) - 1
            self._chunks[i]["end"][row - self._chunk_starts[i]] = end

    def extend(self, **columns: np.ndarray) -> int:
        """Append many events given as numpy columns (missing columns take their defaults).

        The trace keeps the arrays it is given (no copy): pass arrays nobody else will write.
        Returns the row number of the first appended event.
        """
        self._pack()
        n = len(next(iter(columns.values())))
        chunk = {}
        for name, _code, dtype in _COLUMNS:
            col = columns.get(name)
            if col is None:
                if name not in _DEFAULTS:
                    raise ValueError(f"Trace.extend: column {name!r} is required")
                col = np.full(n, _DEFAULTS[name], dtype=dtype)
            col = np.asarray(col, dtype=dtype)
            if len(col) != n:
                raise ValueError(f"Trace.extend: column {name!r} has {len(col)} rows, expected {n}")
            chunk[name] = col
        return self._add_chunk(chunk, n)

    def _add_chunk(self, chunk: dict[str, np.ndarray], n: int) -> int:
        first = self._packed
        if n:
            self._chunks.append(chunk)
            self._chunk_starts.append(first)
            self._packed += n
        self.progress()
        return first

    def progress(self, pending: int = 0) -> None:
        """Report the rows so far to ``on_progress`` (``pending``: rows computed, not appended yet)."""
        if self.on_progress is not None:
            self._reported = max(self._reported, self._packed + len(self._rows) + pending)
            self.on_progress(self._reported)

    def _pack(self) -> None:
        rows = self._rows
        if not rows:
            return
        chunk = {
            name: np.array(values, dtype=dtype)
            for (name, _code, dtype), values in zip(_COLUMNS, zip(*rows, strict=True), strict=True)
        }
        self._add_chunk(chunk, len(rows))
        rows.clear()

    def _compact(self) -> dict[str, np.ndarray]:
        """All packed rows as one chunk (concatenated once, then kept)."""
        self._pack()
        if not self._chunks:
            return {name: np.zeros(0, dtype=dtype) for name, _code, dtype in _COLUMNS}
        if len(self._chunks) > 1:
            merged = {name: np.concatenate([c[name] for c in self._chunks]) for name in COLUMN_NAMES}
            self._chunks = [merged]
            self._chunk_starts = [0]
        return self._chunks[0]

    def column(self, name: str) -> np.ndarray:
        """A copy of one column in append order (for tests and incremental readers)."""
        return self._compact()[name].copy()

    def last_end(self, kinds: tuple[int, ...]) -> int | None:
        """The latest end of the rows of these kinds so far (None: no such row), read chunk by chunk: the
        rows are not merged (``freeze`` merges them once)."""
        self._pack()
        ends = [int(c["end"][sel].max()) for c in self._chunks if (sel := np.isin(c["kind"], kinds)).any()]
        return max(ends) if ends else None

    def freeze(self) -> TraceData:
        """Sort by start time (ties keep append order) and return immutable numpy columns."""
        cols = self._compact()
        order = np.argsort(cols["start"], kind="stable")
        inverse = np.empty_like(order)
        inverse[order] = np.arange(len(order))
        sorted_cols = {k: v[order] for k, v in cols.items()}
        cause = sorted_cols["cause"]
        has = cause >= 0
        cause[has] = inverse[cause[has]]
        for v in sorted_cols.values():
            v.setflags(write=False)
        return TraceData(
            columns=sorted_cols,
            names=tuple(self.names.items),
            srcs=tuple(self.srcs.items),
            lanes=tuple(self.lane_info),
            details=tuple(self.details.items),
            tasks={name: column.copy() for name, column in self.task_table().items()},
        )


class Columns(Mapping):
    """A trace's stored columns, plus ``flops``, ``buf`` and ``slot`` derived from the details on first use."""

    def __init__(self, stored: dict[str, np.ndarray], details: tuple, tasks: dict[str, np.ndarray]) -> None:
        self._stored = stored
        self._details = details
        self._tasks = tasks
        self._derived: dict[str, np.ndarray] = {}

    def __getitem__(self, name: str) -> np.ndarray:
        found = self._stored.get(name)
        if found is not None:
            return found
        found = self._derived.get(name)
        if found is None:
            if name not in DERIVED_COLUMNS:
                raise KeyError(name)
            table = detail_table(self._details, name)
            detail = self._stored["detail"]
            is_task = detail >= TASK_DETAIL
            found = table[np.where(is_task, 0, detail + 1)]  # TraceData.detail_index
            if name == "flops" and is_task.any():
                found[is_task] = self._tasks["flops"][detail[is_task] - TASK_DETAIL]
            found.setflags(write=False)
            self._derived[name] = found
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(COLUMN_NAMES)

    def __len__(self) -> int:
        return len(COLUMN_NAMES)

    @property
    def stored(self) -> dict[str, np.ndarray]:
        return self._stored


def detail_table(details: tuple, name: str) -> np.ndarray:
    """Per detail id + 1 (so that -1, no detail, is entry 0): its ``flops``, ``buf`` or ``slot``."""
    if name == "flops":
        values = [d.flops if isinstance(d, Instr) else 0 for d in details]
        return np.array([0, *values], dtype=np.int64)
    out = [0 if name == "buf" else NO_SLOT]
    for d in details:
        if isinstance(d, QueueOp):
            out.append(d.buf if name == "buf" else d.slot)
        elif isinstance(d, Instr):
            local = d.dst if d.dst is not None and d.dst.buf else next((r for r in d.srcs if r.buf), None)
            out.append(0 if local is None else (local.buf if name == "buf" else local.slot))
        else:
            out.append(out[0])
    return np.array(out, dtype=np.int64 if name == "flops" else np.uint8)


@dataclass(frozen=True)
class TraceData:
    """A finished trace: numpy columns sorted by start, plus the string tables."""

    columns: Mapping[str, np.ndarray]
    names: tuple[str, ...]
    srcs: tuple[str, ...]
    lanes: tuple[Lane, ...]
    details: tuple = ()
    tasks: dict = field(default_factory=lambda: {n: np.zeros(0, dtype=d) for n, d in TASK_COLUMNS})

    def __post_init__(self) -> None:
        if not isinstance(self.columns, Columns):
            object.__setattr__(self, "columns", Columns(dict(self.columns), self.details, self.tasks))

    def __len__(self) -> int:
        return len(self.columns["start"])

    def __getattr__(self, item: str) -> np.ndarray:
        if item.startswith("_") or item == "columns":  # not set yet (unpickling): no column lookup
            raise AttributeError(item)
        try:
            return self.columns[item]
        except KeyError:
            raise AttributeError(item) from None

    @property
    def nbytes(self) -> int:
        """Bytes of the stored columns and of the task table (derived columns are not kept)."""
        return sum(v.nbytes for v in self.columns.stored.values()) + sum(v.nbytes for v in self.tasks.values())

    def select(self, rows: np.ndarray) -> TraceData:
        """The trace with only the given rows (ascending indices); causes pointing at dropped rows become -1."""
        new_pos = np.full(len(self), -1, dtype=np.int64)
        new_pos[rows] = np.arange(len(rows))
        cols = {k: v[rows].copy() for k, v in self.columns.stored.items()}
        cause = cols["cause"]
        has = cause >= 0
        cause[has] = new_pos[cause[has]]
        return TraceData(cols, self.names, self.srcs, self.lanes, self.details, self.tasks)

    def detail_index(self) -> np.ndarray:
        """Per row: 1 + its detail record's index in ``details``, 0 for none and for task rows: index a
        per-detail table built as ``[value for no detail, *(value of d for d in details)]`` with it."""
        detail = self.columns["detail"]
        return np.where(detail >= TASK_DETAIL, 0, detail + 1)

    def rows_with(self, predicate) -> np.ndarray:
        """Per row: does ``predicate(detail)`` hold for its detail record (rows without one, and task rows:
        False; use :meth:`task_rows` for those)."""
        table = np.array([False, *(bool(predicate(d)) for d in self.details)], dtype=bool)
        return table[self.detail_index()]

    def task_rows(self) -> np.ndarray:
        """Per row: the index in the task table of the stream task it shows, or -1."""
        detail = self.columns["detail"]
        return np.where(detail >= TASK_DETAIL, detail - TASK_DETAIL, -1)

    def task_info(self, index: int) -> TaskInfo:
        t = self.tasks
        return TaskInfo(
            int(t["seq"][index]),
            int(t["stream"][index]),
            int(t["kind"][index]),
            int(t["submit"][index]),
            int(t["event"][index]),
            DIRECTIONS[int(t["direction"][index])],
            int(t["flops"][index]),
        )

    def detail_of(self, row: int):
        """The typed detail record of a row (a :class:`TaskInfo` for a stream task's rows), or None."""
        d = int(self.columns["detail"][row])
        if d >= TASK_DETAIL:
            return self.task_info(d - TASK_DETAIL)
        return self.details[d] if d >= 0 else None

    def lane_id(self, process: str, thread: str) -> int:
        for i, lane in enumerate(self.lanes):
            if lane.process == process and lane.thread == thread:
                return i
        raise KeyError(f"no lane {process}/{thread}")

    def lane_label(self, lane: int) -> str:
        return self.lanes[lane].label

    def lane_mask(self, predicate) -> np.ndarray:
        """Per lane id: does ``predicate(lane)`` hold (index it with the ``lane`` column)."""
        return np.array([bool(predicate(lane)) for lane in self.lanes] or [False], dtype=bool)

    def lane_kinds(self) -> np.ndarray:
        """Per lane id: its :class:`LaneKind`."""
        return np.array([lane.kind for lane in self.lanes] or [LaneKind.OTHER], dtype=np.uint8)

    def lanes_of(self, *kinds: int) -> list[int]:
        """Ids of the lanes of the given kinds, in creation order."""
        return [i for i, lane in enumerate(self.lanes) if lane.kind in kinds]

    def rows_on(self, *kinds: int) -> np.ndarray:
        """Per row: is it on a lane of one of these :class:`LaneKind`."""
        return np.isin(self.lane_kinds(), kinds)[self.columns["lane"]]

    def core_lane(self, process: str, pipe: int) -> int | None:
        """The lane of ``pipe`` on the core named ``process`` ("AIC 3"), or None if that core has no such pipe."""
        for i, lane in enumerate(self.lanes):
            if lane.process == process and lane.kind == LaneKind.PIPE and lane.pipe == pipe:
                return i
        return None

    def core_types(self) -> dict[str, str]:
        """Core name ("AIC 3") -> its type ("AIC" / "AIV"), for every core that has lanes."""
        return {lane.process: lane.core_type for lane in self.lanes if lane.core >= 0}

    def core_order(self, cores) -> list[str]:
        """Core names sorted as a viewer lists them: AICs then AIVs, by number."""
        info = {lane.process: (lane.core_type, lane.core) for lane in self.lanes if lane.core >= 0}
        return sorted(cores, key=lambda name: info[name])

    def row(self, i: int) -> dict:
        """One event as a plain dict with strings resolved (for tests, logs and UIs)."""
        c = self.columns
        src = int(c["src"][i])
        return {
            "start": int(c["start"][i]),
            "end": int(c["end"][i]),
            "lane": self.lane_label(int(c["lane"][i])),
            "kind": Kind(int(c["kind"][i])).name,
            "name": self.names[int(c["name"][i])],
            "nbytes": int(c["nbytes"][i]),
            "flops": int(c["flops"][i]),
            "cause": int(c["cause"][i]),
            "src": self.srcs[src] if src >= 0 else "",
            "detail": self.detail_of(i),
        }

    def rows(self, mask: np.ndarray | None = None) -> list[dict]:
        """:meth:`row` of every row (or of the rows ``mask`` selects), built column by column."""
        idx = slice(None) if mask is None else np.flatnonzero(mask)
        c = self.columns
        lanes = [lane.label for lane in self.lanes]
        kinds = {int(k): k.name for k in Kind}
        names, srcs, details = self.names, self.srcs, self.details
        task_infos: dict[int, TaskInfo] = {}

        def detail_of(d: int):
            if d < 0:
                return None
            if d < TASK_DETAIL:
                return details[d]
            found = task_infos.get(d)
            if found is None:
                found = task_infos[d] = self.task_info(d - TASK_DETAIL)
            return found

        columns = [c[k][idx].tolist() for k in ("start", "end", "lane", "kind", "name", "nbytes", "flops", "cause")]
        return [
            {
                "start": start,
                "end": end,
                "lane": lanes[lane],
                "kind": kinds[kind],
                "name": names[name],
                "nbytes": nbytes,
                "flops": flops,
                "cause": cause,
                "src": srcs[src] if src >= 0 else "",
                "detail": detail_of(detail),
            }
            for start, end, lane, kind, name, nbytes, flops, cause, src, detail in zip(
                *columns, c["src"][idx].tolist(), c["detail"][idx].tolist(), strict=True
            )
        ]

    def log(self, mask: np.ndarray | None = None, unit: int = PS_PER_US) -> list[tuple]:
        """Compact ``(start, end, lane, name)`` tuples in ``unit`` (microseconds by default).

        The form the exact event-log tests compare against, in the style of simpy's tests.
        """
        out = []
        for r in self.rows(mask):
            out.append((r["start"] / unit, r["end"] / unit, r["lane"], r["name"]))
        return out

    def busy_by_lane(
        self, kinds: tuple[int, ...] | None = None, lane_kinds: tuple[int, ...] | None = None
    ) -> dict[str, int]:
        """Busy picoseconds per lane: the union of the lane's intervals (nested slices count once).

        ``kinds`` keeps only those event kinds; ``lane_kinds`` only lanes of those :class:`LaneKind`.
        """
        c = self.columns
        out: dict[str, int] = {}
        mask = np.ones(len(self), dtype=bool) if kinds is None else np.isin(c["kind"], kinds)
        if lane_kinds is not None:
            mask &= np.isin(self.lane_kinds(), lane_kinds)[c["lane"]]
        lanes = c["lane"][mask]
        starts = c["start"][mask]
        ends = c["end"][mask]
        for lane in np.unique(lanes):
            sel = lanes == lane
            out[self.lane_label(int(lane))] = covered(starts[sel], ends[sel])
        return out
