"""View-models of what a run reports rather than of one step's state: the metrics pane (headline numbers,
pipe ratios, roofline, idle time, findings, recommendations) and the code pane (the current event's line).

Part of :mod:`app.present.views` (which lists them with the other views); pure functions of a replay.
"""

from __future__ import annotations

from .messages import finding_kind, metric_name
from .messages import t as msg
from .replay import Replay

# -- metrics -------------------------------------------------------------------------------------------
PHASE_VALUED = frozenset({"over"})  # evidence whose value is a phase of the run (engine.analysis.phases)


def _value(key: str, value, lang: str):
    """An evidence value as a trainee reads it: a phase by its name in ``lang``, anything else as it is."""
    return msg(f"phase.{value}", lang) if key in PHASE_VALUED and isinstance(value, str) else value


def metrics_view(replay: Replay, lang: str = "en") -> dict:
    report = replay.report()
    m = report.metrics
    pipes = {}
    for k in m.kernels:
        for name, ratio in k.pipe_ratios.items():
            pipes[name] = max(pipes.get(name, 0.0), ratio)
    return {
        "title": msg("metrics", lang),
        "headline": [
            {"key": key, "label": msg(key, lang), "short": msg(f"metric_short.{key}", lang), "value": m.figure(key)}
            for key in ("simulated_us", "kernel_us", "tflops", "percent_of_peak")
        ],
        "pipe_ratios": pipes,
        "pipe_ratio_names": {k: metric_name(k, lang, with_id=False) for k in pipes},  # msprof id -> words
        "roofline": [r.to_dict() for r in report.roofline],
        "gaps": {msg(f"gap.{cause}", lang): us for cause, us in report.gaps.totals_us.items()},
        "findings": [
            {"kind": f.kind, "label": finding_kind(f.kind, lang), "message": f.text(lang), "src": f.src}
            for f in report.findings
        ],
        "findings_title": msg("findings", lang),
        "no_findings": msg("no_findings", lang),
        "recommendations": [
            {
                "rule": r.rule,
                "title": r.title_zh if lang == "zh" else r.title,
                "advice": r.advice_zh if lang == "zh" else r.advice,
                "evidence": [
                    {"id": k, "name": metric_name(k, lang, with_id=False), "value": _value(k, v, lang)}
                    for k, v in r.evidence.items()
                    if k != "threshold"
                ],
                "threshold": r.threshold_zh if lang == "zh" and r.threshold_zh else r.evidence.get("threshold", ""),
                "change": r.change,
            }
            for r in report.recommendations
        ],
        "recommendations_title": msg("recommendations", lang),
    }


# -- code ----------------------------------------------------------------------------------------------
def code_view(replay: Replay, step: int, context: int = 0, lang: str = "en") -> dict:
    """The file of the current event's source line, with that line marked (``context`` > 0: only
    that many lines around it)."""
    src = replay.source_line(step)
    out = {"title": msg("code", lang), "file": None, "line": None, "lines": [], "first_line": 1}
    if src is None:  # a block starting, a queue's turn: the device's own doing, no line of code
        out["note"] = msg("no_source_line", lang)
        return out
    text = replay.source(src.file)
    out["file"], out["line"] = src.file, src.line
    if text is None:
        out["note"] = msg("source_unavailable", lang)
        return out
    lines = text.splitlines()
    first = 1
    if context > 0:
        first = max(1, src.line - context)
        lines = lines[first - 1 : src.line + context]
    out["lines"] = lines
    out["first_line"] = first
    return out


__all__ = ("code_view", "metrics_view")
