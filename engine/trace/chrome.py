"""Chrome trace-event JSON export (opens in Perfetto and chrome://tracing).

Each lane becomes a thread of a named process (Host, Device 0 streams, Device 0 copy engines,
AIC 3 / AIV 7 with pipe lanes SCALAR, VECTOR, CUBE, MTE1, MTE2, MTE3, FIXP). Events with a
duration are complete events (``ph: X``), instants are ``ph: i``. Flow arrows (``ph: s`` / ``f``)
link each host call to the device work it caused, and each ``set_flag`` to the ``wait_flag`` it
released (``flows`` pairs passed in by the caller). Counter tracks (``ph: C``) carry buffer occupancy.
Timestamps are microseconds with picosecond precision.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from types import MappingProxyType

import numpy as np

from .data import TraceData
from .schema import Kind

_CATEGORY = MappingProxyType({k: k.name.lower() for k in Kind})
_INSTRUCTION_KINDS = (Kind.MOVE, Kind.COMPUTE, Kind.FLAG_SET, Kind.FLAG_WAIT, Kind.BARRIER)


def _us(ps: int) -> float:
    return ps / 1e6


def to_chrome(
    trace: TraceData,
    *,
    flows: Iterable[tuple[int, int, str]] = (),
    counters: Iterable[tuple[str, str, np.ndarray, np.ndarray]] = (),
    metadata: dict | None = None,
) -> dict:
    """Build the trace-event document.

    ``flows`` are extra ``(from_row, to_row, name)`` arrows besides the cause links (they end just
    before the target slice ends: a wait released by a set); host calls link to the device work they
    caused (for kernels: the kernel and its blocks, not every instruction);
    ``counters`` are ``(process, name, times_ps, values)`` series.
    """
    events: list[dict] = []
    pids: dict[str, int] = {}
    tids: dict[int, tuple[int, int]] = {}
    processes = sorted({(lane.sort, lane.process) for lane in trace.lanes})
    for pid, (sort, process) in enumerate(processes, start=1):
        pids[process] = pid
        events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": process}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": sort}})
    per_process: dict[str, int] = {}
    for lane_id, lane in enumerate(trace.lanes):
        pid = pids[lane.process]
        tid = per_process.get(lane.process, 0) + 1
        per_process[lane.process] = tid
        tids[lane_id] = (pid, tid)
        events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": lane.thread}})
        events.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid, "args": {"sort_index": tid}})

    c = trace.columns
    start, end, lane, kind, name = c["start"], c["end"], c["lane"], c["kind"], c["name"]
    nbytes, flops, src, cause = c["nbytes"], c["flops"], c["src"], c["cause"]
    names, srcs = trace.names, trace.srcs
    for i in range(len(trace)):
        pid, tid = tids[int(lane[i])]
        k = int(kind[i])
        ev = {
            "name": names[int(name[i])],
            "cat": _CATEGORY[Kind(k)],
            "pid": pid,
            "tid": tid,
            "ts": _us(int(start[i])),
        }
        args = {}
        if nbytes[i]:
            args["bytes"] = int(nbytes[i])
        if flops[i]:
            args["flops"] = int(flops[i])
        if src[i] >= 0:
            args["src"] = srcs[int(src[i])]
        if args:
            ev["args"] = args
        if end[i] > start[i]:
            ev["ph"] = "X"
            ev["dur"] = _us(int(end[i] - start[i]))
        else:
            ev["ph"] = "i"
            ev["s"] = "t"
        events.append(ev)

    work = ~np.isin(kind, _INSTRUCTION_KINDS)  # instructions point at their launch through their block
    links = [(int(cause[i]), int(i), "caused", False) for i in np.flatnonzero((cause >= 0) & work)]
    links += [(*f, True) if len(f) == 3 else f for f in flows]
    for flow_id, (a, b, label, at_end) in enumerate(links, start=1):
        pa, ta = tids[int(lane[a])]
        pb, tb = tids[int(lane[b])]
        # a flow ends inside its target slice: at its start, or just before its end (a released wait)
        end_ts = max(int(start[b]), int(end[b]) - 1) if at_end else int(start[b])
        events.append(
            {"ph": "s", "id": flow_id, "name": label, "cat": "flow", "pid": pa, "tid": ta, "ts": _us(int(start[a]))}
        )
        events.append(
            {"ph": "f", "bp": "e", "id": flow_id, "name": label, "cat": "flow", "pid": pb, "tid": tb, "ts": _us(end_ts)}
        )

    for process, cname, times, values in counters:
        pid = pids.get(process)
        if pid is None:
            pid = pids[process] = len(pids) + 1
            events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": process}})
        for t, v in zip(times, values, strict=True):
            events.append(
                {"ph": "C", "name": cname, "pid": pid, "tid": 0, "ts": _us(int(t)), "args": {cname: float(v)}}
            )

    return {"traceEvents": events, "displayTimeUnit": "ns", "otherData": metadata or {}}


def write_chrome(path: str | Path, trace: TraceData, **kwargs) -> Path:
    path = Path(path)
    path.write_text(json.dumps(to_chrome(trace, **kwargs)))
    return path
