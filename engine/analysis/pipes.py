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
from ..profile import Profile
from ..trace import Kind, LaneKind, TraceData

PIPE_KEYS = MappingProxyType({name: Pipe(i).name.lower() for i, name in enumerate(LANE_NAMES)})


def kernel_rows(trace: TraceData) -> np.ndarray:
    """The rows of the kernel-array lane: one per kernel that ran."""
    return np.flatnonzero(trace.rows_on(LaneKind.KERNELS) & (trace.kind == Kind.KERNEL))


def core_busy(trace: TraceData, start: int, end: int) -> dict[str, dict[str, int]]:
    """``{core label: {lane name: busy ps}}`` for the cores that ran blocks within ``[start, end]``."""
    c = trace.columns
    lanes = trace.lanes
    in_window = (c["end"] > start) & (c["start"] < end) & trace.rows_on(LaneKind.PIPE, LaneKind.BLOCK)
    ran = {lanes[int(i)].process for i in np.unique(c["lane"][in_window & (c["kind"] == Kind.BLOCK)])}
    work = in_window & np.isin(c["kind"], (Kind.MOVE, Kind.COMPUTE))
    s = np.maximum(c["start"][work], start)
    e = np.minimum(c["end"][work], end)
    busy = np.bincount(c["lane"][work], weights=(e - s).astype(np.float64), minlength=len(lanes))
    out: dict[str, dict[str, int]] = {core: {} for core in sorted(ran)}
    for i, lane in enumerate(lanes):
        if lane.process in out and lane.kind == LaneKind.PIPE:
            out[lane.process][LANE_NAMES[lane.pipe]] = int(busy[i])
    return out


def kernel_metrics(trace: TraceData, profile: Profile, row: int | None = None) -> dict:
    """Metrics of one kernel (the last one when ``row`` is None)."""
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
    in_kernel = (trace.start >= start) & (trace.start <= end) & np.isin(trace.kind, kinds)
    seconds = duration / 1e12
    tflops = flops / seconds / 1e12 if flops else 0.0
    return {
        "kernel": trace.names[int(trace.name[i])],
        "kernel_us": round(duration / 1e6, 4),
        "flops": flops,
        "tflops": round(tflops, 3),
        "peak_tflops": round(profile.peak_fp16_flops / 1e12, 3),
        "percent_of_peak": round(100 * tflops * 1e12 / profile.peak_fp16_flops, 2) if flops else 0.0,
        "cube_utilization": ratios["aic_mac_ratio"],
        "pipe_ratios": ratios,
        "pipe_time_us": pipe_time,
        "cores_used": len(busy),
        "instructions": int(in_kernel.sum()),
    }


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
            (np.isin(c["lane"], lanes) & (c["kind"] == Kind.COMPUTE) & (c["start"] < end) & (c["end"] > start)).any()
        )
    return cube, (profile.cube_cores if cube else profile.vector_cores)
