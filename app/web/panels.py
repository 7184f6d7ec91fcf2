"""Layout builders for the views drawn as HTML: plain functions from view-model dicts to Dash components, or to
the elements of :class:`~.markup.h` for the panels a window sends as HTML text (host, core, code, C++).

The system view's host, link and streams, the core view, the code view, a tile's numbers, the
metrics and a lesson's text are built here from the dicts of :mod:`app.present.views` (and the parts
of :mod:`app.present.frames`); the server renders each distinct part once per window of steps and
the browser swaps them in as it steps. Nothing here reads a run or keeps state.
"""

from __future__ import annotations

from dash import dcc, html

from app.present.messages import t as msg
from app.present.text import readable
from app.present.vocabulary import Activity, SlotStatus

from . import figures
from .markup import Element, h


def _bytes(n: int) -> str:
    if n >= 2**20:
        return f"{n / 2**20:.1f} MiB"
    if n >= 2**10:
        return f"{n / 2**10:.1f} KiB"
    return f"{n} B"


def bar(share: float, cls: str = "", el=html):
    """A horizontal fill bar (0..1); ``el``: ``dash.html`` (a component) or :class:`~.markup.h` (HTML text)."""
    pct = max(0.0, min(1.0, share)) * 100
    return el.Div(el.Div(className="fill", style={"width": f"{pct:.1f}%"}), className=f"bar {cls}".strip())


# -- system -----------------------------------------------------------------------------------------------
def host_panel(part: dict, lang: str) -> Element:
    """The host, the link's copy engines and the streams (``app.present.views.host_view_of``)."""
    host = part["host"]
    engines = []
    for e in part["link"]["engines"]:
        what = e["task"] or msg("no_copy", lang)
        detail = f"{_bytes(e['bytes_done'])} / {_bytes(e['bytes_total'])}" if e["busy"] else ""
        engines.append(
            h.Div(
                [
                    h.Span(e["label"], className="name"),
                    h.Span(what, className="what"),
                    bar(e["progress"], el=h),
                    h.Span(detail, className="num"),
                ],
                className="engine busy" if e["busy"] else "engine",
            )
        )
    streams = []
    for st in part["streams"]:
        running = st["running"] or "-"
        streams.append(
            h.Div(
                [
                    h.Span(st["label"], className="name"),
                    h.Span(f"{msg('pending', lang)} {st['pending']}", className="num"),
                    h.Span(f"{msg('running', lang)}: {running}", className="what"),
                    h.Span(f"{msg('done', lang)} {st['done']}", className="num"),
                ],
                className="stream busy" if st["running"] else "stream",
            )
        )
    return h.Div(
        [
            h.Div(
                [h.H4(host["title"]), h.Div(host["doing"], className="doing")],
                className="box host blocked" if host["blocked"] else "box host",
            ),
            h.Div([h.H4(part["link"]["title"]), *engines], className="box link"),
            h.Div([h.H4(msg("web.streams", lang)), *streams], className="box streams"),
        ],
        className="hostlink",
    )


def system_panel(static: dict, lang: str) -> html.Div:
    """The device box: memory, the grid of cores (filled and coloured per step by the browser from the
    run's core names, a click opens a core) and a legend. ``static``: ``device_view(...)``."""
    legend = [html.Span(msg(f"activity.{a}", lang, block="n"), className=f"key {a.css}") for a in Activity]
    return html.Div(
        [
            html.H4(static["title"]),
            html.Div([html.Span(static["gm"]), html.Span(static["l2"])], className="mem"),
            html.Div(id="core-grid", className="grid"),
            html.Div([html.Span(msg("web.legend", lang) + ":"), *legend], className="legend"),
        ],
        className="box device",
    )


