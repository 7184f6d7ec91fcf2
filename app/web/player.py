"""The player's callbacks: the server loads a run and sends windows of frames; the browser steps.

Server side (one round trip per run, per window of steps, per click that needs the run): the run's
description and its language-dependent views; a window of frames with the timeline and pipeline
around it; jumps to the next event of a kind; breakpoints; a slot's numbers; timeline zoom.
Browser side (``assets/player.js``, no round trip): the step (buttons, keys, slider, play, stopping at
breakpoints), drawing a step from the window, and asking for the next window near its edge.

The server's callbacks are the methods of :class:`Callbacks` (a test calls them as functions, with what a
page would send); :func:`register` wires them and the browser's to the page's ids.
"""

from __future__ import annotations

import math
import time

from dash import ALL, ClientsideFunction, Input, Output, Patch, State, html, no_update
from dash.exceptions import PreventUpdate

from app.present import viewport, views
from app.present.messages import known_lang
from app.present.messages import t as msg

from . import panels, render
from .errors import shown
from .layout import VIEWS
from .runs import RunRequestError, Runs, breakpoints_of
from .trigger import FROM_DASH, triggered


class Callbacks:
    """The player's server-side callbacks over the runs of ``runs``: each method takes what its inputs and states
    send, in order (and ``trigger``, the id of the input that fired, where that matters)."""

    def __init__(self, runs: Runs) -> None:
        self.runs = runs

    # -- a run: its description (language-free) ----------------------------------------------------------
    def load_run(self, run, lang, old):
        if not run:
            raise PreventUpdate
        kept = self.runs.prepared_meta(run, lang)  # a playground run's job described it: no need to load it now
        if kept is not None:
            if isinstance(old, dict) and old.get("key") == kept[0]["key"]:
                raise PreventUpdate
            return tuple(kept)
        try:
            loaded = self.runs.load(run)
        except RunRequestError as exc:
            return (no_update,) * 7 + (exc.text(known_lang(lang)),)
        if isinstance(old, dict) and old.get("key") == loaded.key:
            raise PreventUpdate
        return render.describe(loaded, known_lang(lang))

    def status_in(self, lang, run, meta):
        """The status line again in the language switched to (the run it describes is already loaded)."""
        if not run or not isinstance(meta, dict):
            raise PreventUpdate
        loaded = self._loaded(run)
        if loaded.key != meta.get("key"):
            raise PreventUpdate
        return render.run_status(loaded, known_lang(lang))

    # -- a run: the views that depend on the language ----------------------------------------------------------
    def run_views(self, meta, lang, run):
        if not meta or not run:
            raise PreventUpdate
        lang = known_lang(lang)
        kept = self.runs.prepared_views(run, lang)  # what a playground run's job drew
        if kept is not None:
            return tuple(kept)
        loaded = self._loaded(run)
        return render.run_views(loaded, lang, tryable=loaded.lesson is None)

    # -- a window of frames --------------------------------------------------------------------------------
    def fetch_window(self, req, run, expand, follow, view):
        if not req or not run or not isinstance(req, dict):
            raise PreventUpdate
        kept = self.runs.prepared_answer(run, req, expand, follow, view)  # what the run's job answered
        if kept is not None:
            self.runs.preload(run)  # the page's next window asks for it
            return kept
        loaded = self._loaded(run)
        if req.get("run") != loaded.key:
            raise PreventUpdate
        lang = known_lang(req.get("lang"))
        try:
            bps = breakpoints_of(req.get("bps"), loaded)
        except RunRequestError:
            bps = ()
        first, count = _integer(req.get("first", 0)), max(1, min(_integer(req.get("count", 1)), render.WINDOW * 3))
        core = req.get("core")
        if not (core is None or isinstance(core, str)):
            raise PreventUpdate  # a page names a core by its name (or none)
        expand = _names(expand)
        key = (first, count, core, lang, bps)
        w = loaded.window(
            key, lambda: self.runs.prepared(loaded, key) or render.window(loaded, first, count, core, lang, bps)
        )
        step = _integer(req.get("step") or w["first"])
        return render.window_answer(loaded, w, step, lang, expand, follow, view, req.get("sig"))

    # -- the timeline: zoom, whole run, the device's work, expanded cores -------------------------------------
    def zoom(self, relayout, _whole, _work, expand, follow, run, step, lang, view, *, trigger=FROM_DASH):
        if not run:
            raise PreventUpdate
        trigger = triggered(trigger)
        if trigger in ("tl-expand", "tl-follow") and not self._viewed(run, view):
            # the run's first window, on its way, brings the timeline with these boxes: nothing to draw, and nothing
            # to load (a run whose first window came from its job is not loaded yet: 0.4 s for the 8192^3 run)
            raise PreventUpdate
        loaded = self._loaded(run)
        step = _step_of(step, loaded)
        lang = known_lang(lang)
        expand = _names(expand)
        end = loaded.outline["end_us"]
        view = view if isinstance(view, dict) and view.get("run") == loaded.key else None

        def moved(fig, span, follow_now):
            """The figure, the follow box, and the viewport with the window's pages for its new span."""
            if view is None:
                return fig, follow_now, no_update, no_update
            first, count = _integer(view.get("first") or 0), _integer(view.get("count") or 1)
            patch = Patch()
            patch["tl"] = render.follow_pages(loaded, first, count, span)
            return fig, follow_now, {**view, "span": span}, patch

        if trigger == "tl-whole":
            return moved(render.timeline(loaded, step, lang, None, expand or []), None, [])
        if trigger == "tl-work":
            span = render.opening_span(loaded)
            a, b = loaded.outline["phases_us"]["work"]
            shown = viewport.window(end, span, (a + b) / 2)
            return moved(render.timeline(loaded, step, lang, shown, expand or []), span, [])
        if trigger == "tl-zoom":
            relayout = relayout if isinstance(relayout, dict) else {}
            try:
                if "xaxis.range[0]" in relayout and "xaxis.range[1]" in relayout:
                    shown = (float(relayout["xaxis.range[0]"]), float(relayout["xaxis.range[1]"]))
                elif "xaxis.range" in relayout:
                    shown = tuple(map(float, relayout["xaxis.range"]))[:2]
                elif relayout.get("xaxis.autorange"):
                    shown = None
                else:
                    raise PreventUpdate
            except (TypeError, ValueError):
                raise PreventUpdate from None
            if shown is not None:  # a range the chart can send: finite, ordered, within a run's length of the run
                if not (len(shown) == 2 and all(map(math.isfinite, shown)) and shown[0] < shown[1]):
                    raise PreventUpdate
                shown = (max(shown[0], -end), min(shown[1], 2 * end))
            span = None if shown is None or shown[1] - shown[0] >= end else max(shown[1] - shown[0], 0.0) or None
            return moved(render.timeline(loaded, step, lang, shown, expand or []), span, [])
        if view is None or (trigger == "tl-follow" and not follow):
            raise PreventUpdate  # the first window brings the timeline with it; unticking leaves the view as it is
        span = render.span_of(view)
        cursor = loaded.replay.event(step).start / 1e6
        origin = viewport.page_origin(end, tuple(loaded.outline["phases_us"]["work"]))
        shown = viewport.page(end, span, cursor, origin) if follow else None
        fig = render.timeline(loaded, step, lang, shown, expand or [])
        return fig, no_update, no_update, no_update

    # -- jumps ---------------------------------------------------------------------------------------------
    def jump(self, _prev, _next, step, kind, run, lang, *, trigger=FROM_DASH):
        if not run or not kind:
            raise PreventUpdate
        loaded = self._loaded(run)
        forward = triggered(trigger) == "jump-next"
        from engine.trace import Kind

        if not isinstance(kind, str) or kind not in Kind.__members__:
            return no_update, msg("web.bad_kind", known_lang(lang), kinds=", ".join(Kind.__members__), got=shown(kind))
        found = loaded.replay.next_of_kind(_step_of(step, loaded), kind, forward)
        if found is None:
            return no_update, f"{kind}: -"
        return {"step": found, "at": time.time()}, ""

    # -- breakpoints ---------------------------------------------------------------------------------------
    def breakpoints(self, _add, deletes, kind, core, src, mark, current, run, lang, *, trigger=FROM_DASH):
        # what the page keeps: a list of breakpoints as this callback wrote them (anything else is dropped)
        current = [_kept_bp(bp) for bp in current] if isinstance(current, list) else []
        current = [bp for bp in current if bp is not None]
        trigger = triggered(trigger)
        if isinstance(trigger, dict) and trigger.get("type") == "bp-del":
            if not isinstance(deletes, list) or not any(deletes):
                raise PreventUpdate
            i = trigger.get("i")
            current = [bp for j, bp in enumerate(current) if j != i]
        elif trigger == "bp-add":
            item = {
                "kind": kind or None,
                "core": core or None,
                "src": src.strip() or None if isinstance(src, str) else (src or None),
                "mark": mark.strip() if isinstance(mark, str) and mark.strip() else None,
            }
            if item["mark"] is None and isinstance(mark, str) and mark == "" and not any(item.values()):
                raise PreventUpdate
            try:
                if run:
                    breakpoints_of([item], self.runs.load(run))
            except RunRequestError as exc:
                return no_update, no_update, exc.text(known_lang(lang))
            if any(v is not None for v in item.values()) and item not in current:
                current.append(item)
        return current, _bp_list(current, known_lang(lang)), ""

    # -- a slot's numbers ------------------------------------------------------------------------------------
    def tile_values(self, click, step, run, core, lang):
        if not click or not run or not isinstance(click, dict):
            raise PreventUpdate
        loaded = self._loaded(run)
        lang = known_lang(lang)
        step = _step_of(step, loaded)
        buf, q, s = click.get("buf"), click.get("q"), click.get("s")
        if not isinstance(buf, str) or type(q) is not int or type(s) is not int:
            raise PreventUpdate  # a slot the page's own panel could not have named
        ref = loaded.core(core) if isinstance(core, str) else None
        if ref is None:
            return html.Div(msg("web.no_core", lang), className="note")
        try:
            view = views.tile_view(loaded.replay, step, ref, buf, q, s, 12, lang)
        except (KeyError, LookupError, TypeError, ValueError):
            return html.Div(msg("web.no_slot", lang, buf=buf[:40], q=q, s=s), className="note")
        return panels.tile_panel(view, lang)

    def _viewed(self, run, view) -> bool:
        """Whether the page's timeline viewport ``view`` is of ``run`` (a window of it has been drawn)."""
        try:
            key = self.runs.spec(run).key
        except RunRequestError:
            return False
        return isinstance(view, dict) and view.get("run") == key

    def _loaded(self, run):
        """The run a page plays; PreventUpdate if it cannot be loaded (the status line already says why: the
        player's load_run answers the same run dict first)."""
        try:
            return self.runs.load(run)
        except RunRequestError:
            raise PreventUpdate from None


