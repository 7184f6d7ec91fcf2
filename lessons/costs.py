"""The cost table a trainee sees beside "yours vs expected": bytes moved per level, time per pipe, utilisation.

Computed in the grader from a run's trace (:class:`lessons.wire.RunData`) with :mod:`engine.analysis`:

* ``bytes``: bytes over the host link by direction (the copy engines' rows) and on chip by path
  (an MTE/FIX move's pipe and the on-chip buffer it touched: MTE2 into UB/L1, MTE1 L1 -> L0A/L0B,
  FIX out of L0C, MTE3 out of UB/L1);
* ``pipes``: per pipe kind, the busy time summed over the cores that ran it and its mean busy share
  of the kernels' time on those cores;
* ``utilisation``: the run's metrics (``engine.analysis.metrics.run_metrics``): kernel time, achieved
  TFLOPS and % of the fp16 Cube peak, msprof-named pipe ratios of the main kernel, copy time.

And the figures a lesson's objective names (:data:`FIGURES`, ``[objective] figures`` in ``lesson.toml``), read
from the grader's replay of the trainee's main run and from the reference solution's run of the same case
(:mod:`lessons.reference`): "yours vs the reference".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from engine.aicore.pipes import LANE_NAMES
from engine.aicore.tensor import Buffer
from engine.analysis.metrics import run_metrics
from engine.trace import Kind
from engine.trace.intervals import covered

from .checks import kernel_rows
from .selectors import trace_lane_facts

_LINK = {"H2D": "host -> device", "D2H": "device -> host", "D2D": "device -> device"}
_ON_CHIP = {
    ("MTE2", Buffer.UB.value): "GM -> UB",
    ("MTE2", Buffer.L1.value): "GM -> L1",
    ("MTE2", Buffer.L0A.value): "GM -> L0A",
    ("MTE2", Buffer.L0B.value): "GM -> L0B",
    ("MTE1", Buffer.L0A.value): "L1 -> L0A",
    ("MTE1", Buffer.L0B.value): "L1 -> L0B",
    ("FIXP", Buffer.L0C.value): "L0C -> GM/L1 (fixpipe)",
    ("MTE3", Buffer.UB.value): "UB -> GM",
    ("MTE3", Buffer.L1.value): "L1 -> GM",
    ("VECTOR", Buffer.UB.value): "UB -> UB",
    ("VECTOR", Buffer.L0C.value): "L0C -> GM/L1 (vector)",
}
UTILISATION_KEYS = (
    "kernel_us",
    "tflops",
    "percent_of_peak",
    "cube_utilization",
    "pipe_ratios",
    "copy_us",
    "copy_compute_overlap",
    "host_api_us",
    "device_busy_us",
    "simulated_us",
)


def cost_table(run, metrics=None) -> dict:
    t = run.trace
    c = t.columns
    facts = trace_lane_facts(t)
    moved: dict[str, int] = defaultdict(int)
    copies = np.flatnonzero(c["kind"] == Kind.COPY)
    for i in copies:
        f = facts[int(c["lane"][i])]
        if f.kind == "copy_engine":
            moved[_LINK.get(f.direction, f.direction)] += int(c["nbytes"][i])
    moves = np.flatnonzero(c["kind"] == Kind.MOVE)
    for i in moves:
        f = facts[int(c["lane"][i])]
        level = _ON_CHIP.get((f.pipe, int(c["buf"][i])), f"{f.pipe} other")
        moved[level] += int(c["nbytes"][i])
    work = np.isin(c["kind"], (Kind.MOVE, Kind.COMPUTE))
    pipes: dict[str, dict] = {}
    kernels = kernel_rows(run)
    kernel_time = covered(c["start"][kernels], c["end"][kernels]) if len(kernels) else 0
    for pipe in LANE_NAMES:
        lanes = [i for i, f in enumerate(facts) if f.kind == "pipe" and f.pipe == pipe]
        sel = work & np.isin(c["lane"], lanes)
        if not sel.any():
            continue
        busy = 0
        cores = 0
        for lane in lanes:
            on = sel & (c["lane"] == lane)
            if on.any():
                busy += covered(c["start"][on], c["end"][on])
                cores += 1
        share = busy / (cores * kernel_time) if kernel_time and cores else 0.0
        pipes[pipe] = {"busy_us": round(busy / 1e6, 4), "cores": cores, "share": round(min(1.0, share), 4)}
    metrics = metrics or run_metrics(run)
    utilisation = {}
    for key in UTILISATION_KEYS:
        value = metrics.figure(key)  # a name that is not a figure raises
        if value is not None:  # None: no instruction-level kernel ran
            utilisation[key] = dict(value) if isinstance(value, Mapping) else value
    return {"bytes": dict(sorted(moved.items())), "pipes": pipes, "utilisation": utilisation}


# -- the figures of an objective -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Figure:
    """One figure "yours vs the reference" compares: its words, unit, which way is better, how to read it."""

    label: tuple[str, str]  # English, Chinese
    unit: str
    better: str  # "lower" or "higher"
    read: Callable  # (run, metrics, table) -> float | None; table: cost_table(run)


def _main(name: str) -> Callable:
    return lambda run, m, table: getattr(m.main, name) if m.main is not None else None


def _moved(*levels: str) -> Callable:
    return lambda run, m, table: sum(table["bytes"].get(level, 0) for level in levels)


def _count(kind: Kind, lane_kind: str) -> Callable:
    def read(run, m, table) -> int:
        t = run.trace
        facts = trace_lane_facts(t)
        lanes = [i for i, f in enumerate(facts) if f.kind == lane_kind]
        return int((np.isin(t.lane, lanes) & (t.kind == kind)).sum())

    return read


def stream_span_us(run) -> float:
    """From the first copy or kernel on a stream to the last one's end: the work without set-up."""
    t = run.trace
    facts = trace_lane_facts(t)
    lanes = [i for i, f in enumerate(facts) if f.kind == "stream"]
    rows = np.isin(t.lane, lanes) & np.isin(t.kind, (Kind.COPY, Kind.KERNEL))
    return float(t.end[rows].max() - t.start[rows].min()) / 1e6 if rows.any() else 0.0


