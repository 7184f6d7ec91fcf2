"""What the server sends a player: a run's description (once per run) and windows of frames.

:func:`meta` is everything about a run that does not change with the step or the language: its step
count, cores, grid, the matrices' axes and the output tiles in landing order, a lesson's step anchors
and narration in both languages with where its next/previous buttons go, each play speed's (interval,
events per tick), and the window size the browser asks for. :func:`window` is a window of frames
(:func:`app.present.frames.frames`) with each distinct part rendered once into Dash components by
:mod:`.panels`, and the lesson step narrated at each step; the browser swaps them in as it steps, with
no server round trip until it leaves the window. The rules (which lesson step is current, how fast
play runs) are :mod:`app.present.playback`'s; the browser only applies their answers. Both are plain
JSON-able data; nothing here keeps state.
"""

from __future__ import annotations

import math

import numpy as np
from dash import no_update

from app.present import playback, viewport, views
from app.present.frames import held_tiles
from app.present.messages import LANGS
from app.present.messages import t as msg
from app.present.text import reflow
from engine.trace.locations import CoreRef
from lessons.render import lesson_summary

from . import figures, panels
from .loaded import Loaded
from .markup import to_html

SMALL_RUN = 3000  # steps: a run this short is sent as one window
WINDOW = 1000  # steps per window of a longer run
WINDOW_WITH_TILES = 100  # ... when every core's tiles are tracked (matmul-sized runs: about 1.5 ms a step)
TIMELINE_BARS = 400  # per lane, above this the timeline shows busy share per bucket


def window_size(loaded: Loaded) -> int:
    """Steps per window: a short run in one, unless every core's tiles are tracked on many cores (a matmul: its
    first window is drawn by its job, and a class's jobs share a server's cores: 100 steps, not the whole run)."""
    n = len(loaded.replay)
    tiles = loaded.outline["tensors"] and len(loaded.outline["cores"]) > 4
    if tiles:
        return min(n, WINDOW_WITH_TILES)
    return n if n <= SMALL_RUN else WINDOW


def meta(loaded: Loaded) -> dict:
    """A run's description for the browser (language-free: lesson texts come in both languages)."""
    o = loaded.outline
    grid = [CoreRef.from_dict(fields) for fields in o["grid"]]
    axes = figures.matrix_axes(tensor_shapes(loaded))
    out = {
        "key": loaded.key,
        "n": o["n"],
        "end_us": o["end_us"],
        "cores": o["cores"],
        "grid": [ref.css for ref in grid],
        "grid_cores": [{**f, "short": ref.short, "css": ref.css} for f, ref in zip(o["grid"], grid, strict=True)],
        "window": window_size(loaded),
        "start": 0,
        "scenario": loaded.spec.scenario,
        "params": dict(loaded.spec.params),
        "numerics": loaded.spec.numerics,
        "events": loaded.events,
        "axes": axes,
        # per output tensor: when each heatmap cell fills, and with which core's colour (the browser thresholds)
        "landing": [figures.landing_grid(out, axes[out["tensor"]]) for out in o["outputs"]],
        "speeds": playback.speed_table(),  # speed -> [interval ms, events per tick]
    }
    lesson = loaded.lesson
    if lesson is not None:
        anchors = [s.step for s in loaded.stops]
        missing = [s.problem or None for s in loaded.stops]
        out["lesson"] = {
            "number": lesson.number,
            "anchors": anchors,
            "views": [s.view for s in lesson.steps],
            "text": {lang: [reflow(s.text[lang]) for s in lesson.steps] for lang in LANGS},
            "summary": {lang: reflow(lesson_summary(lesson, lang)) for lang in LANGS},
            "missing_note": _missing_note(missing),
            # the lesson step a next (+1) / previous (-1) button goes to from lesson step k, at index k + 1
            "nav": {str(d): playback.lesson_nav(anchors, d) for d in (1, -1)},
        }
        first = next((a for a in anchors if a is not None), 0)
        out["start"] = first
    elif loaded.exercise is not None:  # the lesson's steps narrate its own run, not the trainee's: say so instead
        out["narration"] = {lang: msg("web.exercise_narration", lang, n=loaded.exercise.number) for lang in LANGS}
    return out


def tensor_shapes(loaded: Loaded) -> list[tuple[int, int]]:
    """Each named GM tensor as a matrix (a vector is one row), in the order the matrices view lists them."""
    out = []
    for info in loaded.replay.result.gm.values():
        shape = tuple(info.shape)
        out.append(shape if len(shape) == 2 else (1, int(math.prod(shape))))
    return out


