"""Two runs side by side: their metrics, findings and recommendations, and what changed."""

from __future__ import annotations

from . import Report

HEADLINE = (
    "simulated_us",
    "kernel_us",
    "tflops",
    "percent_of_peak",
    "cube_utilization",
    "memory_bound_index",
    "parallelism_utilization",
    "mte2_compute_overlap",
    "host_api_us",
    "host_wait_us",
    "device_busy_us",
    "host_share",
    "balance_score",
    "copy_us",
    "copy_compute_overlap",
)


def compare(a: Report, b: Report) -> dict:
    """``metrics``: {name: {a, b, delta, ratio}}; ``pipe_ratios`` (pipes busy in either run) and ``gaps_us``
    likewise; findings and rules A-only / B-only."""

    def row(x, y) -> dict:
        out = {"a": x, "b": y}
        if isinstance(x, int | float) and isinstance(y, int | float):
            out["delta"] = round(y - x, 4)
            out["ratio"] = round(y / x, 4) if x else None
        return out

    figures = {k: (a.metrics.figure(k), b.metrics.figure(k)) for k in HEADLINE}
    metrics = {k: row(x, y) for k, (x, y) in figures.items() if x is not None or y is not None}
    ratios_a = a.metrics.pipe_ratios
    ratios_b = b.metrics.pipe_ratios
    # a pipe idle in both runs says nothing about them (the AIV pipes of a Cube-only kernel): left out
    pipes = {
        k: row(ratios_a.get(k), ratios_b.get(k))
        for k in sorted(set(ratios_a) | set(ratios_b))
        if ratios_a.get(k) or ratios_b.get(k)
    }
    fa = {(f.kind, f.message) for f in a.findings}
    fb = {(f.kind, f.message) for f in b.findings}
    ra = {r.rule for r in a.recommendations}
    rb = {r.rule for r in b.recommendations}
    gaps_a, gaps_b = a.gaps.totals_us, b.gaps.totals_us
    return {
        "metrics": metrics,
        "pipe_ratios": pipes,
        "gaps_us": {k: row(gaps_a.get(k, 0.0), gaps_b.get(k, 0.0)) for k in sorted(set(gaps_a) | set(gaps_b))},
        "findings": {"only_a": sorted(fa - fb), "only_b": sorted(fb - fa), "both": len(fa & fb)},
        "recommendations": {"only_a": sorted(ra - rb), "only_b": sorted(rb - ra), "both": sorted(ra & rb)},
    }
