"""The TUI's moves in plain Python (no Textual): play speeds, the timeline's zoom window, core numbers.

Kept apart from the widgets so the arithmetic of "where does the window go when I zoom" or "which
core is 12" is tested without a terminal.
"""

from __future__ import annotations

SPEEDS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)  # events per second when playing
DEFAULT_SPEED = 2  # index into SPEEDS: 5 events/s
MAX_TICKS_PER_S = 20  # faster speeds move several events per tick instead of ticking faster
ZOOM_FACTOR = 4  # each zoom level shows a quarter of the previous span
MAX_ZOOM = 16  # 4**16 ~ 4e9: a picosecond-wide window on an hour-long run


def tick(speed: int) -> tuple[float, int]:
    """(seconds between ticks, events per tick) that play ``speed`` events per second."""
    per_tick = max(1, -(-speed // MAX_TICKS_PER_S))
    return per_tick / speed, per_tick


def window(end_us: float, zoom: int, center_us: float) -> tuple[float, float] | None:
    """The timeline window at ``zoom`` (0: the whole run, None; each level divides the span by
    :data:`ZOOM_FACTOR`) around ``center_us``, kept inside the run."""
    if zoom <= 0 or end_us <= 0:
        return None
    span = end_us / ZOOM_FACTOR**zoom
    t0 = min(max(0.0, center_us - span / 2), end_us - span)
    return (t0, t0 + span)


def follow(end_us: float, zoom: int, center_us: float, cursor_us: float) -> float:
    """The window's centre after the cursor moved: unchanged while the cursor stays inside, else on it."""
    w = window(end_us, zoom, center_us)
    if w is None or w[0] <= cursor_us <= w[1]:
        return center_us
    return cursor_us


def pan(end_us: float, zoom: int, center_us: float, direction: int) -> float:
    """The centre moved by half a window to the left (-1) or right (+1), clamped to the run."""
    w = window(end_us, zoom, center_us)
    if w is None:
        return center_us
    span = w[1] - w[0]
    return min(max(span / 2, (w[0] + w[1]) / 2 + direction * span / 2), end_us - span / 2)


def core_by_number(cores: list[str], number: int, prefer: str = "") -> str | None:
    """The core named ``"<type> <number>"``, of type ``prefer`` ("AIC"/"AIV") when there is one."""
    named = [c for c in cores if c.rpartition(" ")[2] == str(number)]
    preferred = [c for c in named if c.startswith(prefer + " ")] if prefer else []
    return (preferred or named or [None])[0]


__all__ = ("DEFAULT_SPEED", "MAX_ZOOM", "SPEEDS", "ZOOM_FACTOR", "core_by_number", "follow", "pan", "tick", "window")