def _missing_note(missing: list) -> dict | None:
    """One line per language naming the lesson steps whose selector matched nothing (and the first reason)."""
    steps = [str(i + 1) for i, why in enumerate(missing) if why]
    if not steps:
        return None
    why = next(w for w in missing if w)
    return {lang: msg("web.step_missing", lang, steps=", ".join(steps), why=why) for lang in LANGS}


def matrices(loaded: Loaded, lang: str) -> tuple[dict, str]:
    """The matrices figure (heatmaps at step 0; the browser draws tiles and completion) and a note."""
    if not loaded.outline["tensors"]:
        return figures.matrices_figure({"tensors": []}), msg("web.no_tensors", lang)
    view = views.matrices_view(loaded.replay, 0, 48, lang)
    note = "" if loaded.replay.tiles.inputs is not None else msg("web.no_values", lang)
    return figures.matrices_figure(view), note


def run_views(loaded: Loaded, lang: str, tryable: bool) -> tuple:
    """The views of a run that change with the language, not the step: the system panel, the metrics panel
    (the run's whole analysis: the longest part for a big run), the matrices figure, its note and whether it
    shows. ``tryable``: the recommendations offer a "try it" (a playground run's, not a lesson's)."""
    sys = panels.system_panel(views.device_view(loaded.replay, lang), lang)
    metrics = panels.metrics_panel(views.metrics_view(loaded.replay, lang), lang, tryable=tryable)
    figure, note = matrices(loaded, lang)
    style = {} if loaded.outline["tensors"] else {"display": "none"}
    return sys, metrics, figure, note, style


def labels(lang: str) -> dict:
    keys = ("duration", "bytes", "flops", "src", "busy")
    out = {k: msg(f"web.{k}", lang) for k in keys}
    out["time"] = msg("web.time_us", lang)
    return out


def timeline(
    loaded: Loaded,
    step: int,
    lang: str,
    span: tuple[float, float] | None,
    expand: list[str],
    shown: tuple[float, float] | None = None,
) -> dict:
    """The timeline over ``span`` (microseconds; None: the whole run), pipes of ``expand`` cores (labels) shown,
    its x axis on ``shown`` (a part of ``span``: the page the cursor is on), set-up and teardown shaded."""
    cores = tuple(ref for ref in map(loaded.core, expand or ()) if ref is not None)
    bars = TIMELINE_BARS
    if span is not None and shown is not None and shown[1] > shown[0]:  # as fine on the page shown as on one page
        bars *= min(4, math.ceil((span[1] - span[0]) / (shown[1] - shown[0])))
    view = views.timeline_view(loaded.replay, step, span, bars, cores, lang)
    fig = figures.timeline_figure(view, labels(lang), list(shown) if shown else None)
    layout = fig["layout"]
    for phase in ("setup", "teardown"):
        a, b = loaded.outline["phases_us"][phase]
        if b > a:
            layout["shapes"].append(
                {
                    "type": "rect",
                    "xref": "x",
                    "yref": "paper",
                    "x0": a,
                    "x1": b,
                    "y0": 0,
                    "y1": 1,
                    "fillcolor": "#9e9e9e",
                    "opacity": 0.12,
                    "line": {"width": 0},
                    "layer": "below",
                }
            )
            layout.setdefault("annotations", []).append(
                {
                    "text": msg(f"phase.{phase}", lang),
                    "x": (a + b) / 2,
                    "xref": "x",
                    "y": 1,
                    "yref": "paper",
                    "yanchor": "top",
                    "showarrow": False,
                    "font": {"size": 10, "color": "#757575"},
                }
            )
    return fig


def kernel_span(loaded: Loaded) -> tuple[float, float]:
    """The time (microseconds) from the first kernel's start to the last kernel's end (0, 0 if none)."""
    from engine.analysis.pipes import kernel_rows

    t = loaded.replay.trace
    rows = kernel_rows(t)
    if not len(rows):
        return 0.0, 0.0
    return float(t.start[rows].min()) / 1e6, float(t.end[rows].max()) / 1e6


def opening_span(loaded: Loaded) -> float | None:
    """The span the timeline opens on (:func:`app.present.viewport.opening`: the device's work), None: whole run."""
    return viewport.opening(loaded.outline["end_us"], tuple(loaded.outline["phases_us"]["work"]))[0]


