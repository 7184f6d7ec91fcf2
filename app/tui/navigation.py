"""The TUI's moves in plain Python (no Textual): the timeline's zoom window, core numbers.

Kept apart from the widgets so the arithmetic of "where does the window go when I zoom" or "which
core is 12" is tested without a terminal.
"""

from __future__ import annotations

from app.present import playback
from engine.locations import CoreRef

SPEEDS = playback.SPEEDS  # events per second when playing (the web offers the same; the arithmetic is playback's)
DEFAULT_SPEED = SPEEDS.index(playback.DEFAULT_SPEED)  # an index into SPEEDS
ZOOM_FACTOR = 4  # z shows a quarter of the span, Z four times as much
MIN_SPAN_US = 1e-6  # a picosecond: the trace's time unit


def window(end_us: float, span_us: float | None, center_us: float) -> tuple[float, float] | None:
    """The timeline window ``span_us`` wide around ``center_us``, kept inside the run (None: the whole run)."""
    if span_us is None or end_us <= 0 or span_us >= end_us:
        return None
    t0 = min(max(0.0, center_us - span_us / 2), end_us - span_us)
    return (t0, t0 + span_us)


def zoom(end_us: float, span_us: float | None, direction: int) -> float | None:
    """The span after zooming in (+1: a quarter) or out (-1: four times, up to the whole run: None)."""
    span = end_us if span_us is None else span_us
    span = span / ZOOM_FACTOR if direction > 0 else span * ZOOM_FACTOR
    return None if span >= end_us else max(MIN_SPAN_US, span)


def can_zoom(span_us: float | None, direction: int) -> bool:
    return span_us is not None if direction < 0 else span_us is None or span_us / ZOOM_FACTOR >= MIN_SPAN_US


def follow(end_us: float, span_us: float | None, center_us: float, cursor_us: float) -> float:
    """The window's centre after the cursor moved: unchanged while the cursor stays inside, else on it."""
    w = window(end_us, span_us, center_us)
    if w is None or w[0] <= cursor_us <= w[1]:
        return center_us
    return cursor_us


def pan(end_us: float, span_us: float | None, center_us: float, direction: int) -> float:
    """The centre moved by half a window to the left (-1) or right (+1), clamped to the run."""
    w = window(end_us, span_us, center_us)
    if w is None:
        return center_us
    span = w[1] - w[0]
    return min(max(span / 2, (w[0] + w[1]) / 2 + direction * span / 2), end_us - span / 2)


def opening(end_us: float, work: tuple[float, float]) -> tuple[float | None, float]:
    """(span, centre) the timeline opens on: the device's work with a margin (the host's set-up and
    teardown usually dwarf it), or the whole run when the device did nothing."""
    a, b = work
    if b <= a:
        return None, end_us / 2
    span = (b - a) * 1.25
    return (None if span >= end_us else span), (a + b) / 2


def core_by_number(cores: list[CoreRef], number: int, prefer: str = "") -> CoreRef | None:
    """The core with that number, of kind ``prefer`` ("AIC"/"AIV") when there is one."""
    named = [c for c in cores if c.index == number]
    preferred = [c for c in named if c.kind == prefer]
    return (preferred or named or [None])[0]


__all__ = (
    "DEFAULT_SPEED",
    "MIN_SPAN_US",
    "SPEEDS",
    "ZOOM_FACTOR",
    "can_zoom",
    "core_by_number",
    "follow",
    "opening",
    "pan",
    "window",
    "zoom",
)
