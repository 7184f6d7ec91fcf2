"""The trace: an append-only, columnar record of everything that happened in a simulation.

Each event is one row: ``start`` and ``end`` (integer picoseconds), ``lane`` (host thread, stream k,
copy engine, core c pipe p, ...), ``kind``, ``name``, ``nbytes``, ``cause`` (the row of the host call
that caused it, or -1), ``src`` (the file:line of the user code that issued it) and ``detail``: what
the event means, as a typed record (:mod:`engine.trace.detail`: the queue, slot and offset of a buffer
event, the GM tensor and tile a move touches, a stream task's submit time, ...) interned in a side
table. Strings and details are stored once, so a row costs 41 bytes. Lanes carry their kind, core
and pipe as data (:class:`Lane`). ``flops``, ``buf`` and ``slot`` are derived from the details.

Rows are staged as tuples and packed into typed arrays every few thousand rows (cheap appends, no
per-event Python objects kept); bulk producers (the AI-core scheduler) append whole numpy columns.
:meth:`Trace.freeze` returns a :class:`~engine.trace.data.TraceData`: numpy columns sorted by start
time, ties in the order a call-by-call run appends them (:mod:`engine.trace.order`), the form the
analysis, the exports and the UIs read. This module is the writer; the schema is
:mod:`engine.trace.schema`, the reader :mod:`engine.trace.data`.
"""

from __future__ import annotations

from bisect import bisect_right
from types import MappingProxyType

import numpy as np

from .data import TraceData
from .order import RowOrder
from .schema import (
    COLUMN_NAMES,
    COLUMNS,
    DIRECTIONS,
    TASK_COLUMNS,
    TASK_DETAIL,
    Lane,
    LaneKind,
)

__all__ = ("Interner", "Trace")

_FLUSH_ROWS = 4096
_DEFAULTS = MappingProxyType({"nbytes": 0, "cause": -1, "src": -1, "detail": -1})
_MAX_NAMES = np.iinfo(np.int16).max


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
        self._moved = 0  # rows freeze moved into its result (still counted: len() is the rows recorded)
        self.names = Interner()
        self.srcs = Interner()
        self.lanes = Interner()
        self.lane_info: list[Lane] = []
        self.details = Interner()
        self.tasks: dict[str, list] = {name: [] for name, _dtype in TASK_COLUMNS}  # tasks added one by one
        self._task_parts: list[dict[str, np.ndarray]] = []  # tasks before them, as columns
        self._task_starts: list[int] = []
        self._task_packed = 0
        self.order = RowOrder()  # where each row belongs in a call-by-call run (a fast run places some)

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
        """The id of a detail record (:mod:`engine.trace.detail`), stored once however often it is used."""
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
        return self._moved + self._packed + len(self._rows)

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

    def rewrite(self, first: int, **columns: np.ndarray) -> None:
        """Overwrite columns of rows ``first, first + 1, ...`` appended in one :meth:`extend` (a call log sets
        its calls' times once it has played them)."""
        self._pack()
        i = bisect_right(self._chunk_starts, first) - 1
        chunk, at = self._chunks[i], first - self._chunk_starts[i]
        for name, values in columns.items():
            chunk[name][at : at + len(values)] = values

    def extend(self, **columns: np.ndarray) -> int:
        """Append many events given as numpy columns (missing columns take their defaults).

        The trace keeps the arrays it is given (no copy): pass arrays nobody else will write.
        Returns the row number of the first appended event.
        """
        self._pack()
        n = len(next(iter(columns.values())))
        chunk = {}
        for name, _code, dtype in COLUMNS:
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
            for (name, _code, dtype), values in zip(COLUMNS, zip(*rows, strict=True), strict=True)
        }
        self._add_chunk(chunk, len(rows))
        rows.clear()

    def _compact(self) -> dict[str, np.ndarray]:
        """All packed rows as one chunk (concatenated once, then kept)."""
        self._pack()
        if not self._chunks:
            return {name: np.zeros(0, dtype=dtype) for name, _code, dtype in COLUMNS}
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
        """Sort by start time (ties in the order a call-by-call run appends them: append order, unless rows
        were placed elsewhere, see :mod:`engine.trace.order`) and return immutable numpy columns.

        The rows move into the result: column by column, so that a large trace is never held twice (the
        trace is empty afterwards; a simulation freezes its trace once, when it finishes)."""
        self._pack()
        chunks = self._chunks
        self._chunks, self._chunk_starts = [], []
        n, self._packed = self._packed, 0
        self._moved += n

        def take(name: str, dtype) -> np.ndarray:  # one column of every chunk, the chunks letting go of it
            parts = [chunk.pop(name) for chunk in chunks]
            if not parts:
                return np.zeros(0, dtype=dtype)
            return parts[0] if len(parts) == 1 else np.concatenate(parts)

        start = take("start", np.int64)
        if self.order.needed:
            major, sub = self.order.keys(n)
            order = np.lexsort((sub, major, start))
            del major, sub
        else:
            order = np.argsort(start, kind="stable")
        sorted_cols = {"start": start[order]}
        del start
        for name, _code, dtype in COLUMNS[1:]:
            sorted_cols[name] = take(name, dtype)[order]
        cause = sorted_cols["cause"]
        has = cause >= 0
        inverse = np.empty_like(order)
        inverse[order] = np.arange(n)
        cause[has] = inverse[cause[has]]
        del inverse, order, has
        for v in sorted_cols.values():
            v.setflags(write=False)
        return TraceData(
            columns={name: sorted_cols[name] for name in COLUMN_NAMES},
            names=tuple(self.names.items),
            srcs=tuple(self.srcs.items),
            lanes=tuple(self.lane_info),
            details=tuple(self.details.items),
            tasks={name: column.copy() for name, column in self.task_table().items()},
        )