def follow_pages(loaded: Loaded, first: int, count: int, span: float | None) -> dict:
    """The viewport's pages (:func:`app.present.viewport.pages`) for steps ``first`` .. ``first + count - 1`` (a
    window of frames): the browser shows page ``page[i]`` at the window's ``i``-th step while it follows the
    cursor."""
    end = loaded.outline["end_us"]
    replay = loaded.replay
    times = (replay.trace.start[replay.steps[first : first + count].astype(np.int64)] / 1e6).tolist()
    origin = viewport.page_origin(end, tuple(loaded.outline["phases_us"]["work"]))
    pages, index = viewport.pages(end, span, times, origin)
    return {"run": loaded.key, "span": span, "first": first, "count": count, "pages": pages, "page": index}


def pages_span(tl: dict) -> tuple[float, float] | None:
    """The time the pages of :func:`follow_pages` cover together (what the timeline figure is drawn over)."""
    if not tl["pages"]:
        return None
    return min(p[0] for p in tl["pages"]), max(p[1] for p in tl["pages"])


def pipeline(loaded: Loaded, last_step: int, core: str | None, lang: str, step: int | None = None) -> dict:
    """The pipeline table of ``core`` (a label) up to the window's last step, the cursor at ``step`` (the
    browser moves it and veils what has not happened yet)."""
    ref = loaded.core(core)
    view = None if ref is None else views.pipeline_view(loaded.replay, last_step, ref, 24, lang)
    if view is None or not view["tiles"]:
        return figures.empty_figure(note=msg("web.pipeline_empty", lang))
    if step is not None:
        view["cursor_us"] = loaded.replay.event(step).start / 1e6
    return figures.pipeline_figure(view, msg("web.time_us", lang))


def describe(loaded: Loaded, lang: str) -> tuple:
    """What the player's page is told of a run as it opens it: its meta, the slider's last step, the cores (the
    core picker's options and value, the breakpoints' core options, the timeline's expandable cores and the one
    expanded) and the status line in ``lang``."""
    meta_ = meta(loaded)
    cores = meta_["cores"]
    first = cores[:1]
    return (
        meta_,
        max(1, meta_["n"] - 1),
        cores,
        (first[0] if first else None),
        cores,
        cores,
        first,
        run_status(loaded, lang),
    )


def run_status(loaded: Loaded, lang: str) -> str:
    """What the player says about the run it plays: which run, its events and simulated time, and what happened to
    its stored copy (damaged and recomputed, not stored)."""
    lesson = loaded.lesson
    name = msg("web.lesson_n", lang, n=lesson.number, title=lesson.title[lang]) if lesson else loaded.spec.scenario
    status = msg("web.ran", lang, scenario=name, events=f"{loaded.events:,}", us=f"{loaded.outline['end_us']:,.3f}")
    return f"{status} — {note_text(loaded.note, lang)}" if loaded.note else status


def note_text(note, lang: str) -> str:
    """A run's note (a message key and its values; a value given in each language, ``{"en": ..., "zh": ...}``, is
    said in ``lang``) in ``lang``."""
    if not note:
        return ""
    key, values = note
    values = {k: v.get(lang, v.get("en")) if isinstance(v, dict) else v for k, v in values.items()}
    return msg(key, lang, **values)


def window_answer(
    loaded: Loaded, w: dict, step: int, lang: str, expand: list, follow, view, sig
) -> tuple[dict, dict, dict, object]:
    """The answer to a page's request for window ``w`` at ``step``: the window (with the request's ``sig`` and the
    timeline's pages for the viewport), the page's new viewport, the pipeline up to the window's last step, and
    the timeline (no_update when the page keeps its own: not following, and a viewport of this run already);
    ``expand``: the timeline's expanded cores; ``follow``: whether its follow box is ticked; ``view``: the
    viewport the page sent."""
    last = w["first"] + w["count"] - 1
    at = min(max(step, w["first"]), last)
    pipeline_ = pipeline(loaded, last, w["core"], lang, at)
    fresh = not isinstance(view, dict) or view.get("run") != loaded.key
    span = opening_span(loaded) if fresh else span_of(view)
    tl = follow_pages(loaded, w["first"], w["count"], span)
    shown_tl = no_update
    if follow or fresh:
        shown = tl["pages"][tl["page"][at - w["first"]]] if tl["pages"] and follow else None
        if not follow:  # a page opened without following: the device's work, as the timeline opens
            a, b = loaded.outline["phases_us"]["work"]
            shown = viewport.window(loaded.outline["end_us"], span, (a + b) / 2)
        cover = pages_span(tl) if follow else shown
        shown_tl = timeline(loaded, at, lang, cover, expand or [], shown)
    view = {"run": loaded.key, "span": span, "first": w["first"], "count": w["count"]}
    return {**w, "sig": sig, "tl": tl}, view, pipeline_, shown_tl


