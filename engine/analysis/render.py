"""Plain-text rendering of a report and of a comparison (for the terminal and for logs)."""

from __future__ import annotations

from . import Report
from .compare import Comparison

METRIC_LABELS = (
    ("simulated_us", "simulated time (us)"),
    ("kernel_us", "kernel time (us)"),
    ("tflops", "achieved TFLOPS"),
    ("percent_of_peak", "% of peak (unit that did it)"),
    ("cube_utilization", "Cube utilisation"),
    ("memory_bound_index", "memory-bound index"),
    ("parallelism_utilization", "parallelism utilisation"),
    ("mte2_compute_overlap", "MTE2 / compute overlap"),
    ("host_api_us", "host in API calls (us)"),
    ("host_wait_us", "host blocked (us)"),
    ("host_work_us", "host computing (us)"),
    ("device_busy_us", "device busy (us)"),
    ("host_share", "host share of the run"),
    ("balance_score", "host/device balance score"),
    ("copy_us", "copy engines busy (us)"),
    ("copy_compute_overlap", "copies overlapping kernels"),
)


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:,.4f}".rstrip("0").rstrip(".") if abs(v) < 1000 else f"{v:,.1f}"
    return str(v)


def render_report(report: Report) -> str:
    m = report.metrics
    lines = ["== Metrics =="]
    for key, label in METRIC_LABELS:
        value = m.figure(key)
        if value is not None:
            lines.append(f"  {label:<30} {_fmt(value):>14}")
    for name, share in m.copy_engine_utilization.items():
        lines.append(f"  {name + ' busy':<30} {_fmt(share):>14}")
    for k in m.kernels:
        cores = "AI cores (AIC + 2 AIV)" if k.core_type == "mix" else "cores"
        lines.append(
            f"== Pipes of {k.kernel} ({k.kernel_us} us, {k.blocks} blocks on "
            f"{k.cores_used} of {k.cores_available} {cores}) =="
        )
        for name, ratio in k.pipe_ratios.items():
            if ratio:
                lines.append(f"  {name:<30} {_fmt(ratio):>14}")
    lines.append("== Idle time by cause (us, summed over lanes) ==")
    for kind, causes in report.gaps.by_lane_type.items():
        for cause, us in causes.items():
            lines.append(f"  {kind:<13} {cause:<34} {_fmt(us):>14}")
    if report.gaps.top:
        lines.append("  longest gaps:")
        for g in report.gaps.top[:6]:
            lines.append(f"    {g.lane} at {g.start_us} us: {g.us} us {g.cause} ({g.detail})")
    lines.append("== Roofline ==")
    for r in report.roofline:
        roofs = ", ".join(f"{k.removesuffix('_tflops')} {_fmt(v)}" for k, v in r.roofs.items())
        times = f" (x{r.count})" if r.count > 1 else ""
        lines.append(
            f"  {r.kernel}{times}: {r.intensity_flops_per_byte} flop/B (HBM {r.hbm_intensity_flops_per_byte}),"
            f" {r.achieved_tflops} TFLOPS; roofs {roofs} TFLOPS; bound by {r.bound_by} "
            f"({r.percent_of_roof} % of it)"
        )
    lines.append("== Findings ==")
    if not report.findings:
        lines.append("  none")
    for f in report.findings:
        code = f" ({f.code})" if f.code is not None else ""
        lines.append(f"  [{f.kind}{code}] {f.message}")
    lines.append("== Recommendations ==")
    if not report.recommendations:
        lines.append("  none")
    for r in report.recommendations:
        lines.append(f"  [{r.rule}] {r.title}")
        lines.append(f"    {r.advice}")
        evidence = ", ".join(f"{k}={v}" for k, v in r.evidence.items())
        lines.append(f"    evidence: {evidence}")
        if r.predicted_us is not None:
            gain = f"{100 * r.predicted_gain:.1f} % less" if r.predicted_gain is not None else ""
            what = r.target.removesuffix("_us").replace("_", " ") + " time"
            if r.change:
                how = "re-run with " + ", ".join(f"{k}={v}" for k, v in r.change.items())
            else:
                how = "estimate without it"
            lines.append(f"    {how}: {what} {r.before_us} us -> {r.predicted_us} us ({gain})")
    return "\n".join(lines)


def render_comparison(diff: Comparison) -> str:
    """Columns A, B and B/A (the runs' labels are printed above); all-zero rows are left out by compare."""
    sections = (("metrics", diff.metrics), ("pipe_ratios", diff.pipe_ratios), ("gaps_us", diff.gaps_us))
    width = max([30, *(len(k) + 2 for _name, rows in sections for k in rows)])
    lines = [f"{'':<{width}} {'A':>16} {'B':>16} {'B/A':>8}"]
    for name, rows in sections:
        lines.append(f"== {name} ==")
        for key, change in rows.items():
            shown = _fmt(change.ratio) if change.ratio else ""
            lines.append(f"  {key:<{width - 2}} {_fmt(change.a):>16} {_fmt(change.b):>16} {shown:>8}")
    f = diff.findings
    lines.append(f"== findings == both: {len(f.both)}")
    for side, items in (("only_a", f.only_a), ("only_b", f.only_b)):
        for kind, message in items:
            lines.append(f"  {side}: [{kind}] {message.splitlines()[0]}")
    r = diff.recommendations
    lines.append(f"== recommendations == only A: {list(r.only_a)}  only B: {list(r.only_b)}  both: {list(r.both)}")
    return "\n".join(lines)
