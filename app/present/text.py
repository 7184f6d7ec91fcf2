"""View-models drawn in text: block-character timelines, occupancy bars, glyphs and number grids.

The terminal UI draws the dicts of :mod:`app.present.views` with these pure helpers, so what a lane
shows in one character column (which event kind dominates it, how busy it is) is decided here and
tested here, never in a widget. Widths are terminal cells: :func:`cells` counts a CJK character as
two, so Chinese labels line up.
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass

EIGHTHS = " ▁▂▃▄▅▆▇█"  # busy share of a timeline column, 0/8 .. 8/8
HBAR = " ▏▎▍▌▋▊▉█"  # fractional fill of a horizontal bar
INSTANT_GLYPH = {"ERROR": "!", "MARK": "╵"}  # zero-length events: shown as a tick, never as empty space
BUSY = "BUSY"  # the kind of an aggregated lane's columns (busy share only, no kind per event)


@dataclass(frozen=True)
class Cell:
    """One character column of one timeline lane."""

    char: str
    kind: str  # the Kind name that covers most of the column ("" when empty, BUSY for aggregated lanes)
    done: bool  # what it shows has happened at the cursor


EMPTY = Cell(" ", "", False)


def cells(text: str) -> int:
    """Terminal cells ``text`` takes (wide and full-width characters count two)."""
    return sum(2 if _wide(ch) else 1 for ch in text)


def _wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in "WF"


def reflow(text: str) -> str:
    """Lesson text as paragraphs: the line breaks inside a paragraph (the source file's wrapping)
    removed so the UI wraps to its own width; blank lines kept. Two lines of Chinese join without a
    space; Chinese and Latin text join with one, as the lessons write them within a line."""
    paragraphs = []
    for block in text.strip().split("\n\n"):
        out = ""
        for line in (part.strip() for part in block.splitlines()):
            if not line:
                continue
            joint = "" if not out or (_wide(out[-1]) and _wide(line[0])) else " "
            out += joint + line
        paragraphs.append(out)
    return "\n\n".join(paragraphs)


def fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells (with an ellipsis when cut) and padded to exactly ``width``."""
    if width <= 0:
        return ""
    if cells(text) <= width:
        return text + " " * (width - cells(text))
    out, used = [], 0
    for ch in text:
        w = cells(ch)
        if used + w > width - 1:
            break
        out.append(ch)
        used += w
    return "".join(out) + "…" + " " * (width - 1 - used)


def wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` cells, broken after a space where a line has one (Chinese, which has
    none, anywhere)."""
    lines, line = [], ""
    for ch in text:
        if cells(line + ch) > max(1, width):
            cut = line.rfind(" ")
            if cut > 0:
                lines.append(line[:cut])
                line = line[cut + 1 :]
            else:
                lines.append(line)
                line = ""
        line += ch
    return [*lines, line] if line else lines


def hbar(fraction: float, width: int) -> str:
    """A horizontal bar ``width`` cells wide filled to ``fraction`` (eighths of a cell)."""
    if width <= 0:
        return ""
    eighths = round(max(0.0, min(1.0, fraction)) * width * 8)
    full, part = divmod(eighths, 8)
    return ("█" * full + (HBAR[part] if part else "")).ljust(width)


def column_of(t_us: float, t0_us: float, t1_us: float, width: int) -> int | None:
    """The column of time ``t_us`` in a ``width``-column window, None when it falls outside."""
    if width <= 0 or t1_us <= t0_us or not t0_us <= t_us <= t1_us:
        return None
    return min(width - 1, int((t_us - t0_us) / (t1_us - t0_us) * width))


def lane_cells(lane: dict, t0_us: float, t1_us: float, width: int, cursor_us: float) -> list[Cell]:
    """One timeline lane of :func:`app.present.views.timeline_view` as ``width`` character columns.

    Each column covers ``(t1 - t0) / width`` microseconds; its character is the share of that time the
    lane was busy (in eighths, at least one eighth if anything ran), its kind the event kind that
    covered most of it. Zero-length events (errors, marks) show as a tick when nothing else is there.
    An aggregated lane's buckets give the busy share only (kind :data:`BUSY`).
    """
    if width <= 0:
        return []
    span = max(t1_us - t0_us, 1e-12)
    dt = span / width
    busy = [0.0] * width
    by_kind: list[dict[str, float]] = [{} for _ in range(width)]
    done = [False] * width
    instant: list[tuple[str, bool] | None] = [None] * width
    if lane.get("aggregated"):
        items = [(b["start_us"], b["end_us"], BUSY, b["start_us"] <= cursor_us, b["busy"]) for b in lane["buckets"]]
    else:
        items = [(b["start_us"], b["end_us"], b["kind"], b["done"], 1.0) for b in lane["bars"]]
    for start, end, kind, is_done, share in items:
        if end < t0_us or start > t1_us:
            continue
        first = max(0, min(width - 1, int((start - t0_us) / dt)))
        if end <= start:
            if instant[first] is None or kind == "ERROR":
                instant[first] = (kind, is_done)
            continue
        last = max(0, min(width - 1, int((min(end, t1_us) - t0_us) / dt - 1e-9)))
        for c in range(first, last + 1):
            a, b = t0_us + c * dt, t0_us + (c + 1) * dt
            cover = (min(end, b) - max(start, a)) * share
            if cover <= 0:
                continue
            busy[c] += cover
            by_kind[c][kind] = by_kind[c].get(kind, 0.0) + cover
            if by_kind[c][kind] >= max(by_kind[c].values()):
                done[c] = is_done
    out = []
    for c in range(width):
        if busy[c] > 0:
            level = max(1, min(8, round(busy[c] / dt * 8)))
            kind = max(by_kind[c], key=by_kind[c].get)
            out.append(Cell(EIGHTHS[level], kind, done[c]))
        elif instant[c] is not None:
            kind, is_done = instant[c]
            out.append(Cell(INSTANT_GLYPH.get(kind, "╵"), kind, is_done))
        else:
            out.append(EMPTY)
    return out


def lane_label(lane: dict) -> str:
    """A short name for a timeline lane: the core for a block lane, the pipe (indented) for a pipe
    lane, the thread's name otherwise (the host thread in the UI's language)."""
    thread = lane["thread"]
    if lane["kind"] == "HOST":
        return lane["kind_label"]
    if lane["kind"] == "BLOCK":
        return lane["group"]
    if lane["kind"] == "PIPE":
        return f" {lane['group']} {thread}"
    return thread


def number(value: float, width: int) -> str:
    """``value`` in at most ``width`` characters, right-aligned (4 significant digits when they fit)."""
    for digits in (4, 3, 2, 1):
        text = f"{value:.{digits}g}"
        if len(text) <= width:
            return text.rjust(width)
    return "#" * width


def readable(value) -> str:
    """A figure as people read it, never in scientific notation: thousands separated, whole numbers from
    10,000, tenths from 1,000, four significant digits below, trailing zeros dropped (``22,746``, ``3,119.6``,
    ``71.85``, ``0.7301``, ``0.0015``), "-" for none."""
    if value is None:
        return "-"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return str(value)
    size = abs(value)
    if size < 1e-8:
        return "0"
    if size >= 10_000:
        return f"{value:,.0f}"
    digits = 1 if size >= 1000 else min(8, 3 - math.floor(math.log10(size)))
    text = f"{value:,.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def value_rows(values: list[list[float]], width: int, cell: int = 7) -> list[str]:
    """The rows of a tile's values (from :func:`~app.present.views.tile_view`) as text lines at most
    ``width`` cells wide: as many columns of ``cell``-wide numbers as fit, then an ellipsis."""
    if not values:
        return []
    fit_cols = max(1, (width + 1) // (cell + 1))
    lines = []
    for row in values:
        shown = " ".join(number(v, cell) for v in row[:fit_cols])
        lines.append(shown + (" …" if len(row) > fit_cols and cells(shown) + 2 <= width else ""))
    return lines


def fractal_rows(view: dict, width: int, cell: int = 5) -> list[str]:
    """A slot's fractals (``tile_view(...)["fractals"]``) as text lines at most ``width`` cells wide: the
    tile's grid of fractals, each cell its place in memory and → (row-major inside) or ↓ (column-major),
    rows and columns labelled by where they start in the tensor; as many columns as fit."""
    arrows = {"z": "→", "n": "↓", "": " "}
    label_w = max(len(str(r)) for r in view["row_starts"]) + 1 if view["row_starts"] else 2
    fit_cols = max(1, (width - label_w) // cell)
    head = " " * label_w + "".join(f"{c:>{cell - 1}} " for c in view["col_starts"][:fit_cols])
    lines = [head.rstrip()]
    for start, places, inner in zip(view["row_starts"], view["cells"], view["inner"], strict=True):
        shown = "".join(
            (f"{p:>{cell - 2}}{arrows[a]} " if p >= 0 else " " * cell)
            for p, a in zip(places[:fit_cols], inner, strict=False)
        )
        more = " …" if len(places) > fit_cols else ""
        lines.append(f"{start:>{label_w - 1}} " + shown.rstrip() + more)
    return lines


__all__ = (
    "BUSY",
    "EIGHTHS",
    "EMPTY",
    "HBAR",
    "Cell",
    "cells",
    "column_of",
    "fit",
    "fractal_rows",
    "hbar",
    "lane_cells",
    "lane_label",
    "number",
    "readable",
    "reflow",
    "value_rows",
)
