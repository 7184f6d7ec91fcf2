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
import re
from pathlib import Path

import numpy as np

from ..chrome_trace import to_chrome
from ..simulation import RunResult
from ..trace import Kind, TraceData

FLAG_NAME = re.compile(r"^(set_flag|wait_flag) (\S+)(?: \((\S+) (data|free slot)\))?$")
CROSS_NAME = re.compile(r"^cross_core_(set|wait)_flag (\d+)$")
MAX_FLOWS = 20_000
CHROME_DETAIL = 300_000  # a trace of more events keeps the instruction lanes of 2 cores unless told otherwise


def _core_processes(t: TraceData) -> list[str]:
    procs = {lane.process for lane in t.lanes if lane.process.startswith(("AIC ", "AIV "))}
    return sorted(procs, key=lambda p: (p.split()[0], int(p.split()[1])))


def subset(t: TraceData, detail_cores: int) -> TraceData:
    """The trace without the instruction rows of cores beyond the first ``detail_cores``."""
    keep_cores = set(_core_processes(t)[:detail_cores])
    lane_keep = np.array(
        [
            not lane.process.startswith(("AIC ", "AIV ")) or lane.process in keep_cores or lane.thread == "BLOCK"
            for lane in t.lanes
        ]
        or [True],
        dtype=bool,
    )
    rows = lane_keep[t.lane]
    if rows.all():
        return t
    index = np.flatnonzero(rows)
    new_pos = np.full(len(t), -1, dtype=np.int64)
    new_pos[index] = np.arange(len(index))
    cols = {k: v[index].copy() for k, v in t.columns.items()}
    cause = cols["cause"]
    has = cause >= 0
    cause[has] = new_pos[cause[has]]
    return TraceData(columns=cols, names=t.names, srcs=t.srcs, lanes=t.lanes)


def flag_flows(t: TraceData) -> list[tuple[int, int, str]]:
    """``(set row, wait row, label)`` pairs, at most ``MAX_FLOWS``."""
    c = t.columns
    flag_rows = np.flatnonzero(np.isin(c["kind"], (Kind.FLAG_SET, Kind.FLAG_WAIT)))
    if not len(flag_rows):
        return []
    lanes = t.lanes
    blocks = np.flatnonzero(c["kind"] == Kind.BLOCK)
    block_starts: dict[str, np.ndarray] = {}
    for proc in _core_processes(t):
        rows = blocks[[lanes[int(i)].process == proc for i in c["lane"][blocks]]]
        block_starts[proc] = np.sort(c["start"][rows])
    groups: dict[tuple, tuple[list[int], list[int]]] = {}
    cross: dict[tuple, list[int]] = {}  # (AI core, block, flag, core, "set"/"wait") -> rows
    for row in flag_rows[: 4 * MAX_FLOWS]:
        name = t.names[int(c["name"][row])]
        proc = lanes[int(c["lane"][row])].process
        starts = block_starts.get(proc)
        block = int(np.searchsorted(starts, c["start"][row], side="right")) - 1 if starts is not None else 0
        x = CROSS_NAME.match(name)
        if x is not None:
            kind, ident = proc.split()
            group = int(ident) if kind == "AIC" else int(ident) // 2
            cross.setdefault((group, block, x.group(2), proc, x.group(1)), []).append(int(row))
            continue
        m = FLAG_NAME.match(name)
        if m is None:
            continue
        key = (proc, block, m.group(2), m.group(3), m.group(4), int(c["buf"][row]), int(c["slot"][row]))
        sets, waits = groups.setdefault(key, ([], []))
        (sets if m.group(1) == "set_flag" else waits).append(int(row))
    flows = []
    for key, (sets, waits) in groups.items():
        sets.sort(key=lambda r: c["start"][r])
        waits.sort(key=lambda r: c["start"][r])
        for s, w in zip(sets, waits, strict=False):
            flows.append((s, w, f"flag {key[2]}"))
    for (group, block, flag, proc, kind), rows in cross.items():
        if kind != "wait":
            continue
        senders = [f"AIV {2 * group}", f"AIV {2 * group + 1}"] if proc.startswith("AIC") else [f"AIC {group}"]
        for sender in senders:
            sets = sorted(cross.get((group, block, flag, sender, "set"), []), key=lambda r: c["start"][r])
            waits = sorted(rows, key=lambda r: c["start"][r])
            flows += [(s, w, f"cross-core flag {flag}") for s, w in zip(sets, waits, strict=False)]
    return flows[:MAX_FLOWS]


def buffer_counters(t: TraceData, max_cores: int = 2) -> list[tuple[str, str, np.ndarray, np.ndarray]]:
    """Queue slots holding data, per core and position, for the first ``max_cores`` cores."""
    c = t.columns
    sets = np.flatnonzero(c["kind"] == Kind.FLAG_SET)
    out = []
    cores = set(_core_processes(t)[:max_cores])
    series: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for row in sets:
        proc = t.lanes[int(c["lane"][row])].process
        if proc not in cores:
            continue
        m = FLAG_NAME.match(t.names[int(c["name"][row])])
        if m is None or m.group(3) is None:
            continue
        delta = 1 if m.group(4) == "data" else -1
        series.setdefault((proc, m.group(3)), []).append((int(c["end"][row]), delta))
    for (proc, position), events in sorted(series.items()):
        events.sort()
        times = np.array([e[0] for e in events], dtype=np.int64)
        values = np.maximum(np.cumsum([e[1] for e in events]), 0)
        out.append((proc, f"{position} slots holding data", times, values))
    return out


def chrome_document(result: RunResult, detail_cores: int | None = None, metadata: dict | None = None) -> dict:
    t = result.trace
    if detail_cores is None:
        detail_cores = len(_core_processes(t)) if len(t) <= CHROME_DETAIL else 2
    t = subset(t, detail_cores)
    return to_chrome(t, flows=flag_flows(t), counters=buffer_counters(t), metadata=metadata)


def write_pipe_csv(path: str | Path, metrics: dict) -> Path:
    """One row per kernel, core and pipe: busy ratio over the kernel."""
    path = Path(path)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["kernel", "kernel_us", "core", "pipe", "ratio", "busy_us"])
        for k in metrics.get("kernels", []):
            for core, pipes in k["pipe_ratios_per_core"].items():
                for pipe, ratio in pipes.items():
                    w.writerow([k["kernel"], k["kernel_us"], core, pipe, ratio, round(ratio * k["kernel_us"], 4)])
    return path
