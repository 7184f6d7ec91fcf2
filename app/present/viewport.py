"""The timeline's viewport, one rule for both UIs: which time window is shown, how it zooms, pans, opens and
follows the cursor.

Times are microseconds; a span of ``None`` is the whole run. The timeline opens on the device's work (the
host's set-up and teardown usually dwarf it: lesson 1 is 90 % set-up), and while following the cursor it
turns pages: a window ``span`` wide that moves in steps of :data:`PAGE_STEP` of itself, the cursor always
inside its middle part, so a step forward moves the view only when the cursor reaches the page's edge; the
pages are laid from the opening window, so while the cursor is in the host's set-up or the device's work it
is the opening window. The
page a time is on depends on that time only (not on how the cursor got there): the web computes the pages of a
window of frames in advance, the TUI the page of its current event, and both show the same window.
"""

from __future__ import annotations

import math

ZOOM_FACTOR = 4  # zooming in shows a quarter of the span, zooming out four times as much
MIN_SPAN_US = 1e-6  # a picosecond: the trace's time unit
OPENING_MARGIN = 1.25  # the opening window: the device's work and an eighth of it on each side
PAGE_STEP = 0.8  # following the cursor: pages overlap by a fifth
PAGE_LEAD = 0.1  # the cursor is never in the first tenth of a page (what led up to it stays in view)


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


def pan(end_us: float, span_us: float | None, center_us: float, direction: int) -> float:
    """The centre moved by half a window to the left (-1) or right (+1), clamped to the run."""
    w = window(end_us, span_us, center_us)
    if w is None:
        return center_us
    span = w[1] - w[0]
    return min(max(span / 2, (w[0] + w[1]) / 2 + direction * span / 2), end_us - span / 2)


def opening(end_us: float, work: tuple[float, float]) -> tuple[float | None, float]:
    """(span, centre) the timeline opens on: the device's work with a margin, or the whole run when the device
    did nothing (or its work is most of the run)."""
    a, b = work
    if b <= a:
        return None, end_us / 2
    span = (b - a) * OPENING_MARGIN
    return (None if span >= end_us else span), (a + b) / 2


def page(end_us: float, span_us: float | None, cursor_us: float, origin_us: float = 0.0) -> tuple[float, float] | None:
    """The window that shows ``cursor_us`` while following it (None: the whole run). Pages start at
    ``origin_us`` plus whole steps; with the opening's span and start (:func:`page_origin`) the device's work
    is one page, the opening window, and while the cursor is still in the host's set-up the view stays there
    (the set-up, shaded, is seen with "whole run")."""
    if window(end_us, span_us, cursor_us) is None:
        return None
    step = span_us * PAGE_STEP
    k = max(0, math.floor((cursor_us - origin_us - span_us * PAGE_LEAD) / step))  # no page before the first
    t0 = min(max(0.0, origin_us + k * step), end_us - span_us)
    return (t0, t0 + span_us)


def page_origin(end_us: float, work: tuple[float, float]) -> float:
    """Where the pages start: the opening window's left edge (0 when the timeline opens on the whole run)."""
    span, center = opening(end_us, work)
    return 0.0 if span is None else center - span / 2


def page_center(end_us: float, span_us: float | None, cursor_us: float, center_us: float, origin_us: float = 0.0):
    """The centre of :func:`page` (``center_us`` unchanged when the whole run is shown)."""
    found = page(end_us, span_us, cursor_us, origin_us)
    return center_us if found is None else (found[0] + found[1]) / 2


def pages(
    end_us: float, span_us: float | None, times: list[float], origin_us: float = 0.0
) -> tuple[list[list[float]], list[int]]:
    """The distinct pages a sequence of cursor times is on, and each time's page (an index into them); no pages
    when the whole run is shown."""
    found: dict[tuple[float, float], int] = {}
    index = []
    for t in times:
        p = page(end_us, span_us, t, origin_us)
        if p is None:
            return [], []
        index.append(found.setdefault(p, len(found)))
    return [list(p) for p in found], index


__all__ = (
    "MIN_SPAN_US",
    "ZOOM_FACTOR",
    "can_zoom",
    "opening",
    "page",
    "page_center",
    "page_origin",
    "pages",
    "pan",
    "window",
    "zoom",
)
