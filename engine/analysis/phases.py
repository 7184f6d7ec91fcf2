"""The phases of a run: set-up, work and teardown, from the phase marks the simulation put in the trace.

* **set-up**: from the start until the first copy or kernel is queued (``acl.init``, ``set_device``,
  streams, memory; on a real card these take milliseconds, and the profile's costs for them are
  assumptions, so a short run is dominated by them);
* **work**: until the last copy or kernel has ended;
* **teardown**: frees, destroys, ``reset_device``, ``finalize`` and host work after the device is done.

Metrics that judge how host and device cooperate (the balance score, the host's share, utilisations)
are computed over the work phase by default: set-up and teardown are fixed costs that say nothing
about the program's coordination.
"""

from __future__ import annotations

import numpy as np

from ..simulation import RunResult
from ..trace import Kind
from ..trace.detail import Phase


def phase_spans(result: RunResult) -> dict[str, tuple[int, int]]:
    """``{"setup"|"work"|"teardown": (start_ps, end_ps)}`` from the phase marks (without device work: all
    set-up, and an empty work phase at the end)."""
    t = result.trace
    end = max(int(result.end_ps), 1)
    at = {}
    for row in np.flatnonzero((t.kind == Kind.MARK) & t.rows_with(lambda d: isinstance(d, Phase))):
        at[t.detail_of(int(row)).name] = int(t.start[row])
    begin = at.get("work", end)
    finish = at.get("teardown", end)
    return {"setup": (0, begin), "work": (begin, finish), "teardown": (finish, end)}


def phases(result: RunResult, spans: dict[str, tuple[int, int]] | None = None) -> dict:
    """``{"setup"|"work"|"teardown": {"start_us", "end_us", "us", "share"}}`` (only set-up without device work)."""
    spans = spans or phase_spans(result)
    end = spans["teardown"][1]
    return {
        name: {"start_us": s / 1e6, "end_us": e / 1e6, "us": round((e - s) / 1e6, 6), "share": round((e - s) / end, 4)}
        for name, (s, e) in spans.items()
        if e > s or name == "work"
    }


def work_window(result: RunResult, spans: dict[str, tuple[int, int]] | None = None) -> tuple[int, int] | None:
    """The work phase in picoseconds, or None when the run queued no device work."""
    s, e = (spans or phase_spans(result))["work"]
    return (s, e) if e > s else None
