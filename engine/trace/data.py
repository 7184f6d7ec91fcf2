"""A finished trace, as the analysis, the exports and the UIs read it.

:class:`TraceData` holds the rows as immutable numpy columns sorted by start time (:mod:`engine.trace`
writes and freezes them), the string, lane and detail tables they index, and the task table. Its
:class:`Columns` derive ``flops``, ``buf`` and ``slot`` from the details on first use. Everything a view
shows at a step is computed from it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np

from .detail import NO_SLOT, Instr, QueueOp, TaskInfo
from .intervals import covered
from .schema import (
    COLUMN_NAMES,
    DERIVED_COLUMNS,
    DIRECTIONS,
    PS_PER_US,
    TASK_COLUMNS,
    TASK_DETAIL,
    Kind,
    Lane,
    LaneKind,
)

_FEW_VALUES = 8  # one_of compares a narrow column with each of at most this many values


def one_of(column: np.ndarray, values) -> np.ndarray:
    """Per row: is ``column``'s value one of ``values`` (``np.isin``; for the narrow integer columns, ``kind``
    (uint8) and ``lane`` (int16), no cast of the whole column to int64: a comparison per value when they are few,
    else a lookup table, whose gather costs as much as about a dozen comparisons)."""
    if column.dtype in (np.uint8, np.int16):
        info = np.iinfo(column.dtype)
        wanted = [v for v in map(int, values) if info.min <= v <= info.max]
        if len(wanted) <= _FEW_VALUES:
            found = np.zeros(len(column), dtype=bool)
            for v in wanted:
                found |= column == v
            return found
        wide = column.dtype == np.int16
        table = np.zeros(1 << (8 * column.itemsize), dtype=bool)
        for v in wanted:
            table[v & 0xFFFF] = True  # a negative int16 at its unsigned bits
        return table[column.view(np.uint16) if wide else column]
    return np.isin(column, values)


def rows_by_key(keys: np.ndarray, count: int) -> list[np.ndarray]:
    """Per key ``0 .. count - 1``: the rows whose value in ``keys`` (small non-negative ints) it is, ascending, as
    read-only views of one array (numpy's stable sort of 16-bit keys is a radix sort: one pass for every group)."""
    order = np.argsort(keys.astype(np.uint16, copy=False), kind="stable").astype(np.int64)
    order.setflags(write=False)
    return np.split(order, np.cumsum(np.bincount(keys, minlength=count))[:-1]) if count else []


class Columns(Mapping):
    """A trace's stored columns, plus ``flops``, ``buf`` and ``slot`` derived from the details on first use."""

    def __init__(self, stored: dict[str, np.ndarray], details: tuple, tasks: dict[str, np.ndarray]) -> None:
        self._stored = stored
        self._details = details
        self._tasks = tasks
        self._derived: dict[str, np.ndarray] = {}
        self._by_lane: list[np.ndarray] | None = None
        self._detail_index: np.ndarray | None = None

    def detail_index(self) -> np.ndarray:
        """See :meth:`TraceData.detail_index`."""
        if self._detail_index is None:
            detail = self._stored["detail"]
            self._detail_index = np.where(detail >= TASK_DETAIL, 0, detail + 1)
            self._detail_index.setflags(write=False)
        return self._detail_index

    def by_lane(self, lanes: int) -> list[np.ndarray]:
        """Per lane id (``lanes`` of them): the rows on that lane, ascending; grouped on first use, then kept."""
        if self._by_lane is None:
            self._by_lane = rows_by_key(self._stored["lane"], lanes)
        return self._by_lane

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
            found = table[self.detail_index()]
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
        per-detail table built as ``[value for no detail, *(value of d for d in details)]`` with it (computed once
        per trace; read-only)."""
        return self.columns.detail_index()

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

    def lane_rows(self) -> list[np.ndarray]:
        """Per lane id: the rows on that lane, ascending (grouped once per trace)."""
        return self.columns.by_lane(len(self.lanes))

    def rows_on(self, *kinds: int) -> np.ndarray:
        """Per row: is it on a lane of one of these :class:`LaneKind`."""
        return one_of(self.columns["lane"], self.lanes_of(*kinds))

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
        mask = np.ones(len(self), dtype=bool) if kinds is None else one_of(c["kind"], kinds)
        if lane_kinds is not None:
            mask &= self.rows_on(*lane_kinds)
        lanes = c["lane"][mask]
        starts = c["start"][mask]
        ends = c["end"][mask]
        for lane in np.unique(lanes):
            sel = lanes == lane
            out[self.lane_label(int(lane))] = covered(starts[sel], ends[sel])
        return out
