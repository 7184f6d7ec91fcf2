"""Run metrics: throughput, pipes, host/device balance, memory-bound index, parallelism, copy engines.

Definitions (all times in microseconds, ratios in [0, 1]):

* ``tflops`` — flops of every kernel over the time any kernel ran; ``percent_of_peak`` — the time the
  kernels' work needs at the peak of the unit that did it (the Cube, the vector units, or the device
  an op-level matmul was measured on: :func:`.pipes.kernel_units`) over the time any kernel ran;
* ``kernels`` — per instruction-level kernel (up to 16): its pipe ratios (msprof names, averaged over
  the cores that ran blocks, and per core), plus
  - ``memory_bound_index``: on the compute pipe (CUBE for Cube kernels, VECTOR for vector kernels),
    time spent waiting for data flags / (that + time computing);
  - ``parallelism_utilization``: block time summed over cores / (cores of that type on the chip x kernel
    time): waves, tails and too few blocks all lower it;
  - ``mte2_compute_overlap``: the share of compute-pipe busy time during which MTE2 was loading on the
    same core (double buffering makes it high);
* host/device balance, over the run's work phase (``balance_over``: ``work``; the whole run with
  ``whole_run=True``, or when no device work was queued; see :mod:`.phases`): ``host_api_us`` (inside
  API calls, not waiting), ``host_wait_us`` (blocked in a call), ``host_work_us`` (tiling and other host
  computation), ``device_busy_us`` (some stream executing), ``host_share`` = host_api_us / that span,
  and the seed's ``balance_score`` (1.0 when the host takes at most 10 % of host + device time, lower
  beyond);
* copy engines: busy share of each engine over the device-active span, and ``copy_compute_overlap``:
  the share of copy time during which a kernel was running.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType

import numpy as np

from ..aicore.pipes import LANE_NAMES, Pipe
from ..simulation import RunResult
from ..trace import Kind, LaneKind, TraceData
from ..trace.data import one_of
from ..trace.detail import Flag, QueueOp
from ..trace.intervals import covered, intersection, merged
from .phases import phase_spans, phases, work_window
from .pipes import group_leaders, kernel_core_type, kernel_metrics, kernel_rows, kernel_units, lane_busy

MAX_DETAILED_KERNELS = 16
SEED_IDEAL_HOST_RATIO = 0.1  # seed 6.1: the host should take at most 10 % of host + device time


def _us(ps: float) -> float:
    return round(float(ps) / 1e6, 4)


_DATA_PIPES = (Pipe.MTE1, Pipe.MTE2, Pipe.MTE3)


def _waits_for_data(d) -> bool:
    """Does a wait with this detail wait for data (a queue's data flag, or a hand-written flag set by a pipe
    that moves data in: MTE1, MTE2, MTE3)."""
    if isinstance(d, QueueOp):
        return d.purpose == "data"
    return isinstance(d, Flag) and d.src_pipe in _DATA_PIPES


def _covered_in(starts: np.ndarray, ends: np.ndarray, window: tuple[int, int]) -> int:
    """Picoseconds of the union of the intervals inside ``window``."""
    lo, hi = window
    return covered(np.clip(starts, lo, hi), np.clip(ends, lo, hi))


def _frozen(value):
    """Mappings inside a record, read-only (nested ones too)."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    return value


