"""Idle time, labelled with its cause.

Every stretch of time a stream, a copy engine, a core or a pipe spends not working gets one of:

=================================  ==========================================================
cause                              where it comes from
=================================  ==========================================================
waiting for the host               the next task was submitted after the lane went idle
waiting for the previous task      a copy was ready in time but its stream was still busy
waiting for a copy engine          the task was ready but every engine of its direction was busy
waiting for the AI cores           the kernel was ready but the cores were running another one
waiting on an event                a ``stream_wait_event`` (detail: the event, who recorded it)
waiting for data                   a pipe held at a ``wait_flag`` for data (detail: from which pipe)
no free buffer slot                a producer held at ``alloc_tensor`` until the consumer freed a slot
waiting for a cross-core flag      a vector core held for the Cube's data (or the Cube for room), mixed kernels
waiting on a flag                  any other ``wait_flag`` (hand-written synchronisation)
shared-bandwidth contention        a GM transfer took longer than its core's own path rate allows
no work: tail                      a core finished its blocks while others were still running
no work: too few blocks            a core of the kernel's type received no block at all
=================================  ==========================================================

Times are totals in microseconds per cause (and per kind of lane); ``top`` lists the longest
individual gaps of streams, engines and cores with the evidence.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from types import MappingProxyType

import numpy as np

from ..aicore.pipes import LANE_NAMES
from ..aicore.tensor import Buffer
from ..device.stream import TaskKind
from ..simulation import RunResult
from ..trace import Kind, LaneKind, TraceData
from ..trace.detail import GM, CrossFlag, Instr, QueueOp, TaskInfo
from .pipes import group_leaders, kernel_core_type, kernel_rows

TOP = 12
CAUSES = (  # every cause a gap can have, as the report names it (the UIs translate these)
    "waiting for the host",
    "waiting for the previous task",
    "waiting for a copy engine",
    "waiting for the AI cores",
    "waiting on an event",
    "waiting for data",
    "no free buffer slot",
    "waiting for a cross-core flag",
    "waiting on a flag",
    "shared-bandwidth contention",
    "no work: tail",
    "no work: too few blocks",
)
# the profile path a GM move uses, by (reads GM, the on-chip buffer's code)
_GM_PATHS = MappingProxyType(
    {
        (True, Buffer.UB.value): "gm_to_ub",
        (True, Buffer.L1.value): "gm_to_l1",
        (True, Buffer.L0A.value): "gm_to_l1",
        (True, Buffer.L0B.value): "gm_to_l1",
        (False, Buffer.UB.value): "ub_to_gm",
        (False, Buffer.L1.value): "l1_to_gm",
        (False, Buffer.L0C.value): "l0c_to_gm",
    }
)


def _us(ps: float) -> float:
    return round(float(ps) / 1e6, 4)


@dataclass(frozen=True)
class Gap:
    """One idle stretch of a lane and why it was idle (its ``cause`` is one of :data:`CAUSES`)."""

    lane: str
    start_us: float
    us: float
    cause: str
    detail: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Gaps:
    """Idle time by cause: summed over every lane (``totals_us``), per kind of lane, and the longest gaps."""

    totals_us: Mapping[str, float]
    by_lane_type: Mapping[str, Mapping[str, float]]
    top: tuple[Gap, ...]

    def to_dict(self) -> dict:
        return {
            "totals_us": dict(self.totals_us),
            "by_lane_type": {k: dict(v) for k, v in self.by_lane_type.items()},
            "top": [g.to_dict() for g in self.top],
        }


class _Tally:
    def __init__(self) -> None:
        self.totals: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self.top: list[Gap] = []

    def add(self, lane_type: str, cause: str, ps: int, lane: str = "", start: int = 0, detail: str = "") -> None:
        if ps <= 0:
            return
        assert cause in CAUSES, cause
        self.totals[lane_type][cause] += ps
        if lane:
            self.top.append(Gap(lane, _us(start), _us(ps), cause, detail))

    def result(self) -> Gaps:
        by_type = {
            k: MappingProxyType({c: _us(v) for c, v in sorted(d.items(), key=lambda kv: -kv[1])})
            for k, d in self.totals.items()
        }
        totals: dict[str, float] = defaultdict(float)
        for d in self.totals.values():
            for c, v in d.items():
                totals[c] += v
        return Gaps(
            MappingProxyType({c: _us(v) for c, v in sorted(totals.items(), key=lambda kv: -kv[1])}),
            MappingProxyType(by_type),
            tuple(sorted(self.top, key=lambda g: -g.us)[:TOP]),
        )


def label_gaps(result: RunResult) -> Gaps:
    t = result.trace
    tally = _Tally()
    _streams(t, tally)
    _engines(t, tally)
    _cores(t, result.profile, tally)
    _pipes(t, result.profile, tally)
    return tally.result()


def _rows_on(t: TraceData, kind: LaneKind) -> dict[int, np.ndarray]:
    c = t.columns
    out = {}
    for i in t.lanes_of(kind):
        rows = np.flatnonzero((c["lane"] == i) & (c["kind"] != Kind.MARK))
        out[i] = rows[np.argsort(c["start"][rows], kind="stable")]
    return out


def _task(t: TraceData, row: int) -> TaskInfo:
    return t.detail_of(int(row))


def _streams(t: TraceData, tally: _Tally) -> None:
    c = t.columns
    names = t.names
    task = t.task_rows()
    is_record = np.append(t.tasks["kind"] == TaskKind.RECORD, False)[task]  # index -1: not a task
    records = np.flatnonzero((c["kind"] == Kind.MARK) & is_record)
    for lane, rows in _rows_on(t, LaneKind.STREAM).items():
        label = t.lane_label(lane)
        for prev, nxt in itertools.pairwise(rows):
            idle_from, start = int(c["end"][prev]), int(c["start"][nxt])
            if start > idle_from:
                submit = _task(t, nxt).submit
                host_part = min(max(0, submit - idle_from), start - idle_from)
                tally.add(
                    "streams",
                    "waiting for the host",
                    host_part,
                    label,
                    idle_from,
                    f"{names[c['name'][nxt]]} was submitted at {_us(submit)} us",
                )
                rest = start - idle_from - host_part
                kind = int(c["kind"][nxt])
                cause = "waiting for the AI cores" if kind == Kind.KERNEL else "waiting for a copy engine"
                tally.add("streams", cause, rest, label, idle_from + host_part, f"before {names[c['name'][nxt]]}")
        for row in rows[c["kind"][rows] == Kind.WAIT]:
            end = int(c["end"][row])
            event = _task(t, row).event
            recorder = [
                t.lane_label(int(c["lane"][m])) for m in records if c["start"][m] == end and _task(t, m).event == event
            ]
            who = f", recorded on {recorder[0]}" if recorder else ""
            tally.add(
                "streams",
                "waiting on an event",
                end - int(c["start"][row]),
                label,
                int(c["start"][row]),
                f"event {event}{who}",
            )


def _engines(t: TraceData, tally: _Tally) -> None:
    c = t.columns
    names = t.names
    # the stream event that ran just before each task, by task number
    previous_end: dict[int, tuple[int, str]] = {}
    for rows in _rows_on(t, LaneKind.STREAM).values():
        for prev, nxt in itertools.pairwise(rows):
            previous_end[_task(t, nxt).task] = (int(c["end"][prev]), names[c["name"][prev]])
    for lane, rows in _rows_on(t, LaneKind.COPY_ENGINE).items():
        label = t.lane_label(lane)
        for prev, nxt in itertools.pairwise(rows):
            idle_from, start = int(c["end"][prev]), int(c["start"][nxt])
            if start <= idle_from:
                continue
            task = _task(t, nxt)
            submit = task.submit
            stream_free, before = previous_end.get(task.task, (0, ""))
            if stream_free > submit:
                tally.add(
                    "copy engines",
                    "waiting for the previous task",
                    start - idle_from,
                    label,
                    idle_from,
                    f"the next copy's stream was running {before} until {_us(stream_free)} us",
                )
            else:
                tally.add(
                    "copy engines",
                    "waiting for the host",
                    start - idle_from,
                    label,
                    idle_from,
                    f"the next copy was submitted at {_us(submit)} us",
                )


def _cores(t: TraceData, profile, tally: _Tally) -> None:
    c = t.columns
    blocks = np.flatnonzero(c["kind"] == Kind.BLOCK)
    lanes = t.lanes
    for k in kernel_rows(t):
        ks, ke = int(c["start"][k]), int(c["end"][k])
        inside = blocks[(c["start"][blocks] >= ks) & (c["end"][blocks] <= ke)]
        if not len(inside):
            continue
        per_core: dict[str, int] = {}
        for row in inside:
            core = lanes[int(c["lane"][row])].process
            per_core[core] = max(per_core.get(core, 0), int(c["end"][row]))
        for core, last in per_core.items():
            tally.add(
                "cores", "no work: tail", ke - last, core, last, f"kernel {t.names[c['name'][k]]} ends at {_us(ke)} us"
            )
        _cube, available = kernel_core_type(t, profile, set(per_core), ks, ke)
        used = len(group_leaders(t, profile, set(per_core)))
        unused = max(0, available - used)
        tally.add(
            "cores",
            "no work: too few blocks",
            unused * (ke - ks),
            f"{unused} idle cores",
            ks,
            f"{used} of {available} cores received blocks",
        )


def _pipes(t: TraceData, profile, tally: _Tally) -> None:
    c = t.columns
    details = t.details
    waits = np.flatnonzero(c["kind"] == Kind.FLAG_WAIT)
    if len(waits):
        durations = np.bincount(
            t.detail_index()[waits], weights=(c["end"][waits] - c["start"][waits]).astype(np.float64)
        )
        for index in np.flatnonzero(durations):
            d = details[index - 1] if index else None
            ps = int(durations[index])
            if isinstance(d, QueueOp) and d.purpose == "data":
                tally.add("pipes", "waiting for data", ps, detail=f"{LANE_NAMES[d.flag_src]} -> {d.position}")
            elif isinstance(d, QueueOp) and d.purpose == "free":
                tally.add("pipes", "no free buffer slot", ps)
            elif isinstance(d, CrossFlag):
                tally.add("pipes", "waiting for a cross-core flag", ps)
            else:
                tally.add("pipes", "waiting on a flag", ps)
    rates = profile.paths
    startup = profile.compute.mte_startup_cycles * profile.ps_per_cycle
    rate_of = [0.0]  # per detail id + 1: the path's bytes per ps of a GM move (0: not one)
    for d in details:
        path = None
        if isinstance(d, Instr) and d.dst is not None:
            reads = any(r.buf == GM for r in d.srcs)
            local = d.dst if reads else (d.srcs[0] if d.dst.buf == GM and d.srcs else None)
            path = _GM_PATHS.get((reads, local.buf)) if local is not None else None
        rate_of.append(getattr(rates, path) * 1e9 / 1e12 if path else 0.0)
    rate = np.array(rate_of)[t.detail_index()]
    rows = np.flatnonzero((rate > 0) & (c["kind"] == Kind.MOVE))
    if len(rows):
        expected = startup + c["nbytes"][rows] / rate[rows]
        excess = (c["end"][rows] - c["start"][rows]) - expected
        tally.add("pipes", "shared-bandwidth contention", int(np.clip(excess, 0, None).sum()))
