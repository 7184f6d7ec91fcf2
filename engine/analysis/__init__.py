"""The coordination profiler and debugger (seed sections 6.1 and 6.2), computed from a finished run.

:func:`analyze` turns a :class:`~engine.simulation.RunResult` into a :class:`Report`:

* ``metrics`` — throughput and % of peak, pipe ratios (msprof names, per core and averaged),
  host/device balance, memory-bound index, parallelism utilisation, copy-engine utilisation and
  copy/compute overlap (:mod:`.metrics`);
* ``gaps`` — idle time on streams, copy engines, cores and pipes labelled with its cause (:mod:`.gaps`);
* ``roofline`` — each kernel shape's arithmetic intensity and throughput against the roofs of the unit
  that did the work (:mod:`.roofline`);
* ``findings`` — what the run detected (failed ACL calls, deadlocks, kernel races and errors, and the
  cross-stream memory races :mod:`engine.device.consistency` finds when every simulation finishes);
* ``recommendations`` — rules with documented thresholds, each with its evidence and, when the
  caller can re-run the scenario, the measured gain of applying it (:mod:`.rules`).

Everything here reads the trace and the task records; nothing reaches into the simulator's state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..simulation import RunResult
from ..trace.findings import Finding
from .gaps import Gap, Gaps, label_gaps
from .metrics import KernelMetrics, RunMetrics, run_metrics
from .roofline import RooflineRow, roofline
from .rules import Recommendation, recommend


@dataclass
class Report:
    metrics: RunMetrics
    gaps: Gaps
    roofline: list[RooflineRow]
    findings: list[Finding]
    recommendations: list[Recommendation] = field(default_factory=list)

    def to_dict(self) -> dict:
        """The JSON edge: every typed record as plain data."""
        return {
            "metrics": self.metrics.to_dict(),
            "gaps": self.gaps.to_dict(),
            "roofline": [r.to_dict() for r in self.roofline],
            "findings": [f.to_dict() for f in self.findings],
            "recommendations": [r.to_dict() for r in self.recommendations],
        }


def analyze(
    result: RunResult,
    context: dict | None = None,
    rerun: Callable[[dict], float] | None = None,
) -> Report:
    """Profile and debug one run.

    ``context`` carries what the scenario knows (its parameters, the tiling used); ``rerun`` runs the
    same scenario with some parameters changed and returns its simulated microseconds (used to
    measure a recommendation's gain).
    """
    context = context or {}
    metrics = run_metrics(result)
    gaps = label_gaps(result)
    findings = list(result.findings)
    report = Report(metrics, gaps, roofline(result), findings)
    report.recommendations = recommend(result, metrics, gaps, context, rerun)
    return report


__all__ = ("Gap", "Gaps", "KernelMetrics", "Recommendation", "Report", "RooflineRow", "RunMetrics", "analyze")
