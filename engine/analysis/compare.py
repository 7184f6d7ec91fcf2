"""Two runs side by side: their metrics, findings and recommendations, and what changed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from types import MappingProxyType

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


@dataclass(frozen=True)
class Change:
    """One figure in runs A and B; ``delta`` (B - A) and ``ratio`` (B / A, None when A is 0) when both are numbers."""

    a: object
    b: object
    delta: float | None = None
    ratio: float | None = None

    @classmethod
    def of(cls, a, b) -> Change:
        if isinstance(a, int | float) and isinstance(b, int | float):
            return cls(a, b, round(b - a, 4), round(b / a, 4) if a else None)
        return cls(a, b)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Split:
    """What only run A has, what only run B has, and what both have (each sorted)."""

    only_a: tuple
    only_b: tuple
    both: tuple

    @classmethod
    def of(cls, a: set, b: set) -> Split:
        return cls(tuple(sorted(a - b)), tuple(sorted(b - a)), tuple(sorted(a & b)))

    def to_dict(self) -> dict:
        return {"only_a": list(self.only_a), "only_b": list(self.only_b), "both": list(self.both)}


@dataclass(frozen=True)
class Comparison:
    """``metrics`` (the headline figures either run has), ``pipe_ratios`` (pipes busy in either run) and
    ``gaps_us`` (idle time by cause) as :class:`Change` by name; findings as (kind, message) and
    recommendations as rule names, split by run."""

    metrics: Mapping[str, Change]
    pipe_ratios: Mapping[str, Change]
    gaps_us: Mapping[str, Change]
    findings: Split
    recommendations: Split

    def to_dict(self) -> dict:
        """The JSON edge."""
        out = {}
        for name in ("metrics", "pipe_ratios", "gaps_us"):
            out[name] = {k: change.to_dict() for k, change in getattr(self, name).items()}
        out["findings"] = self.findings.to_dict()
        out["recommendations"] = self.recommendations.to_dict()
        return out


def compare(a: Report, b: Report) -> Comparison:
    """The two runs' figures side by side, and the findings and rules only one of them has."""
    figures = {k: (a.metrics.figure(k), b.metrics.figure(k)) for k in HEADLINE}
    metrics = {k: Change.of(x, y) for k, (x, y) in figures.items() if x is not None or y is not None}
    ratios_a = a.metrics.pipe_ratios
    ratios_b = b.metrics.pipe_ratios
    # a pipe idle in both runs says nothing about them (the AIV pipes of a Cube-only kernel): left out
    pipes = {
        k: Change.of(ratios_a.get(k), ratios_b.get(k))
        for k in sorted(set(ratios_a) | set(ratios_b))
        if ratios_a.get(k) or ratios_b.get(k)
    }
    gaps_a, gaps_b = a.gaps.totals_us, b.gaps.totals_us
    gaps = {k: Change.of(gaps_a.get(k, 0.0), gaps_b.get(k, 0.0)) for k in sorted(set(gaps_a) | set(gaps_b))}
    return Comparison(
        MappingProxyType(metrics),
        MappingProxyType(pipes),
        MappingProxyType(gaps),
        Split.of({(f.kind, f.message) for f in a.findings}, {(f.kind, f.message) for f in b.findings}),
        Split.of({r.rule for r in a.recommendations}, {r.rule for r in b.recommendations}),
    )
