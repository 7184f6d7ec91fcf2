"""The trace: an append-only, columnar record of everything that happened in a simulation.

Each event is one row: ``start`` and ``end`` (integer picoseconds), ``lane`` (host thread, stream k,
copy engine, core c pipe p, ...), ``kind``, ``name``, ``nbytes``, ``flops``, ``cause`` (the row of the
host call that caused it, or -1), ``src`` (the file:line of the user code that issued it), and the
on-chip ``buf`` and ``slot`` it used. Strings are interned in small tables, so a row costs 47 bytes.

Rows are staged as tuples and packed into typed arrays every few thousand rows (cheap appends, no
per-event Python objects kept); bulk producers (the AI-core scheduler) append whole numpy columns.
:meth:`Trace.freeze` returns a :class:`TraceData`: numpy columns sorted by start time, the form
the analysis, the exports and the UIs read. State at any step is derived from it.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from enum import IntEnum
from types import MappingProxyType

import numpy as np

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


NO_SLOT = 255

# (column name, array typecode, numpy dtype)
_COLUMNS = (
    ("start", "q", np.int64),
    ("end", "q", np.int64),
    ("nbytes", "q", np.int64),
    ("flops", "q", np.int64),
    ("cause", "i", np.int32),
    ("src", "i", np.int32),
    ("name", "h", np.int16),
    ("lane", "h", np.int16),
    ("kind", "B", np.uint8),
    ("buf", "B", np.uint8),
    ("slot", "B", np.uint8),
)
COLUMN_NAMES = tuple(c[0] for c in _COLUMNS)
BYTES_PER_ROW = sum(np.dtype(c[2]).itemsize for c in _COLUMNS)

_FLUSH_ROWS = 4096
_DEFAULTS = MappingProxyType({"nbytes": 0, "flops": 0, "cause": -1, "src": -1, "buf": 0, "slot": NO_SLOT})
_MAX_NAMES = np.iinfo(np.int16).max


@dataclass(frozen=True)
class Lane:
    """A horizontal track of the timeline: ``process`` groups lanes (Host, Device streams, AIC 3...)."""

    process: str
    thread: str
    sort: int  # order of the process in a viewer


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

    # -- tables -------------------------------------------------------------------------------
    def lane(self, process: str, thread: str, sort: int = 0) -> int:
        key = (process, thread)
        n = len(self.lanes)
        i = self.lanes(key)
        if i == n:
            self.lane_info.append(Lane(process, thread, sort))
        return i

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
        flops: int = 0,
        cause: int = -1,
        src: int = -1,
        buf: int = 0,
        slot: int = NO_SLOT,
    ) -> int:
        """Append one event; returns its row number (stable until :meth:`freeze`)."""
        rows = self._rows
        rows.append((start, end, nbytes, flops, cause, src, name, lane, kind, buf, slot))
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
        flops: int,
        cause: int,
        src: int,
    ) -> None:
        """Append the same event on two lanes (a copy on its stream and on its engine): one call, two rows."""
        rows = self._rows
        rows.append((start, end, nbytes, flops, cause, src, name, lane1, kind, 0, NO_SLOT))
        rows.append((start, end, nbytes, flops, cause, src, name, lane2, kind, 0, NO_SLOT))
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
        )


@dataclass(frozen=True)
class TraceData:
    """A finished trace: numpy columns sorted by start, plus the string tables."""

    columns: dict[str, np.ndarray]
    names: tuple[str, ...]
    srcs: tuple[str, ...]
    lanes: tuple[Lane, ...]

    def __len__(self) -> int:
        return len(self.columns["start"])

    def __getattr__(self, item: str) -> np.ndarray:
        try:
            return self.columns[item]
        except KeyError:
            raise AttributeError(item) from None

    @property
    def nbytes(self) -> int:
        return sum(v.nbytes for v in self.columns.values())

    def lane_id(self, process: str, thread: str) -> int:
        for i, lane in enumerate(self.lanes):
            if lane.process == process and lane.thread == thread:
                return i
        raise KeyError(f"no lane {process}/{thread}")

    def lane_label(self, lane: int) -> str:
        info = self.lanes[lane]
        return f"{info.process}/{info.thread}"

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
            "buf": int(c["buf"][i]),
            "slot": int(c["slot"][i]),
        }

    def rows(self, mask: np.ndarray | None = None) -> list[dict]:
        idx = np.arange(len(self)) if mask is None else np.flatnonzero(mask)
        return [self.row(int(i)) for i in idx]

    def log(self, mask: np.ndarray | None = None, unit: int = PS_PER_US) -> list[tuple]:
        """Compact ``(start, end, lane, name)`` tuples in ``unit`` (microseconds by default).

        The form the exact event-log tests compare against, in the style of simpy's tests.
        """
        out = []
        for r in self.rows(mask):
            out.append((r["start"] / unit, r["end"] / unit, r["lane"], r["name"]))
        return out

    def busy_by_lane(
        self, kinds: tuple[int, ...] | None = None, processes: tuple[str, ...] | None = None
    ) -> dict[str, int]:
        """Busy picoseconds per lane: the union of the lane's intervals (nested slices count once).

        ``kinds`` keeps only those event kinds; ``processes`` only lanes whose process starts with one of them.
        """
        c = self.columns
        out: dict[str, int] = {}
        mask = np.ones(len(self), dtype=bool) if kinds is None else np.isin(c["kind"], kinds)
        if processes is not None:
            wanted = np.array([lane.process.startswith(processes) for lane in self.lanes] or [False], dtype=bool)
            mask &= wanted[c["lane"]]
        lanes = c["lane"][mask]
        starts = c["start"][mask]
        ends = c["end"][mask]
        for lane in np.unique(lanes):
            sel = lanes == lane
            out[self.lane_label(int(lane))] = covered(starts[sel], ends[sel])
        return out