def _plain(value):
    """A record's value as JSON data (mappings as dicts, records as their ``to_dict``)."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value.to_dict() if hasattr(value, "to_dict") else value


@dataclass(frozen=True)
class KernelMetrics:
    """One instruction-level kernel's figures (``row``: its row on the kernels lane of the trace)."""

    row: int
    kernel: str
    kernel_us: float
    flops: int
    tflops: float
    peak_unit: str  # the unit whose peak "% of peak" divides by: cube, vector or op
    peak_tflops: float
    percent_of_peak: float
    cube_utilization: float  # aic_mac_ratio
    pipe_ratios: Mapping[str, float]  # msprof names (aic_mac_ratio, aiv_mte2_ratio, ...), mean over the cores
    pipe_time_us: Mapping[str, float]
    cores_used: int
    instructions: int
    core_type: str  # cube, vector or mix
    blocks: int
    cores_available: int
    memory_bound_index: float
    parallelism_utilization: float
    mte2_compute_overlap: float
    pipe_ratios_per_core: Mapping[str, Mapping[str, float]]
    unit: str = ""
    peak_flops: float = 0.0

    def __post_init__(self) -> None:
        for f in ("pipe_ratios", "pipe_time_us", "pipe_ratios_per_core"):
            object.__setattr__(self, f, _frozen(getattr(self, f)))

    def to_dict(self) -> dict:
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}


@dataclass(frozen=True)
class RunMetrics:
    """A run's figures (see the module docstring for each definition); the main kernel's in ``main``."""

    simulated_us: float
    phases: Mapping[str, Mapping[str, float]]
    balance_over: str  # "work" or "whole run"
    kernel_count: int
    kernel_us: float
    tflops: float
    percent_of_peak: float
    kernels: tuple[KernelMetrics, ...]
    host_api_us: float
    host_wait_us: float
    host_work_us: float
    device_busy_us: float
    host_share: float
    balance_score: float
    copy_engine_utilization: Mapping[str, float]
    copy_us: float
    copy_compute_overlap: float
    streams_used: int
    main: KernelMetrics | None = field(init=False)

    def __post_init__(self) -> None:
        for f in ("phases", "copy_engine_utilization"):
            object.__setattr__(self, f, _frozen(getattr(self, f)))
        main = max(self.kernels, key=lambda k: k.kernel_us) if self.kernels else None
        object.__setattr__(self, "main", main)

    # the main kernel's figures, as the run's (None when no instruction-level kernel ran)
    @property
    def pipe_ratios(self) -> Mapping[str, float]:
        return self.main.pipe_ratios if self.main else MappingProxyType({})

    @property
    def cube_utilization(self) -> float | None:
        return self.main.cube_utilization if self.main else None

    @property
    def memory_bound_index(self) -> float | None:
        return self.main.memory_bound_index if self.main else None

    @property
    def parallelism_utilization(self) -> float | None:
        return self.main.parallelism_utilization if self.main else None

    @property
    def mte2_compute_overlap(self) -> float | None:
        return self.main.mte2_compute_overlap if self.main else None

    def figure(self, name: str):
        """A figure by its name (a field or a main-kernel property), or None: for rules that name their target."""
        if name not in _FIGURES:
            raise KeyError(f"{name!r} is not a run metric (one of {', '.join(sorted(_FIGURES))})")
        return getattr(self, name)

    def to_dict(self) -> dict:
        """The JSON form (the main kernel's figures only when there is one)."""
        out = {f.name: _plain(getattr(self, f.name)) for f in fields(self) if f.name != "main"}
        if self.main is not None:
            for name in _MAIN_FIGURES:
                out[name] = _plain(getattr(self, name))
        return out


_MAIN_FIGURES = (
    "pipe_ratios",
    "cube_utilization",
    "memory_bound_index",
    "parallelism_utilization",
    "mte2_compute_overlap",
)
_FIGURES = frozenset((*(f.name for f in fields(RunMetrics)), *_MAIN_FIGURES)) - {"main"}


