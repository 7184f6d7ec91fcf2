"""Kernel metrics from a trace: pipe busy ratios (msprof names), TFLOPS, Cube utilisation.

A pipe executes one instruction at a time, so a pipe's busy time is the sum of its data-moving
and computing slices (``MOVE``, ``COMPUTE``) inside the kernel; flag waits and barriers are not
work. Ratios are per core (busy / kernel time) averaged over the cores that ran blocks of the
kernel, like ``msprof op``'s ``PipeUtilization.csv``.
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np

from ..aicore.pipes import AIC_RATIO_NAMES, AIV_RATIO_NAMES, LANE_NAMES, Pipe
from ..profiles.profile import Profile
from ..trace import Kind, LaneKind, TraceData
from ..trace.data import one_of
from ..trace.detail import Issue

PIPE_KEYS = MappingProxyType({name: Pipe(i).name.lower() for i, name in enumerate(LANE_NAMES)})


def kernel_rows(trace: TraceData) -> np.ndarray:
    """The rows of the kernel-array lane: one per kernel that ran."""
    rows = np.flatnonzero(trace.kind == Kind.KERNEL)  # few: their lanes are looked at one by one
    return rows[trace.lane_kinds()[trace.lane[rows]] == LaneKind.KERNELS]


def lane_busy(trace: TraceData, start: int, end: int) -> np.ndarray:
    """Per lane id: ps of its work (``MOVE`` and ``COMPUTE`` slices) inside ``[start, end]``."""
    c = trace.columns
    work = one_of(c["kind"], (Kind.MOVE, Kind.COMPUTE))
    work &= c["end"] > start
    work &= c["start"] < end
    rows = np.flatnonzero(work)  # taken by index: quicker than three boolean selections
    s = c["start"].take(rows)
    e = c["end"].take(rows)
    np.maximum(s, start, out=s)
    np.minimum(e, end, out=e)
    e -= s  # the time inside the window (bincount weighs it in float64)
    return np.bincount(c["lane"].take(rows), weights=e, minlength=len(trace.lanes))


def core_busy(trace: TraceData, start: int, end: int) -> dict[str, dict[str, int]]:
    """``{core label: {lane name: busy ps}}`` for the cores that ran blocks within ``[start, end]``."""
    c = trace.columns
    lanes = trace.lanes
    blocks = np.flatnonzero(c["kind"] == Kind.BLOCK)  # few: the window and the lanes are looked at on them
    blocks = blocks[(c["end"][blocks] > start) & (c["start"][blocks] < end)]
    on = np.unique(c["lane"][blocks])
    ran = {lanes[int(i)].process for i in on[np.isin(trace.lane_kinds()[on], (LaneKind.PIPE, LaneKind.BLOCK))]}
    busy = lane_busy(trace, start, end)
    out: dict[str, dict[str, int]] = {core: {} for core in sorted(ran)}
    for i, lane in enumerate(lanes):
        if lane.process in out and lane.kind == LaneKind.PIPE:
            out[lane.process][LANE_NAMES[lane.pipe]] = int(busy[i])
    return out


def kernel_metrics(trace: TraceData, profile: Profile, row: int | None = None, work: dict | None = None) -> dict:
    """Metrics of one kernel (the last one when ``row`` is None); ``work``: its :func:`kernel_work`, when the
    caller has it already (from :func:`kernel_units` over every kernel)."""
    rows = kernel_rows(trace)
    if not len(rows):
        return {}
    i = int(rows[-1] if row is None else row)
    start, end = int(trace.start[i]), int(trace.end[i])
    duration = max(1, end - start)
    flops = int(trace.flops[i])
    busy = core_busy(trace, start, end)
    types = trace.core_types()
    aic = [b for core, b in busy.items() if types[core] == "AIC"]
    aiv = [b for core, b in busy.items() if types[core] == "AIV"]
    vector_cores = aiv or (aic if profile.chip.architecture == "coupled" else [])

    def mean_ratio(cores: list[dict], lane: str) -> float:
        if not cores:
            return 0.0
        return float(np.mean([b.get(lane, 0) for b in cores])) / duration

    ratios = {}
    for pipe, name in AIC_RATIO_NAMES:
        ratios[name] = round(mean_ratio(aic, LANE_NAMES[pipe]), 4)
    for pipe, name in AIV_RATIO_NAMES:
        ratios[name] = round(mean_ratio(vector_cores, LANE_NAMES[pipe]), 4)
    everyone = list(busy.values())
    pipe_time = {
        key: round(float(np.mean([b.get(lane, 0) for b in everyone])) / 1e6, 4) if everyone else 0.0
        for lane, key in PIPE_KEYS.items()
    }
    kinds = (Kind.MOVE, Kind.COMPUTE, Kind.FLAG_SET, Kind.FLAG_WAIT, Kind.BARRIER)
    in_kernel = (trace.start >= start) & (trace.start <= end) & one_of(trace.kind, kinds)
    in_kernel &= ~trace.rows_with(lambda d: isinstance(d, Issue))  # the scalar unit's issue rows are not instructions
    seconds = duration / 1e12
    tflops = flops / seconds / 1e12 if flops else 0.0
    work = work or kernel_work(trace, profile, i)
    return {
        "kernel": trace.names[int(trace.name[i])],
        "kernel_us": round(duration / 1e6, 4),
        "flops": flops,
        "tflops": round(tflops, 3),
        "peak_unit": work["unit"],
        "peak_tflops": round(work["peak_flops"] / 1e12, 3),
        "percent_of_peak": round(100 * work["flops"] / seconds / work["peak_flops"], 2) if work["flops"] else 0.0,
        "cube_utilization": ratios["aic_mac_ratio"],
        "pipe_ratios": ratios,
        "pipe_time_us": pipe_time,
        "cores_used": len(busy),
        "instructions": int(in_kernel.sum()),
    }


def kernel_units(trace: TraceData, profile: Profile, rows: np.ndarray) -> tuple[list[str], np.ndarray, np.ndarray]:
    """For kernel rows: the unit that did each one's arithmetic, its flops and that unit's peak (flop/s).

    What "% of peak" divides by, so it can never pass 100:

    * an op-level kernel (no core ran a block of it): the unit that runs op-level work, which is the
      measured device when the profile's op times come from one (``Profile.op_peak_flops``);
    * an instruction-level kernel that used the Cube: the Cube cores' fp16 peak, with the flops of its
      ``mmad``s (a mixed kernel's vector epilogue runs beside them, on other units);
    * otherwise the vector units' fp16 peak, with the vector flops.

    A kernel's instructions and blocks carry the host call that launched it (``cause``), as its row does.
    """
    rows = np.asarray(rows, dtype=np.intp)
    size = len(trace) + 1
    cause = trace.cause
    lanes = trace.lanes
    cube_lanes = [i for i, lane in enumerate(lanes) if lane.kind == LaneKind.PIPE and lane.pipe == Pipe.M]
    vector_lanes = [i for i, lane in enumerate(lanes) if lane.kind == LaneKind.PIPE and lane.pipe == Pipe.V]
    compute = (trace.kind == Kind.COMPUTE) & (cause >= 0)

    def by_cause(mask: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        rows = np.flatnonzero(mask)  # taken by index: quicker than boolean selections
        return np.bincount(cause.take(rows), weights=None if weights is None else weights.take(rows), minlength=size)

    flops = trace.flops  # int64: bincount weighs in float64, as it did the whole column cast
    blocks = by_cause((trace.kind == Kind.BLOCK) & (cause >= 0))
    cube = by_cause(compute & one_of(trace.lane, cube_lanes), flops)
    vector = by_cause(compute & one_of(trace.lane, vector_lanes), flops)
    own = cause[rows]
    units, work, peaks = [], np.zeros(len(rows)), np.zeros(len(rows))
    for j, (row, c) in enumerate(zip(rows, own, strict=True)):
        if c < 0 or not blocks[c]:
            units.append("op")
            work[j], peaks[j] = float(trace.flops[row]), profile.op_peak_flops
        elif cube[c]:
            units.append("cube")
            work[j], peaks[j] = cube[c], profile.peak_fp16_flops
        else:
            units.append("vector")
            work[j], peaks[j] = vector[c], profile.vector_peak_fp16_flops
    return units, work, peaks


def kernel_work(trace: TraceData, profile: Profile, row: int) -> dict:
    """:func:`kernel_units` of one kernel row: ``{"unit", "flops", "peak_flops"}``."""
    units, work, peaks = kernel_units(trace, profile, np.array([row]))
    return {"unit": units[0], "flops": int(work[0]), "peak_flops": float(peaks[0])}


def group_leaders(trace: TraceData, profile: Profile, cores: set[str]) -> set[str]:
    """The cores that count for parallelism: a mixed kernel's group (AIC + 2 AIV) counts once, as its AIC."""
    types = trace.core_types()
    kinds = {types[core] for core in cores}
    if profile.chip.architecture == "split" and kinds == {"AIC", "AIV"}:
        return {core for core in cores if types[core] == "AIC"}
    return cores


def kernel_core_type(trace: TraceData, profile: Profile, cores: set[str], start: int, end: int) -> tuple[bool, int]:
    """(is a Cube kernel, cores of that type on the chip) for a kernel that ran on ``cores``."""
    if profile.chip.architecture == "split":
        types = trace.core_types()
        cube = any(types[core] == "AIC" for core in cores)
    else:  # coupled cores run both kinds: a Cube kernel is one that used the Cube
        c = trace.columns
        lanes = [i for i, lane in enumerate(trace.lanes) if lane.process in cores and lane.pipe == Pipe.M]
        cube = bool(
            (one_of(c["lane"], lanes) & (c["kind"] == Kind.COMPUTE) & (c["start"] < end) & (c["end"] > start)).any()
        )
    return cube, (profile.cube_cores if cube else profile.vector_cores)
