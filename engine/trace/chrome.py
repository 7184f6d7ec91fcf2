"""Chrome trace-event JSON export (opens in Perfetto and chrome://tracing).

Each lane becomes a thread of a named process (Host, Device 0 streams, Device 0 copy engines,
AIC 3 / AIV 7 with pipe lanes SCALAR, VECTOR, CUBE, MTE1, MTE2, MTE3, FIXP). Events with a
duration are complete events (``ph: X``), instants are ``ph: i``. Flow arrows (``ph: s`` / ``f``)
link each host call to the device work it caused, and each ``set_flag`` to the ``wait_flag`` it
released (``flows`` pairs passed in by the caller). Counter tracks (``ph: C``) carry buffer occupancy.
Timestamps are microseconds with picosecond precision.

The document is written as JSON text directly, event by event (exactly what ``json.dumps`` makes of it: a
million events take a second, not three through dicts and the encoder); ``json.loads`` of it is the document.
"""

from __future__ import annotations

from collections.abc import Iterable
from json import dumps as _dumps
from types import MappingProxyType

import numpy as np

from .data import TraceData
from .schema import Kind

_CATEGORY = MappingProxyType({k: k.name.lower() for k in Kind})
_INSTRUCTION_KINDS = (Kind.MOVE, Kind.COMPUTE, Kind.FLAG_SET, Kind.FLAG_WAIT, Kind.BARRIER)


def chrome_json(
    trace: TraceData,
    *,
    flows: Iterable[tuple[int, int, str]] = (),
    counters: Iterable[tuple[str, str, np.ndarray, np.ndarray]] = (),
    metadata: dict | None = None,
) -> tuple[str, int]:
    """The trace-event document as JSON text, and how many events it holds.

    ``flows`` are extra ``(from_row, to_row, name)`` arrows besides the cause links (they end just
    before the target slice ends: a wait released by a set); host calls link to the device work they
    caused (for kernels: the kernel and its blocks, not every instruction);
    ``counters`` are ``(process, name, times_ps, values)`` series.
    """
    events: list[str] = []
    add = events.append
    pids: dict[str, int] = {}
    tids: dict[int, tuple[int, int]] = {}
    processes = sorted({(lane.sort, lane.process) for lane in trace.lanes})
    for pid, (sort, process) in enumerate(processes, start=1):
        pids[process] = pid
        add(_dumps({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": process}}))
        add(_dumps({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": sort}}))
    per_process: dict[str, int] = {}
    for lane_id, lane in enumerate(trace.lanes):
        pid = pids[lane.process]
        tid = per_process.get(lane.process, 0) + 1
        per_process[lane.process] = tid
        tids[lane_id] = (pid, tid)
        add(_dumps({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": lane.thread}}))
        add(_dumps({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid, "args": {"sort_index": tid}}))

    c = trace.columns
    # every row: {"name", "cat", "pid", "tid", "ts", ["args": {"bytes", "flops", "src"}], "ph": "X", "dur" | "ph":
    # "i", "s": "t"}; strings encoded once per table entry, numbers as the encoder writes them (repr)
    names = [_dumps(n) for n in trace.names]
    srcs = [_dumps(s) for s in trace.srcs]
    category = {int(k): _dumps(text) for k, text in _CATEGORY.items()}
    where = {lane_id: f'"pid": {pid}, "tid": {tid}' for lane_id, (pid, tid) in tids.items()}
    lane, start, end = (c[col].tolist() for col in ("lane", "start", "end"))
    kinds, name_ids, nbytes, flops, src_ids = (c[col].tolist() for col in ("kind", "name", "nbytes", "flops", "src"))
    heads: dict[tuple, str] = {}  # (name, kind, lane) -> the event's text up to its time
    extras: dict[tuple, str] = {}  # (bytes, flops, source) -> its args' text
    for lane_i, k, name_i, t0, t1, nb, fl, src_i in zip(
        lane, kinds, name_ids, start, end, nbytes, flops, src_ids, strict=True
    ):
        head = heads.get((name_i, k, lane_i))
        if head is None:
            head = f'{{"name": {names[name_i]}, "cat": {category[k]}, {where[lane_i]}, "ts": '
            heads[name_i, k, lane_i] = head
        more = extras.get((nb, fl, src_i))
        if more is None:
            args = [f'"bytes": {nb}'] if nb else []
            if fl:
                args.append(f'"flops": {fl}')
            if src_i >= 0:
                args.append(f'"src": {srcs[src_i]}')
            more = extras[nb, fl, src_i] = ', "args": {' + ", ".join(args) + "}" if args else ""
        if t1 > t0:
            add(f'{head}{t0 / 1e6!r}{more}, "ph": "X", "dur": {(t1 - t0) / 1e6!r}}}')
        else:
            add(f'{head}{t0 / 1e6!r}{more}, "ph": "i", "s": "t"}}')

    kind, cause = c["kind"], c["cause"]
    work = ~np.isin(kind, _INSTRUCTION_KINDS)  # instructions point at their launch through their block
    links = [(int(cause[i]), int(i), "caused", False) for i in np.flatnonzero((cause >= 0) & work)]
    links += [(*f, True) if len(f) == 3 else f for f in flows]
    for flow_id, (a, b, label, at_end) in enumerate(links, start=1):
        pa, ta = tids[lane[a]]
        pb, tb = tids[lane[b]]
        # a flow ends inside its target slice: at its start, or just before its end (a released wait)
        end_ts = max(start[b], end[b] - 1) if at_end else start[b]
        flow = {"id": flow_id, "name": label, "cat": "flow"}
        add(_dumps({"ph": "s", **flow, "pid": pa, "tid": ta, "ts": start[a] / 1e6}))
        add(_dumps({"ph": "f", "bp": "e", **flow, "pid": pb, "tid": tb, "ts": end_ts / 1e6}))

    for process, cname, times, values in counters:
        pid = pids.get(process)
        if pid is None:
            pid = pids[process] = len(pids) + 1
            add(_dumps({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": process}}))
        for t, v in zip(times.tolist(), values.tolist(), strict=True):
            add(_dumps({"ph": "C", "name": cname, "pid": pid, "tid": 0, "ts": t / 1e6, "args": {cname: float(v)}}))

    text = '{"traceEvents": [' + ", ".join(events) + '], "displayTimeUnit": "ns", "otherData": '
    return text + _dumps(metadata or {}) + "}", len(events)