def run_metrics(result: RunResult, whole_run: bool = False) -> RunMetrics:
    t = result.trace
    c = t.columns
    profile = result.profile
    wall = max(1, result.end_ps)
    spans = phase_spans(result)
    out: dict = {"simulated_us": _us(wall), "phases": phases(result, spans)}
    window = None if whole_run else work_window(result, spans)
    out["balance_over"] = "work" if window else "whole run"
    window = window or (0, wall)

    # -- kernels --------------------------------------------------------------------------------
    krows = kernel_rows(t)
    k_s, k_e, k_f = c["start"][krows], c["end"][krows], c["flops"][krows]
    kernel_time = covered(k_s, k_e)
    flops = int(k_f.sum())
    out["kernel_count"] = len(krows)
    out["kernel_us"] = _us(kernel_time)
    out["tflops"] = round(flops / kernel_time, 3) if kernel_time else 0.0  # flops per ps = TFLOPS
    # % of peak: the time each kernel's work needs at the peak of the unit that did it, over kernel time
    units, work, peaks = kernel_units(t, profile, krows)
    at_peak_ps = float((work / peaks).sum()) * 1e12 if len(krows) else 0.0
    out["percent_of_peak"] = round(100 * at_peak_ps / kernel_time, 2) if kernel_time else 0.0
    detailed = []
    block_rows = np.flatnonzero((c["kind"] == Kind.BLOCK) & t.rows_on(LaneKind.BLOCK))
    for_data = None  # per row: a wait for data (built once, for the first kernel that needs it)
    for j, row in enumerate(krows):
        if len(detailed) >= MAX_DETAILED_KERNELS:
            break
        s, e = int(c["start"][row]), int(c["end"][row])
        blocks = block_rows[(c["start"][block_rows] >= s) & (c["end"][block_rows] <= e)]
        if not len(blocks):
            continue  # an op-level kernel: no per-core detail
        unit = {"unit": units[j], "flops": int(work[j]), "peak_flops": float(peaks[j])}
        m = kernel_metrics(t, profile, int(row), unit)
        if for_data is None:
            for_data = t.rows_with(_waits_for_data)
        m.update(_kernel_detail(t, profile, s, e, blocks, for_data))
        detailed.append(KernelMetrics(row=int(row), unit=unit["unit"], peak_flops=unit["peak_flops"], **m))
    out["kernels"] = tuple(detailed)

    # -- host / device balance ------------------------------------------------------------------
    host = t.rows_on(LaneKind.HOST)
    calls = host & (c["kind"] == Kind.CALL)
    waits = host & (c["kind"] == Kind.WAIT)
    work = host & (c["kind"] == Kind.HOST_WORK)
    in_calls = _covered_in(c["start"][calls], c["end"][calls], window)
    waiting = _covered_in(c["start"][waits], c["end"][waits], window)
    executing = t.rows_on(LaneKind.STREAM) & one_of(c["kind"], (Kind.COPY, Kind.KERNEL))
    device_busy = _covered_in(c["start"][executing], c["end"][executing], window)
    host_api = max(0, in_calls - waiting)
    out["host_api_us"] = _us(host_api)
    out["host_wait_us"] = _us(waiting)
    out["host_work_us"] = _us(_covered_in(c["start"][work], c["end"][work], window))
    out["device_busy_us"] = _us(device_busy)
    out["host_share"] = round(host_api / max(1, window[1] - window[0]), 4)
    total = host_api + device_busy
    ratio = host_api / total if total else 0.0
    out["balance_score"] = round(SEED_IDEAL_HOST_RATIO / ratio, 4) if ratio > SEED_IDEAL_HOST_RATIO else 1.0

    # -- copy engines -----------------------------------------------------------------------------
    device = t.rows_on(LaneKind.STREAM, LaneKind.COPY_ENGINE, LaneKind.KERNELS)
    dev_rows = device & (c["kind"] != Kind.MARK)
    span = int(c["end"][dev_rows].max() - c["start"][dev_rows].min()) if dev_rows.any() else 0
    engines = {}
    copy_s, copy_e = [], []
    for i in t.lanes_of(LaneKind.COPY_ENGINE):
        lane = t.lanes[i]
        sel = c["lane"] == i
        busy = covered(c["start"][sel], c["end"][sel])
        engines[lane.thread] = round(busy / span, 4) if span else 0.0
        copy_s.append(c["start"][sel])
        copy_e.append(c["end"][sel])
    out["copy_engine_utilization"] = engines
    copies = merged(
        np.concatenate(copy_s) if copy_s else np.zeros(0), np.concatenate(copy_e) if copy_e else np.zeros(0)
    )
    copy_time = int((copies[1] - copies[0]).sum())
    overlap = intersection(copies, merged(k_s, k_e))
    out["copy_us"] = _us(copy_time)
    out["copy_compute_overlap"] = round(overlap / copy_time, 4) if copy_time else 0.0
    out["streams_used"] = len(np.unique(c["lane"][executing])) if executing.any() else 0
    return RunMetrics(**out)