def span_of(view: dict) -> float | None:
    """The viewport's span a page sent back (a positive number of microseconds, else the whole run)."""
    span = view.get("span")
    return float(span) if isinstance(span, int | float) and math.isfinite(span) and span > 0 else None


def window(loaded: Loaded, first: int, count: int, core: str | None, lang: str, breakpoints: tuple) -> dict:
    """A window of frames with its parts rendered (see the module docstring); ``core``: the label of the core
    opened up (the run's first core when it names none of the run's)."""
    w = loaded.source.frames(first, count, loaded.core(core), lang, breakpoints)
    parts = w["parts"]
    rendered = {
        "host": [to_html(panels.host_panel(p, lang)) for p in parts.get("host", [])],
        "core": [to_html(panels.core_panel(p, lang)) for p in parts.get("core", [])],
        "code": [to_html(panels.code_panel(p)) for p in parts.get("code", [])],
        "cpp": [to_html(panels.cpp_panel(p)) for p in parts.get("cpp", [])],
        "cppnotes": [to_html(panels.cpp_notes(p)) for p in parts.get("cppnotes", [])],
        "grid": parts.get("grid", []),
        "done": parts.get("done", []),
    }
    index = dict(w["index"])
    if not rendered["core"]:
        rendered["core"] = [to_html(panels.core_panel(None, lang))]
        index["core"] = [0] * w["count"]
    out = {k: w[k] for k in ("first", "count", "n", "core", "lang", "labels", "events", "times", "kinds", "breaks")}
    # an event with no source line (a block, a stream task) keeps the code of the step before it on screen
    blank = [i for i, p in enumerate(parts.get("code", [])) if not p["lines"]]
    out.update(run=loaded.key, parts=rendered, index=index, tiles=tile_frames(loaded, w), code_blank=blank)
    out["cpp_blank"] = [i for i, p in enumerate(parts.get("cpp", [])) if p["file"] is None]
    out["cppnotes_blank"] = [i for i, p in enumerate(parts.get("cppnotes", [])) if not p["src"]]
    if loaded.lesson is not None:  # the lesson step narrated at each step (unless one was chosen explicitly)
        out["lesson"] = playback.lesson_steps([s.step for s in loaded.stops], out["first"], out["count"])
    return out


BUFFER_DASH = {"L1": "dot"}  # a tile staged in L1 is outlined dotted, one in L0/UB solid


def tile_frames(loaded: Loaded, w: dict) -> dict:
    """The matrices' tile outlines at each step of frames window ``w``, drawn here (plotly shapes,
    :func:`app.web.figures.tile_shapes`) once per core and what it holds: ``shapes`` per (core, tiles) pair,
    ``held`` per distinct step state the pairs it shows, ``at`` each step's state. The browser puts
    ``held[at[i]]``'s shapes together at step ``i`` (a window of a 1024^3 matmul: about 100 KiB, where one
    list per state would take 1.6 MiB)."""
    if not loaded.outline["tensors"]:
        return {"shapes": [], "held": [], "at": []}
    axes = figures.matrix_axes(tensor_shapes(loaded))
    values = w["tiles"]["values"]
    pairs: dict[tuple[int, int], int] = {}
    states: dict[tuple, int] = {}
    shapes, held, at = [], [], []
    for state in held_tiles(w):
        k = states.get(state)
        if k is None:
            shown = []
            for c, v in state:
                j = pairs.get((c, v))
                if j is None:
                    j = pairs[(c, v)] = len(shapes)
                    shapes.append(figures.tile_shapes([[t[0], c, t[1], *t[2:]] for t in values[v]], axes, BUFFER_DASH))
                shown.append(j)
            k = states[state] = len(held)
            held.append(shown)
        at.append(k)
    return {"shapes": shapes, "held": held, "at": at}


def first_window(loaded: Loaded, lang: str) -> dict:
    """The window a player asks for first (from step 0, the run's first core, no breakpoints)."""
    core = loaded.outline["cores"][0] if loaded.outline["cores"] else None
    count = window_size(loaded)
    return loaded.window((0, count, core, lang, ()), lambda: window(loaded, 0, count, core, lang, ()))


__all__ = (
    "first_window",
    "follow_pages",
    "labels",
    "matrices",
    "meta",
    "opening_span",
    "pages_span",
    "pipeline",
    "tile_frames",
    "timeline",
    "window",
    "window_size",
)
