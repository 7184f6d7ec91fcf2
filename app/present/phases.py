"""The phases of a run — set-up, device work, teardown — as a view-model.

The phases are the engine's (:mod:`engine.analysis.phases`: the phase marks every simulation puts in
its trace): set-up until the first copy or kernel is queued, work until the last one ended, teardown
after. A run that never used the device is all set-up. Times are microseconds, labels in the
requested language.
"""

from __future__ import annotations

from engine.analysis.phases import phase_spans

from .messages import t as msg
from .replay import Replay

PHASES = ("setup", "work", "teardown")


def phase_bounds(replay: Replay) -> dict[str, tuple[int, int]]:
    """Each phase's [start, end) in picoseconds (an empty phase has start == end)."""
    if replay.result.end_ps <= 0:  # an empty run
        return dict.fromkeys(PHASES, (0, 0))
    return phase_spans(replay.result)


def phases_view(replay: Replay, step: int, lang: str = "en", bounds: dict | None = None) -> dict:
    """The phases with their times and shares, and the one ``step`` is in (``bounds``: the run's
    :func:`phase_bounds`, when the caller keeps them: they scan the whole trace)."""
    bounds = bounds or phase_bounds(replay)
    total = max(1, *(b for _a, b in bounds.values()))
    now = int(replay.trace.start[replay.row(step)])
    current = next((p for p in PHASES if bounds[p][0] <= now < bounds[p][1]), PHASES[-1])
    phases = [
        {
            "phase": p,
            "label": msg(f"phase.{p}", lang),
            "start_us": round(a / 1e6, 6),
            "end_us": round(b / 1e6, 6),
            "us": round((b - a) / 1e6, 6),
            "share": round((b - a) / total, 4),
        }
        for p, (a, b) in bounds.items()
    ]
    return {"title": msg("phases", lang), "phases": phases, "current": current}


__all__ = ("PHASES", "phase_bounds", "phases_view")