def _kernel_detail(t: TraceData, profile, start: int, end: int, blocks: np.ndarray, for_data: np.ndarray) -> dict:
    c = t.columns
    duration = max(1, end - start)
    lanes = t.lanes
    block_cores = {lanes[int(i)].process for i in c["lane"][blocks]}
    cube, available = kernel_core_type(t, profile, block_cores, start, end)
    leaders = group_leaders(t, profile, block_cores)
    mixed = leaders != block_cores
    blocks = blocks[[lanes[int(i)].process in leaders for i in c["lane"][blocks]]]
    block_time = int((c["end"][blocks] - c["start"][blocks]).sum())
    compute_pipe = Pipe.M if cube else Pipe.V
    waits = computes = overlap = compute_total = 0
    on_lane = _rows_by_lane(t, start, end)
    for core in block_cores:
        comp = t.core_lane(core, compute_pipe)
        mte2 = t.core_lane(core, Pipe.MTE2)
        if comp is None:
            continue
        on_comp = on_lane(comp)
        kind = c["kind"][on_comp]
        busy = on_comp[kind == Kind.COMPUTE]
        wait = on_comp[(kind == Kind.FLAG_WAIT) & for_data[on_comp]]
        waits += int((c["end"][wait] - c["start"][wait]).sum())
        comp_iv = merged(c["start"][busy], c["end"][busy])
        comp_busy = int((comp_iv[1] - comp_iv[0]).sum())
        computes += comp_busy
        if mte2 is not None:
            on_mte2 = on_lane(mte2)
            loads = on_mte2[c["kind"][on_mte2] == Kind.MOVE]
            overlap += intersection(comp_iv, merged(c["start"][loads], c["end"][loads]))
            compute_total += comp_busy
    return {
        "core_type": "mix" if mixed else ("cube" if cube else "vector"),
        "blocks": len(blocks),
        "cores_used": len(leaders),  # AI cores (AIC + 2 AIV groups) for a mixed kernel
        "cores_available": available,
        "memory_bound_index": round(waits / (waits + computes), 4) if waits + computes else 0.0,
        "parallelism_utilization": round(block_time / (available * duration), 4),
        "mte2_compute_overlap": round(overlap / compute_total, 4) if compute_total else 0.0,
        "pipe_ratios_per_core": _per_core_ratios(t, block_cores, start, end),
    }


def _rows_by_lane(t: TraceData, start: int, end: int):
    """``lane -> rows on it that start in [start, end)``, ascending: the trace's rows grouped by lane (once per
    trace), each lane's cut to the rows of the window (a range of rows: the trace is sorted by start)."""
    by_lane = t.lane_rows()
    starts = t.columns["start"]
    first, last = int(starts.searchsorted(start, "left")), int(starts.searchsorted(end, "left"))

    def on_lane(lane: int) -> np.ndarray:
        rows = by_lane[lane]
        return rows[rows.searchsorted(first, "left") : rows.searchsorted(last, "left")]

    return on_lane


def _per_core_ratios(t: TraceData, cores, start: int, end: int) -> dict[str, dict[str, float]]:
    duration = max(1, end - start)
    busy = lane_busy(t, start, end)
    out: dict[str, dict[str, float]] = {}
    for i in t.lanes_of(LaneKind.PIPE):
        lane = t.lanes[i]
        if lane.process in cores:
            out.setdefault(lane.process, {})[LANE_NAMES[lane.pipe]] = round(float(busy[i]) / duration, 4)
    return {core: out[core] for core in t.core_order(out)}