def _gm_loads(run, m, table) -> int:
    t = run.trace
    facts = trace_lane_facts(t)
    lanes = [i for i, f in enumerate(facts) if f.kind == "pipe" and f.pipe == "MTE2"]
    return int((np.isin(t.lane, lanes) & (t.kind == Kind.MOVE)).sum())


FIGURES = MappingProxyType(
    {
        "simulated_us": Figure(("whole program", "整个程序"), "µs", "lower", lambda r, m, t: m.simulated_us),
        "host_api_us": Figure(
            ("host time inside API calls", "主机在 API 调用中的时间"), "µs", "lower", lambda r, m, t: m.host_api_us
        ),
        "host_calls": Figure(("host API calls", "主机 API 调用次数"), "", "lower", _count(Kind.CALL, "host")),
        "failed_calls": Figure(
            ("failing calls", "失败的调用"), "", "lower", lambda r, m, t: int((r.trace.kind == Kind.ERROR).sum())
        ),
        "h2d_bytes": Figure(("host -> device", "主机 -> 设备"), "B", "lower", _moved("host -> device")),
        "d2h_bytes": Figure(("device -> host", "设备 -> 主机"), "B", "lower", _moved("device -> host")),
        "kernel_us": Figure(("kernel time", "核函数时间"), "µs", "lower", lambda r, m, t: m.kernel_us),
        "cores_used": Figure(("cores that ran blocks", "运行了块的核数"), "", "higher", _main("cores_used")),
        "gm_to_ub_bytes": Figure(("GM -> UB", "GM -> UB"), "B", "lower", _moved("GM -> UB")),
        "ub_to_gm_bytes": Figure(("UB -> GM", "UB -> GM"), "B", "lower", _moved("UB -> GM")),
        "gm_loads": Figure(
            ("GM -> L1/UB loads (MTE2 instructions)", "GM -> L1/UB 搬入次数（MTE2 指令）"), "", "lower", _gm_loads
        ),
        "mte2_overlap": Figure(
            ("MTE2 loading while computing", "计算期间 MTE2 在搬入的比例"),
            "%",
            "higher",
            lambda r, m, t: None if m.main is None else 100 * m.main.mte2_compute_overlap,
        ),
        "percent_of_peak": Figure(
            ("% of the fp16 Cube peak", "占 fp16 Cube 峰值"), "%", "higher", lambda r, m, t: m.percent_of_peak
        ),
        "tflops": Figure(("achieved TFLOPS", "实际 TFLOPS"), "", "higher", lambda r, m, t: m.tflops),
        "stream_span_us": Figure(
            ("first copy to last copy", "从第一次拷贝到最后一次拷贝"), "µs", "lower", lambda r, m, t: stream_span_us(r)
        ),
        "copy_compute_overlap": Figure(
            ("copies overlapping compute", "拷贝与计算重叠的比例"),
            "%",
            "higher",
            lambda r, m, t: 100 * m.copy_compute_overlap,
        ),
        "streams_used": Figure(("streams with work", "有任务的流"), "", "higher", lambda r, m, t: m.streams_used),
        "host_work_us": Figure(
            ("host computation (tiling)", "主机计算（tiling）"), "µs", "lower", lambda r, m, t: m.host_work_us
        ),
        "findings": Figure(
            ("races, deadlocks and errors found", "发现的竞争、死锁与错误"),
            "",
            "lower",
            lambda r, m, t: len(r.findings),
        ),
    }
)


def figures(run, names, metrics=None, table=None) -> dict:
    """The figures ``names`` of ``run``: ``{name: value}`` (a number, or None where the run has none)."""
    metrics = metrics or run_metrics(run)
    table = table or cost_table(run, metrics)
    out = {}
    for name in names:
        value = FIGURES[name].read(run, metrics, table)
        out[name] = None if value is None else round(float(value), 4)
    return out


def figure_text(value, unit: str) -> str:
    """A figure as a trainee reads it: ``1,234 B``, ``0.807 µs``, ``-`` when the run has none."""
    if value is None:
        return "-"
    value = float(value)
    shown = f"{value:,.0f}" if value.is_integer() else (f"{value:,.1f}" if abs(value) >= 100 else f"{value:.4g}")
    return f"{shown} {unit}".rstrip()
