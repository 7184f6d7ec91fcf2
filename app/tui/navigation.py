"""The TUI's moves in plain Python (no Textual): play speeds, core numbers (the timeline's window is
:mod:`app.present.viewport`, which the web uses too).

Kept apart from the widgets so "which core is 12" is tested without a terminal.
"""

from __future__ import annotations

from app.present import playback
from engine.trace.locations import CoreRef

SPEEDS = playback.SPEEDS  # events per second when playing (the web offers the same; the arithmetic is playback's)
DEFAULT_SPEED = SPEEDS.index(playback.DEFAULT_SPEED)  # an index into SPEEDS


def core_by_number(cores: list[CoreRef], number: int, prefer: str = "") -> CoreRef | None:
    """The core with that number, of kind ``prefer`` ("AIC"/"AIV") when there is one."""
    named = [c for c in cores if c.index == number]
    preferred = [c for c in named if c.kind == prefer]
    return (preferred or named or [None])[0]


__all__ = ("DEFAULT_SPEED", "SPEEDS", "core_by_number")