# -- one core -------------------------------------------------------------------------------------------------
def core_panel(part: dict | None, lang: str) -> Element:
    """One core: header, each buffer with its fill and slots (clickable), each pipe and its instruction."""
    if part is None:
        return h.Div(msg("web.no_core", lang), className="note")
    block = msg("web.block", lang, block=part["block"]) if part["block"] is not None else msg("web.no_block", lang)
    activity = Activity(part["activity"])
    header = h.Div(
        [
            h.B(part["core"]),
            h.Span(block, className="num"),
            h.Span(msg(f"activity.{activity}", lang, block=part["block"]), className=f"act {activity.css}"),
        ],
        className="corehead",
    )
    buffers = []
    for b in part["buffers"]:
        slots = []
        for sl in b["slots"]:
            name = (
                f"{sl['position']} q{sl['queue']}·{sl['slot']}"
                if sl["slot"] >= 0
                else f"{sl['position']} q{sl['queue']} TBuf"
            )
            slots.append(
                h.Button(
                    [
                        h.Span(name, className="pos"),
                        h.Span(sl["state_label"], className="state"),
                        h.Span(sl["tile"] or "-", className="tile"),
                        *_format_badge(sl, el=h),
                    ],
                    className=f"slot {SlotStatus(sl['state']).css}",
                    title=f"{_bytes(sl['length'])} @ {sl['offset']}",
                    **{"data-buf": b["name"], "data-q": sl["queue"], "data-s": sl["slot"]},
                )
            )
        used = msg("web.of", lang, used=_bytes(b["used"]), capacity=_bytes(b["capacity"]))
        buffers.append(
            h.Div(
                [
                    h.Div([h.B(b["name"]), h.Span(used, className="num"), bar(b["fill"], el=h)], className="bufhead"),
                    h.Div(slots, className="slots"),
                ],
                className="buffer",
            )
        )
    rows = []
    for p in part["pipes"]:
        rows.append(
            h.Tr(
                [
                    h.Td(p["title"]),
                    h.Td(p["instruction"] or "-", className="instr"),
                    h.Td(p["kind"] if p["busy"] else ""),
                    h.Td(f"{p['start_us']:.4f} - {p['end_us']:.4f} us" if p["busy"] else ""),
                    h.Td(p["src"] if p["busy"] else "", className="src"),
                ],
                className="busy" if p["busy"] else "",
            )
        )
    return h.Div(
        [
            header,
            h.Div(buffers or [h.Div(msg("empty_slot", lang), className="note")], className="buffers"),
            h.Div(msg("web.click_slot", lang), className="hint"),
            h.Table([h.Caption(msg("web.pipes", lang)), h.Tbody(rows)], className="pipes"),
        ],
        className="core",
    )


def _format_badge(slot: dict, el=html) -> list:
    """A slot of L1 / L0 holding one tile's fractals: its layout (NZ, ZZ, ZN) beside the tile (``el``: as
    :func:`bar`'s)."""
    fmt = slot.get("format")
    return [el.Span(fmt, className="fmt", title=slot.get("format_label", ""))] if fmt else []


def tile_panel(view: dict, lang: str) -> html.Div:
    """The real numbers in one slot (``app.present.views.tile_view``)."""
    tile = view.get("tile") or {}
    head = msg(
        "web.tile_values",
        lang,
        buffer=view["buffer"],
        queue=view["queue"],
        slot=view["slot"],
        tile=tile.get("label", "-"),
    )
    if view.get("values") is None:
        return html.Div([html.Div(head, className="tilehead"), html.Div(view.get("note", ""), className="note")])
    values = view["values"]
    corner = msg(
        "web.tile_corner",
        lang,
        rows=len(values),
        cols=len(values[0]) if values else 0,
        shape=" x ".join(map(str, view["shape"])) + f" {view['dtype']}",
    )
    rows = [html.Tr([html.Td(f"{v:.4g}") for v in row]) for row in values]
    return html.Div(
        [
            html.Div(head, className="tilehead"),
            *(fractal_grid(view["fractals"]) if view.get("fractals") else []),
            html.Div(corner, className="hint"),
            html.Table(html.Tbody(rows), className="values"),
        ],
        className="tilevalues",
    )


