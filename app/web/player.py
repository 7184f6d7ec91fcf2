"""The player's callbacks: the server loads a run and sends windows of frames; the browser steps.

Server side (one round trip per run, per window of steps, per click that needs the run): the run's
description and its language-dependent views; a window of frames with the timeline and pipeline
around it; jumps to the next event of a kind; breakpoints; a slot's numbers; timeline zoom.
Browser side (``assets/player.js``, no round trip): the step (buttons, keys, slider, play, stopping at
breakpoints), drawing a step from the window, and asking for the next window near its edge.
"""

from __future__ import annotations

import time

from dash import ALL, ClientsideFunction, Input, Output, State, ctx, html, no_update
from dash.exceptions import PreventUpdate

from app.present import views
from app.present.messages import known_lang
from app.present.messages import t as msg

from . import panels, render
from .layout import VIEWS
from .playground import note_text
from .runs import RunRequestError, Runs, breakpoints_of


def register(app, runs: Runs) -> None:
    # -- a run: its description (language-free) ----------------------------------------------------------
    @app.callback(
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
    )
    def load_run(run, lang, old):
        if not run:
            raise PreventUpdate
        try:
            loaded = runs.load(run)
        except RunRequestError as exc:
            return (no_update,) * 7 + (str(exc),)
        if old and old.get("key") == loaded.key:
            raise PreventUpdate
        meta = render.meta(loaded)
        cores = meta["cores"]
        first = cores[:1]
        status = run_status(loaded, known_lang(lang))
        return meta, max(1, meta["n"] - 1), cores, (first[0] if first else None), cores, cores, first, status

    @app.callback(
        Output("player-status", "children", allow_duplicate=True),
        Input("player-lang", "data"),
        State("run", "data"),
        State("meta", "data"),
        prevent_initial_call=True,
    )
    def status_in(lang, run, meta):
        """The status line again in the language switched to (the run it describes is already loaded)."""
        if not run or not meta:
            raise PreventUpdate
        try:
            loaded = runs.load(run)
        except RunRequestError:
            raise PreventUpdate from None
        if loaded.key != meta.get("key"):
            raise PreventUpdate
        return run_status(loaded, known_lang(lang))

    # -- a run: the views that depend on the language ----------------------------------------------------------
    @app.callback(
        Output("sys-device", "children"),
        Output("metrics-body", "children"),
        Output("matrices-graph", "figure"),
        Output("mx-note", "children"),
        Output("matrices-graph", "style"),
        Input("meta", "data"),
        Input("player-lang", "data"),
        State("run", "data"),
    )
    def run_views(meta, lang, run):
        if not meta or not run:
            raise PreventUpdate
        lang = known_lang(lang)
        loaded = runs.load(run)
        sys = panels.system_panel(views.device_view(loaded.replay, lang), lang)
        metrics = panels.metrics_panel(views.metrics_view(loaded.replay, lang), lang, tryable="lesson" not in run)
        figure, note = render.matrices(loaded, lang)
        style = {} if loaded.outline["tensors"] else {"display": "none"}
        return sys, metrics, figure, note, style

    # -- a window of frames --------------------------------------------------------------------------------
    @app.callback(
        Output("window", "data"),
        Output("window-span", "data"),
        Output("pipeline-graph", "figure"),
        Output("timeline-graph", "figure"),
        Input("window-request", "data"),
        State("run", "data"),
        State("tl-expand", "value"),
        State("tl-follow", "value"),
    )
    def fetch_window(req, run, expand, follow):
        if not req or not run:
            raise PreventUpdate
        loaded = runs.load(run)
        if req.get("run") != loaded.key:
            raise PreventUpdate
        lang = known_lang(req.get("lang"))
        try:
            bps = breakpoints_of(req.get("bps"), loaded)
        except RunRequestError:
            bps = ()
        first, count = int(req.get("first", 0)), max(1, min(int(req.get("count", 1)), render.WINDOW * 3))
        core = req.get("core")
        key = (first, count, core, lang, bps)
        w = loaded.window(
            key, lambda: runs.prepared(loaded, key) or render.window(loaded, first, count, core, lang, bps)
        )
        out = {**w, "sig": req.get("sig")}
        last = w["first"] + w["count"] - 1
        at = min(max(int(req.get("step") or w["first"]), w["first"]), last)
        pipeline = render.pipeline(loaded, last, w["core"], lang, at)
        timeline = no_update
        if follow:
            span = render.window_span(w, loaded.outline["end_us"])
            timeline = render.timeline(loaded, at, lang, span, expand or [])
        return out, {"run": w["run"], "times": [w["times"][0], w["times"][-1]]}, pipeline, timeline

    # -- the timeline: zoom, whole run, expanded cores ---------------------------------------------------------
    @app.callback(
        Output("timeline-graph", "figure", allow_duplicate=True),
        Output("tl-follow", "value"),
        Input("tl-zoom", "data"),
        Input("tl-whole", "n_clicks"),
        Input("tl-expand", "value"),
        State("run", "data"),
        State("step", "data"),
        State("lang-page", "data"),
        State("tl-follow", "value"),
        State("window-span", "data"),  # the window's run and time span, not its frames (megabytes on a big run)
        prevent_initial_call=True,
    )
    def zoom(relayout, _whole, expand, run, step, lang, follow, win):
        if not run:
            raise PreventUpdate
        loaded = runs.load(run)
        step = int(step or 0)
        lang = known_lang(lang)
        trigger = ctx.triggered_id
        if trigger == "tl-whole":
            return render.timeline(loaded, step, lang, None, expand or []), []
        if trigger == "tl-zoom":
            relayout = relayout or {}
            if "xaxis.range[0]" in relayout and "xaxis.range[1]" in relayout:
                span = (float(relayout["xaxis.range[0]"]), float(relayout["xaxis.range[1]"]))
            elif "xaxis.range" in relayout:
                span = tuple(map(float, relayout["xaxis.range"]))
            elif relayout.get("xaxis.autorange"):
                span = None
            else:
                raise PreventUpdate
            fig = render.timeline(loaded, step, lang, span, expand or [])
            return fig, []
        if not win or win.get("run") != loaded.key:
            raise PreventUpdate  # the first window brings the timeline with it
        span = render.window_span(win, loaded.outline["end_us"]) if follow else None
        return render.timeline(loaded, step, lang, span, expand or []), no_update

    # -- jumps ---------------------------------------------------------------------------------------------
    @app.callback(
        Output("jump-target", "data"),
        Output("player-status", "children", allow_duplicate=True),
        Input("jump-prev", "n_clicks"),
        Input("jump-next", "n_clicks"),
        State("step", "data"),
        State("jump-kind", "value"),
        State("run", "data"),
        State("lang-page", "data"),
        prevent_initial_call=True,
    )
    def jump(_prev, _next, step, kind, run, lang):
        if not run or not kind:
            raise PreventUpdate
        loaded = runs.load(run)
        forward = ctx.triggered_id == "jump-next"
        from engine.trace import Kind

        if kind not in Kind.__members__:
            return no_update, f"kind must be one of {', '.join(Kind.__members__)}, got {kind!r}"
        found = loaded.replay.next_of_kind(int(step or 0), kind, forward)
        if found is None:
            return no_update, f"{kind}: -"
        return {"step": found, "at": time.time()}, ""

    # -- breakpoints ---------------------------------------------------------------------------------------
    @app.callback(
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
    )
    def breakpoints(_add, deletes, kind, core, src, mark, current, run, lang):
        current = list(current or [])
        trigger = ctx.triggered_id
        if isinstance(trigger, dict) and trigger.get("type") == "bp-del":
            if not any(deletes):
                raise PreventUpdate
            i = trigger["i"]
            current = [bp for j, bp in enumerate(current) if j != i]
        elif trigger == "bp-add":
            item = {
                "kind": kind or None,
                "core": core or None,
                "src": (src or "").strip() or None,
                "mark": mark.strip() if isinstance(mark, str) and mark.strip() else None,
            }
            if item["mark"] is None and isinstance(mark, str) and mark == "" and not any(item.values()):
                raise PreventUpdate
            try:
                if run:
                    breakpoints_of([item], runs.load(run))
            except RunRequestError as exc:
                return no_update, no_update, str(exc)
            if any(v is not None for v in item.values()) and item not in current:
                current.append(item)
        return current, _bp_list(current, known_lang(lang)), ""

    # -- a slot's numbers ------------------------------------------------------------------------------------
    @app.callback(
        Output("tile-values", "children"),
        Input("slot-click", "data"),
        State("step", "data"),
        State("run", "data"),
        State("core-select", "value"),
        State("lang-page", "data"),
        prevent_initial_call=True,
    )
    def tile_values(click, step, run, core, lang):
        if not click or not run:
            raise PreventUpdate
        loaded = runs.load(run)
        lang = known_lang(lang)
        ref = loaded.core(core)
        if ref is None:
            return html.Div(msg("web.no_core", lang), className="note")
        try:
            view = views.tile_view(
                loaded.replay, int(step or 0), ref, str(click["buf"]), int(click["q"]), int(click["s"]), 12, lang
            )
        except (KeyError, LookupError, TypeError, ValueError) as exc:
            return html.Div(str(exc), className="note")
        return panels.tile_panel(view, lang)

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
        Input("sys-device", "children"),  # the run's views arrived: draw the grid and the overlays again
        State("step", "data"),
        State("speed", "value"),
        State("playing", "data"),
        State("tl-follow", "value"),
        State("window-request", "data"),
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


def run_status(loaded, lang: str) -> str:
    """What the player says about the run it plays: which run, its events and simulated time, and what happened to
    its stored copy (damaged and recomputed, not stored)."""
    lesson = loaded.lesson
    name = msg("web.lesson_n", lang, n=lesson.number, title=lesson.title[lang]) if lesson else loaded.spec.scenario
    status = msg("web.ran", lang, scenario=name, events=f"{loaded.events:,}", us=f"{loaded.outline['end_us']:,.3f}")
    return f"{status} — {note_text(loaded.note, lang)}" if loaded.note else status


def _bp_list(items: list[dict], lang: str):
    if not items:
        return msg("web.bp_none", lang)
    out = []
    for i, bp in enumerate(items):
        text = " ".join(f"{k}={v}" for k, v in bp.items() if v is not None)
        out.append(html.Span([text, html.Button("x", id={"type": "bp-del", "i": i}, title="remove")], className="bp"))
    return out


__all__ = ("register", "run_status")
