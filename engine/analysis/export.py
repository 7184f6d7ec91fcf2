"""Exports: the Chrome trace with flag flows and buffer counters, and per-core pipe metrics as CSV.

* Flow arrows link each ``set_flag`` to the ``wait_flag`` it released: within one block on one core,
  the k-th set of a flag (same pipes, queue position or event id, and slot) releases its k-th wait,
  as the scheduler pairs them. A cross-core flag of a mixed kernel links the AIC's set to each AIV's
  wait (and each AIV's set to the AIC's wait) of the same AI core and block.
* Counter tracks show, per core and queue position, how many queue slots hold data (an ``enque``
  adds one, a ``free_tensor`` takes one away) — the ping/pong of double buffering.
* Large traces keep every host, stream, engine and block event but the instruction lanes of only the
  first ``detail_cores`` cores (a Chrome trace of millions of instructions does not open).
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from ..aicore.pipes import LANE_NAMES
from ..simulation import RunResult
from ..trace import Kind, LaneKind, TraceData
from ..trace.chrome import chrome_json
from ..trace.data import one_of
from ..trace.detail import CrossFlag, Flag, QueueOp
from ..trace.locations import CoreRef
from .metrics import RunMetrics

MAX_FLOWS = 20_000
CHROME_DETAIL = 300_000  # a trace of more events keeps the instruction lanes of 2 cores unless told otherwise


def _core_processes(t: TraceData) -> list[str]:
    return t.core_order({lane.process for lane in t.lanes if lane.core >= 0})


def subset(t: TraceData, detail_cores: int) -> TraceData:
    """The trace without the instruction rows of cores beyond the first ``detail_cores``."""
    keep_cores = set(_core_processes(t)[:detail_cores])
    lane_keep = t.lane_mask(lambda lane: lane.kind != LaneKind.PIPE or lane.process in keep_cores)
    rows = lane_keep[t.lane]
    if rows.all():
        return t
    return t.select(np.flatnonzero(rows))


def flag_flows(t: TraceData) -> list[tuple[int, int, str]]:
    """``(set row, wait row, label)`` pairs, at most ``MAX_FLOWS``."""
    c = t.columns
    flag_rows = np.flatnonzero(one_of(c["kind"], (Kind.FLAG_SET, Kind.FLAG_WAIT)))
    if not len(flag_rows):
        return []
    lanes = t.lanes
    rows = flag_rows[: 4 * MAX_FLOWS]
    # each row's block on its core: the core's block starts searched for all its rows at once
    row_lanes = c["lane"][rows]
    block_of = np.zeros(len(rows), dtype=np.int64)
    blocks = np.flatnonzero(c["kind"] == Kind.BLOCK)
    for proc in _core_processes(t):
        on = t.lane_mask(lambda lane, proc=proc: lane.process == proc)
        starts = np.sort(c["start"][blocks[on[c["lane"][blocks]]]])
        mine = np.flatnonzero(on[row_lanes])
        block_of[mine] = np.searchsorted(starts, c["start"][rows[mine]], side="right") - 1
    groups: dict[tuple, tuple[list[int], list[int]]] = {}
    cross: dict[tuple, list[int]] = {}  # (AI core, block, flag, core, is set) -> rows
    for row, lane_id, kind, block in zip(
        rows.tolist(), row_lanes.tolist(), c["kind"][rows].tolist(), block_of.tolist(), strict=True
    ):
        d = t.detail_of(row)
        lane = lanes[lane_id]
        proc = lane.process
        is_set = kind == Kind.FLAG_SET
        if isinstance(d, CrossFlag):
            group = lane.core if lane.core_type == "AIC" else lane.core // 2
            cross.setdefault((group, block, d.flag, proc, is_set), []).append(row)
            continue
        if isinstance(d, QueueOp):
            key = (proc, block, (d.flag_src, d.flag_dst), d.queue, d.purpose, d.slot)
            label = f"{d.position} {d.purpose} (slot {d.slot})"
        elif isinstance(d, Flag):
            key = (proc, block, (d.src_pipe, d.dst_pipe), -1, "", d.event_id)
            label = f"{LANE_NAMES[d.src_pipe]}_{LANE_NAMES[d.dst_pipe]} id {d.event_id}"
        else:
            continue
        sets, waits = groups.setdefault(key, ([], [], label))[:2]
        (sets if is_set else waits).append(row)
    flows = []
    for sets, waits, label in groups.values():
        sets.sort(key=lambda r: c["start"][r])
        waits.sort(key=lambda r: c["start"][r])
        for s, w in zip(sets, waits, strict=False):
            flows.append((s, w, f"flag {label}"))
    types = t.core_types()
    for (group, block, flag, proc, is_set), rows in cross.items():
        if is_set:
            continue
        aivs = (CoreRef("AIV", 2 * group), CoreRef("AIV", 2 * group + 1))
        senders = [ref.label for ref in (aivs if types[proc] == "AIC" else (CoreRef("AIC", group),))]
        for sender in senders:
            sets = sorted(cross.get((group, block, flag, sender, True), []), key=lambda r: c["start"][r])
            waits = sorted(rows, key=lambda r: c["start"][r])
            flows += [(s, w, f"cross-core flag {flag}") for s, w in zip(sets, waits, strict=False)]
    return flows[:MAX_FLOWS]


def buffer_counters(t: TraceData, max_cores: int = 2) -> list[tuple[str, str, np.ndarray, np.ndarray]]:
    """Queue slots holding data, per core and position, for the first ``max_cores`` cores."""
    c = t.columns
    cores = set(_core_processes(t)[:max_cores])
    on = t.lane_mask(lambda lane: lane.process in cores)
    sets = np.flatnonzero((c["kind"] == Kind.FLAG_SET) & on[c["lane"]])  # the sets of those cores only
    out = []
    series: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for row, lane_id, end in zip(sets.tolist(), c["lane"][sets].tolist(), c["end"][sets].tolist(), strict=True):
        d = t.detail_of(row)
        if not isinstance(d, QueueOp):
            continue
        delta = 1 if d.purpose == "data" else -1
        series.setdefault((t.lanes[lane_id].process, d.position), []).append((end, delta))
    for (proc, position), events in sorted(series.items()):
        events.sort()
        times = np.array([e[0] for e in events], dtype=np.int64)
        values = np.maximum(np.cumsum([e[1] for e in events]), 0)
        out.append((proc, f"{position} slots holding data", times, values))
    return out


def chrome_trace(result: RunResult, detail_cores: int | None = None, metadata: dict | None = None) -> tuple[str, int]:
    """The run's Chrome trace (JSON text, see :func:`engine.trace.chrome.chrome_json`) and how many events it holds."""
    t = result.trace
    if detail_cores is None:
        detail_cores = len(_core_processes(t)) if len(t) <= CHROME_DETAIL else 2
    t = subset(t, detail_cores)
    return chrome_json(t, flows=flag_flows(t), counters=buffer_counters(t), metadata=metadata)


def write_pipe_csv(path: str | Path, metrics: RunMetrics) -> Path:
    """One row per kernel, core and pipe: busy ratio over the kernel."""
    path = Path(path)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["kernel", "kernel_us", "core", "pipe", "ratio", "busy_us"])
        for k in metrics.kernels:
            for core, pipes in k.pipe_ratios_per_core.items():
                for pipe, ratio in pipes.items():
                    w.writerow([k.kernel, k.kernel_us, core, pipe, ratio, round(ratio * k.kernel_us, 4)])
    return path