_ARROW = {"z": "→", "n": "↓", "": ""}


def fractal_grid(f: dict) -> list:
    """How a slot of L1 / L0 keeps its tile (``app.present.layout_views.fractal_view``): a cell per 16 x 16
    fractal where it sits in the tile, numbered and shaded by its place in memory, → or ↓ for its inner order."""
    count = max(1, max((p for row in f["cells"] for p in row), default=0) + 1)
    fr, fc = f["fractal"]
    head = html.Tr([html.Th(f"{f['rows_label']} \\ {f['cols_label']}")] + [html.Th(str(c)) for c in f["col_starts"]])
    body = []
    for r0, places, inner in zip(f["row_starts"], f["cells"], f["inner"], strict=True):
        cells = [html.Th(str(r0))]
        for c0, p, a in zip(f["col_starts"], places, inner, strict=False):
            if p < 0:
                cells.append(html.Td(""))
                continue
            shade = f"hsl({int(200 - 160 * p / count)}, 70%, {88 - int(30 * p / count)}%)"
            tip = f"[{r0}:{r0 + fr}, {c0}:{c0 + fc}]"
            cells.append(html.Td(f"{p}{_ARROW[a]}", style={"background": shade}, title=tip))
        body.append(html.Tr(cells))
    return [
        html.Div(f["format_label"], className="fractal-format"),
        html.Div(f["title"], className="hint"),
        html.Table([html.Thead(head), html.Tbody(body)], className="fractals"),
        *([html.Div(f["more"], className="hint")] if f["more"] else []),
        html.Div(f["where"], className="hint"),
        html.Div(f["legend"], className="hint"),
    ]


# -- code ------------------------------------------------------------------------------------------------------
def code_panel(view: dict) -> Element:
    """The lines around the current event's source line, that line marked (``code_view`` with context)."""
    if not view["lines"]:
        return h.Div([h.Div(view.get("file") or "", className="file"), h.Div(view.get("note", ""), className="note")])
    first = view["first_line"]
    lines = []
    for i, text in enumerate(view["lines"]):
        number = first + i
        lines.append(
            h.Div(
                [h.Span(str(number), className="ln"), h.Span(text or " ", className="tx")],
                className="line current" if number == view["line"] else "line",
            )
        )
    return h.Div([h.Div(f"{view['file']}:{view['line']}", className="file"), h.Pre(lines, className="code")])


def cpp_panel(view: dict) -> Element:
    """The C++ (Ascend C) of the current line and its neighbours, the lines that render it marked
    (:func:`app.present.cpp.view.cpp_view` with context; its notes are :func:`cpp_notes`)."""
    head = h.Div(view.get("label") or view.get("file") or "", className="file")
    if not view["lines"]:
        return h.Div([head, h.Div(view.get("note", ""), className="note")])
    cur = set(view["current"])
    lines = [  # the first C++ line of a Python statement carries its line number; light markup: a window holds many
        h.Span([h.I(str(py)), text] if py is not None else (text or " "), className="l c" if i in cur else "l")
        for i, (text, py) in enumerate(zip(view["lines"], view["py"], strict=True))
    ]
    body = [head, h.Pre(lines, className="code cpp")]
    if view.get("note"):
        body.append(h.Div(view["note"], className="note"))
    return h.Div(body)


def cpp_notes(part: dict) -> Element:
    """How CANN differs from the simulator's Python for the API calls of the current line (a frames part of its
    own: the same list serves every line that makes the same calls)."""
    if not part["notes"]:
        return h.Div()
    return h.Div(
        [h.Div(part["title"], className="cpphead"), h.Ul([h.Li(n) for n in part["notes"]])],
        className="cppnotes",
    )