def register(app, runs: Runs) -> None:
    """The player's callbacks on ``app``: :class:`Callbacks` over ``runs``, and the browser's."""
    cb = Callbacks(runs)
    # -- a run: its description, its status line, its views -------------------------------------------------
    app.callback(
        Output("meta", "data"),
        Output("step-slider", "max"),
        Output("core-select", "options"),
        Output("core-select", "value"),
        Output("bp-core", "options"),
        Output("tl-expand", "options"),
        Output("tl-expand", "value"),
        Output("player-status", "children"),
        Input("run", "data"),
        State("lang-page", "data"),
        State("meta", "data"),
    )(cb.load_run)
    app.callback(
        Output("player-status", "children", allow_duplicate=True),
        Input("player-lang", "data"),
        State("run", "data"),
        State("meta", "data"),
        prevent_initial_call=True,
    )(cb.status_in)
    app.callback(
        Output("sys-device", "children"),
        Output("metrics-body", "children"),
        Output("matrices-graph", "figure"),
        Output("mx-note", "children"),
        Output("matrices-graph", "style"),
        Input("meta", "data"),
        Input("player-lang", "data"),
        State("run", "data"),
    )(cb.run_views)

    # -- a window of frames; the timeline ---------------------------------------------------------------------
    app.callback(
        Output("window", "data"),
        Output("tl-view", "data"),
        Output("pipeline-graph", "figure"),
        Output("timeline-graph", "figure"),
        Input("window-request", "data"),
        State("run", "data"),
        State("tl-expand", "value"),
        State("tl-follow", "value"),
        State("tl-view", "data"),
    )(cb.fetch_window)
    app.callback(
        Output("timeline-graph", "figure", allow_duplicate=True),
        Output("tl-follow", "value"),
        Output("tl-view", "data", allow_duplicate=True),
        Output("window", "data", allow_duplicate=True),
        Input("tl-zoom", "data"),
        Input("tl-whole", "n_clicks"),
        Input("tl-work", "n_clicks"),
        Input("tl-expand", "value"),
        Input("tl-follow", "value"),  # ticked again: back to the cursor's page
        State("run", "data"),
        State("step", "data"),
        State("lang-page", "data"),
        State("tl-view", "data"),  # the viewport's run and span, not the window's frames (megabytes on a big run)
        prevent_initial_call=True,
    )(cb.zoom)

    # -- jumps, breakpoints, a slot's numbers, the step box ----------------------------------------------------
    app.callback(
        Output("jump-target", "data"),
        Output("player-status", "children", allow_duplicate=True),
        Input("jump-prev", "n_clicks"),
        Input("jump-next", "n_clicks"),
        State("step", "data"),
        State("jump-kind", "value"),
        State("run", "data"),
        State("lang-page", "data"),
        prevent_initial_call=True,
    )(cb.jump)
    app.callback(
        Output("breakpoints", "data"),
        Output("bp-list", "children"),
        Output("bp-error", "children"),
        Input("bp-add", "n_clicks"),
        Input({"type": "bp-del", "i": ALL}, "n_clicks"),
        State("bp-kind", "value"),
        State("bp-core", "value"),
        State("bp-src", "value"),
        State("bp-mark", "value"),
        State("breakpoints", "data"),
        State("run", "data"),
        State("lang-page", "data"),
        prevent_initial_call=True,
    )(cb.breakpoints)
    app.callback(
        Output("tile-values", "children"),
        Input("slot-click", "data"),
        State("step", "data"),
        State("run", "data"),
        State("core-select", "value"),
        State("lang-page", "data"),
        prevent_initial_call=True,
    )(cb.tile_values)
    app.clientside_callback(  # the labelled step box counts from 1, as the step label does
        """(value) => (Number.isInteger(value) && value >= 1)
            ? {step: value - 1, at: Date.now()} : window.dash_clientside.no_update""",
        Output("jump-target", "data", allow_duplicate=True),
        Input("step-goto", "value"),
        prevent_initial_call=True,
    )

    # -- the browser's part: one clientside callback per step (assets/player.js) ------------------------------
    app.clientside_callback(
        ClientsideFunction("ascendsim", "player"),
        Output("step", "data"),
        Output("step-slider", "value"),
        Output("playing", "data"),
        Output("play-timer", "disabled"),
        Output("play-timer", "interval"),
        Output("play", "className"),
        Output("matrices-graph", "figure", allow_duplicate=True),
        Output("narration", "children"),
        Output({"type": "lesson-step", "i": ALL}, "className"),
        *[Output(f"view-{v}", "className") for v in VIEWS],
        Input("step-back", "n_clicks"),
        Input("step-forward", "n_clicks"),
        Input("step-slider", "value"),
        Input("play-timer", "n_intervals"),
        Input("jump-target", "data"),
        Input("play", "n_clicks"),
        Input("step-first", "n_clicks"),
        Input("step-last", "n_clicks"),
        Input({"type": "lesson-step", "i": ALL}, "n_clicks"),
        Input({"type": "ls-nav", "dir": ALL}, "n_clicks"),
        Input("meta", "data"),
        Input("window", "data"),
        Input("core-select", "value"),
        Input("player-lang", "data"),
        Input("breakpoints", "data"),
        State("step", "data"),
        State("speed", "value"),
        State("playing", "data"),
        State("tl-follow", "value"),
        State("window-request", "data"),
        prevent_initial_call=True,
    )
    app.clientside_callback(  # the run's views arrived: the grid and the overlays drawn again on them
        ClientsideFunction("ascendsim", "viewsArrived"),
        Output("matrices-graph", "figure", allow_duplicate=True),
        Input("sys-device", "children"),
        prevent_initial_call=True,
    )
    app.clientside_callback(
        ClientsideFunction("ascendsim", "zoomGate"),
        Output("tl-zoom", "data"),
        Input("timeline-graph", "relayoutData"),
        prevent_initial_call=True,
    )
    app.clientside_callback(
        "function (pick, cores) { return (pick && cores && cores.indexOf(pick.core) >= 0) ? pick.core"
        " : window.dash_clientside.no_update; }",
        Output("core-select", "value", allow_duplicate=True),
        Input("core-pick", "data"),
        State("core-select", "options"),
        prevent_initial_call=True,
    )