def program_panel(program: dict) -> html.Div:
    """A lesson's whole program in C++ (:func:`app.present.cpp.view.lesson_program`): per file its C++, then the
    notes of how CANN differs."""
    parts = [
        html.Div(
            [html.H4(part["label"]), html.Pre("\n".join(part["lines"]), className="program")], className="programpart"
        )
        for part in program["parts"]
    ]
    notes = html.Div(
        [html.Div(program["notes_title"], className="cpphead"), html.Ul([html.Li(n) for n in program["notes"]])],
        className="cppnotes",
    )
    return html.Div(
        [
            html.H3(program["title"]),
            html.P(program["intro"]),
            html.P(program["about"], className="hint"),
            *parts,
            notes,
        ],
        id="cpp-program",
        className="view",
    )


# -- metrics -------------------------------------------------------------------------------------------------
def fmt_value(v) -> str:
    """A metric as shown (:func:`app.present.text.readable`: separators, never scientific notation)."""
    return readable(v)


def metrics_panel(view: dict, lang: str, tryable: bool = False) -> html.Div:
    """Headline numbers, busy share per pipe, the roofline, idle time by cause, findings and
    recommendations (with "try it" buttons that re-run the playground when ``tryable``)."""
    cards = [
        html.Div(
            [html.Div(fmt_value(h["value"]), className="v"), html.Div(h["label"], className="k")], className="card"
        )
        for h in view["headline"]
    ]
    parts = [html.Div(cards, className="cards")]
    if any(view["pipe_ratios"].values()):
        fig = figures.pipe_ratio_figure(view["pipe_ratios"], msg("web.pipe_ratios", lang), view["pipe_ratio_names"])
        parts.append(dcc.Graph(figure=fig, config={"displayModeBar": False}, className="small-graph"))
    if any(k["achieved_tflops"] for k in view["roofline"]):
        labels = figures.roofline_labels(lang)  # axis titles, the roofs' names and the hover text in ``lang``
        parts.append(html.H5(msg("web.roofline", lang)))
        parts.append(
            dcc.Graph(figure=figures.roofline_figure(view["roofline"], labels), config={"displayModeBar": False})
        )
    gaps = [html.Tr([html.Td(k), html.Td(fmt_value(v), className="num")]) for k, v in view["gaps"].items() if v]
    if gaps:
        parts.append(html.Table([html.Caption(msg("web.gaps", lang)), html.Tbody(gaps)], className="gaps"))
    parts.append(html.H5(view["findings_title"]))
    if view["findings"]:
        parts.append(
            html.Ul(
                [
                    html.Li(f"{f['label']}: {f['message']}" + (f" ({f['src']})" if f["src"] else ""))
                    for f in view["findings"]
                ],
                className="findings",
            )
        )
    else:
        parts.append(html.Div(view["no_findings"], className="note"))
    parts.append(html.H5(view["recommendations_title"]))
    recs = []
    for i, r in enumerate(view["recommendations"]):
        evidence = []
        for e in r["evidence"]:
            evidence += [", "] if evidence else []
            # the msprof / report id on hover (an id, not a word to translate)
            evidence.append(html.Span(f"{e['name']}: {fmt_value(e['value'])}", title=e["id"], className="metric-id"))
        items = [
            html.B(r["title"]),
            html.Div(r["advice"], className="advice"),
            html.Div([*evidence, html.Span(f" ({r['threshold']})", className="threshold")], className="evidence"),
        ]
        if tryable and r["change"]:
            change = ", ".join(f"{k}={v}" for k, v in r["change"].items())
            items.append(
                html.Button(f"{msg('web.try', lang)}: {change}", id={"type": "try-rec", "i": i}, className="try")
            )
        recs.append(html.Li(items))
    parts.append(
        html.Ul(recs, className="recs") if recs else html.Div(msg("web.no_recommendations", lang), className="note")
    )
    return html.Div(parts, className="metrics")


__all__ = ("code_panel", "core_panel", "fmt_value", "host_panel", "metrics_panel", "system_panel", "tile_panel")