BP_FIELDS = ("kind", "core", "src", "mark")


def _kept_bp(bp) -> dict | None:
    """A breakpoint the page kept, as this callback wrote it (its fields: text or nothing); None for anything else."""
    if not isinstance(bp, dict):
        return None
    kept = {k: bp.get(k) for k in BP_FIELDS}
    return kept if all(v is None or (isinstance(v, str) and len(v) <= 300) for v in kept.values()) else None


def _names(value) -> list[str]:
    """A checklist's values a page sent (core names): the strings in it; anything else is none."""
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _integer(value) -> int:
    """A number a page sent (a step, a window's first or count) as an int; PreventUpdate for what is none
    (``"x"``, NaN, a list): a page's state the server cannot draw."""
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise PreventUpdate from None


def _step_of(value, loaded) -> int:
    """The step a page sent (empty: the first) as a step of ``loaded``'s run; PreventUpdate for anything else."""
    step = _integer(value or 0)
    if not 0 <= step < len(loaded.replay):
        raise PreventUpdate
    return step


def _bp_list(items: list[dict], lang: str):
    if not items:
        return msg("web.bp_none", lang)
    out = []
    for i, bp in enumerate(items):
        text = " ".join(f"{msg(f'web.bp_field.{k}', lang)}={v}" for k, v in bp.items() if v is not None)
        remove = html.Button("x", id={"type": "bp-del", "i": i}, title=msg("web.bp_remove", lang))
        out.append(html.Span([text, remove], className="bp"))
    return out


__all__ = ("Callbacks", "register")
