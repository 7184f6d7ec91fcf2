"""Figure builders: plotly figures (plain dicts) from the presenter's view-models, one per chart.

Each function takes a view-model of :mod:`app.present.views` (or a part of one) and returns a figure
dict ``{"data": [...], "layout": {...}}`` that ``dcc.Graph`` draws; nothing here reads a run. What a
browser changes while stepping is kept out of the data: the tiles outlined on the matrices are
``layout.shapes`` (replaced by a clientside ``Patch``), and the cursor of the timeline and the
pipeline is a line the browser lays over the chart (``layout.meta.cursor_us`` says where it starts).
The matrices figure and its axes are :mod:`.figures_matrices`' (listed here with the others).
"""

from __future__ import annotations

import math

from app.present.messages import t as msg
from app.present.text import readable

from .figures_matrices import (
    CORE_COLOURS,
    FONT,
    TICK_PX,
    TITLE_PX,
    XLABELS_PX,
    landing_grid,
    matrices_figure,
    matrix_axes,
    text_px,
    tile_shapes,
)

KIND_COLOURS = {
    "CALL": "#4c78a8",
    "WAIT": "#c7c7c7",
    "COPY": "#f58518",
    "KERNEL": "#54a24b",
    "MARK": "#9d755d",
    "MOVE": "#e45756",
    "COMPUTE": "#72b7b2",
    "FLAG_SET": "#b279a2",
    "FLAG_WAIT": "#ff9da6",
    "BARRIER": "#bab0ac",
    "BLOCK": "#eeca3b",
    "ERROR": "#d62728",
    "HOST_WORK": "#9467bd",
    "BUFFER": "#8c8c8c",
}
STAGE_COLOURS = {
    "MTE2": "#e45756",
    "MTE1": "#f58518",
    "CUBE": "#72b7b2",
    "VECTOR": "#54a24b",
    "FIXP": "#4c78a8",
    "MTE3": "#b279a2",
}
WEBGL_BARS = 1500  # above this many bars the timeline draws with WebGL (scattergl)
LANE_PX = 22


def _left_margin(labels: list[str], title: bool = False) -> int:
    """Room left of a chart for its y tick ``labels`` (and the axis title beside them when ``title``). Computed
    here rather than by plotly's ``automargin``, which draws a chart twice, the second time with the margin it
    measured the first time (the timeline 93 -> 50 ms in Chromium, the busy-share bars 58 -> 35 ms)."""
    return round(max([text_px(text) for text in labels] or [0.0]) + TICK_PX + 6 + (TITLE_PX if title else 0))


def _base_layout(height: int, **extra) -> dict:
    layout = {
        "height": height,
        "margin": {"l": 8, "r": 8, "t": 8, "b": 32},
        "font": FONT,
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#fafafa",
        "showlegend": False,
        "hovermode": "closest",
    }
    layout.update(extra)
    return layout


def empty_figure(height: int = 140, note: str = "") -> dict:
    """A blank chart (before a run is loaded), or one that says why it has nothing to draw (``note``).
    Its x range lies before time 0, so the browser's cursor never shows over it."""
    layout = _base_layout(
        height, xaxis={"visible": False, "range": [-2, -1]}, yaxis={"visible": False}, plot_bgcolor="#ffffff"
    )
    if note:
        layout["annotations"] = [
            {"text": note, "xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5, "showarrow": False}
        ]
    return {"data": [], "layout": layout}


# -- timeline ---------------------------------------------------------------------------------------------
def _hover(bar: dict, labels: dict) -> str:
    dur = bar["end_us"] - bar["start_us"]
    parts = [f"<b>{bar['name']}</b> ({bar['kind']})", f"{labels['duration']}: {dur:.4f} us"]
    parts.append(f"{bar['start_us']:.4f} - {bar['end_us']:.4f} us")
    if bar.get("bytes"):
        parts.append(f"{labels['bytes']}: {bar['bytes']:,}")
    if bar.get("flops"):
        parts.append(f"{labels['flops']}: {bar['flops']:,}")
    if bar.get("src"):
        parts.append(f"{labels['src']}: {bar['src']}")
    return "<br>".join(parts)


def timeline_figure(view: dict, labels: dict, x_range: list | None = None) -> dict:
    """Lanes top to bottom, one bar per event coloured by kind (busy-share buckets for aggregated
    lanes); WebGL above :data:`WEBGL_BARS` bars; ``layout.meta.cursor_us`` the current step's time.

    ``labels``: ``duration``, ``bytes``, ``flops``, ``src``, ``busy``, ``time`` in the page's language.
    """
    lanes = view["lanes"]
    names = [lane["label"] for lane in lanes]
    total = sum(len(lane.get("bars", ())) for lane in lanes)
    webgl = total > WEBGL_BARS
    by_kind: dict[str, dict] = {}
    for lane in lanes:
        y = lane["label"]
        for bar in lane.get("bars", ()):
            d = by_kind.setdefault(bar["kind"], {"x0": [], "x1": [], "y": [], "text": []})
            d["x0"].append(bar["start_us"])
            d["x1"].append(bar["end_us"])
            d["y"].append(y)
            d["text"].append(_hover(bar, labels))
    data = []
    for kind, d in by_kind.items():
        colour = KIND_COLOURS.get(kind, "#888888")
        if webgl:
            xs, ys, text = [], [], []
            for x0, x1, y, h in zip(d["x0"], d["x1"], d["y"], d["text"], strict=True):
                xs += [x0, x1, None]
                ys += [y, y, None]
                text += [h, h, None]
            data.append(
                {
                    "type": "scattergl",
                    "mode": "lines",
                    "x": xs,
                    "y": ys,
                    "text": text,
                    "hoverinfo": "text",
                    "line": {"color": colour, "width": 14},
                    "name": kind,
                }
            )
        else:
            data.append(
                {
                    "type": "bar",
                    "orientation": "h",
                    "base": d["x0"],
                    "x": [max(b - a, 1e-6) for a, b in zip(d["x0"], d["x1"], strict=True)],
                    "y": d["y"],
                    "hovertext": d["text"],
                    "hoverinfo": "text",
                    "marker": {"color": colour, "line": {"width": 0}},
                    "name": kind,
                }
            )
    buckets = {"base": [], "x": [], "y": [], "opacity": [], "text": []}
    for lane in lanes:
        for b in lane.get("buckets", ()):
            buckets["base"].append(b["start_us"])
            buckets["x"].append(b["end_us"] - b["start_us"])
            buckets["y"].append(lane["label"])
            buckets["opacity"].append(max(0.08, b["busy"]))
            buckets["text"].append(f"{lane['note']}<br>{labels['busy']}: {100 * b['busy']:.0f} %")
    if buckets["x"]:
        data.append(
            {
                "type": "bar",
                "orientation": "h",
                "base": buckets["base"],
                "x": buckets["x"],
                "y": buckets["y"],
                "hovertext": buckets["text"],
                "hoverinfo": "text",
                "marker": {"color": "#555555", "opacity": buckets["opacity"], "line": {"width": 0}},
                "name": labels["busy"],
            }
        )
    x_range = x_range or [view["t0_us"], view["t1_us"]]
    layout = _base_layout(
        max(160, 50 + LANE_PX * len(lanes)),
        barmode="overlay",
        bargap=0.25,
        xaxis={"title": {"text": labels["time"]}, "range": list(x_range), "zeroline": False},
        yaxis={
            "categoryorder": "array",
            "categoryarray": list(reversed(names)),
            "type": "category",
            "range": [-0.5, len(names) - 0.5],
            "fixedrange": True,
        },
        shapes=[],
        meta={"cursor_us": view["cursor_us"]},
        uirevision="timeline",
        dragmode="zoom",
    )
    layout["margin"] = {"l": _left_margin(names), "r": 8, "t": 8, "b": 36}
    return {"data": data, "layout": layout}


# -- pipeline ----------------------------------------------------------------------------------------------
def pipeline_figure(view: dict, time_label: str) -> dict:
    """Tiles top to bottom, one bar per stage that worked on the tile (first start to last end);
    ``layout.meta.cursor_us`` the current step's time (the browser draws the cursor and veils the future)."""
    tiles = view["tiles"]
    labels = [row["tile"] for row in tiles]
    data = []
    for st in view["stages"]:
        stage = st["stage"]
        base, x, y, text = [], [], [], []
        for row in tiles:
            cell = row["cells"].get(stage)
            if cell is None:
                continue
            base.append(cell["start_us"])
            x.append(max(cell["end_us"] - cell["start_us"], 1e-6))
            y.append(row["tile"])
            text.append(
                f"{st['label']}<br>{row['tile']}<br>{cell['start_us']:.4f} - {cell['end_us']:.4f} us ({cell['count']})"
            )
        data.append(
            {
                "type": "bar",
                "orientation": "h",
                "base": base,
                "x": x,
                "y": y,
                "name": st["label"],
                "hovertext": text,
                "hoverinfo": "text",
                "offsetgroup": stage,
                "marker": {"color": STAGE_COLOURS.get(stage, "#888888")},
            }
        )
    t0, t1 = view["t0_us"], max(view["t1_us"], view["t0_us"] + 1e-6)
    pad = (t1 - t0) * 0.02
    layout = _base_layout(
        max(180, 70 + 20 * len(tiles)),
        barmode="group",
        bargap=0.15,
        showlegend=True,
        legend={"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom"},  # above: the axis title is below
        xaxis={"title": {"text": time_label}, "range": [t0 - pad, t1 + pad], "zeroline": False},
        yaxis={
            "categoryorder": "array",
            "categoryarray": list(reversed(labels)),
            "type": "category",
        },
        meta={"cursor_us": view["cursor_us"]},
    )
    layout["margin"] = {"l": _left_margin(labels), "r": 8, "t": 34, "b": 40}
    return {"data": data, "layout": layout}


# -- metrics -----------------------------------------------------------------------------------------------
def pipe_ratio_figure(ratios: dict, title: str, words: dict | None = None) -> dict:
    """One bar per msprof pipe ratio (busy share of the kernel's time), named in words (``words``: msprof id ->
    its name in the page's language; the id shows on hover)."""
    ids = [k for k, v in ratios.items() if v]
    names = [(words or {}).get(k, k) for k in ids]
    values = [round(100 * ratios[k], 2) for k in ids]
    layout = _base_layout(
        max(120, 40 + 18 * len(names)),
        xaxis={"title": {"text": title}, "range": [0, 100]},
        yaxis={"categoryorder": "array", "categoryarray": list(reversed(names))},
    )
    layout["margin"]["l"] = _left_margin(names)
    bar = {"type": "bar", "orientation": "h", "x": values, "y": names, "marker": {"color": "#4c78a8"}}
    bar.update(text=[f"{v:.1f} %" for v in values], textposition="auto", customdata=ids)
    bar["hovertemplate"] = "%{y} · %{customdata}: %{x} %<extra></extra>"
    return {"data": [bar], "layout": layout}


ROOF_NAMES = ("compute", "hbm", "l2", "core_paths")  # RooflineRow.bound_by
ROOFLINE_PLOT_PX = 460  # px: about how wide the roofline's plot area is drawn (the metrics panel)
PEAK_UNITS = ("cube", "vector", "op")  # the unit a row's compute roof belongs to, when the row says (``unit``)


def roofline_labels(lang: str) -> dict:
    """What :func:`roofline_figure` writes, in ``lang``: axis titles, the roofs' names and the hover text."""
    out = {"intensity": msg("web.intensity", lang), "tflops": msg("web.tflops", lang)}
    for key in ("peak", "hbm", "hover", "at", "point", *(f"peak.{u}" for u in PEAK_UNITS)):
        out[key] = msg(f"fig.roof_{key}", lang)
    out.update({f"roof.{name}": msg(f"fig.roof.{name}", lang) for name in ROOF_NAMES})
    return out


def _intensity(kernel: dict) -> float:
    """Flops per byte of HBM traffic (the HBM roof's x axis), else per byte of GM traffic."""
    return kernel["hbm_intensity_flops_per_byte"] or kernel["intensity_flops_per_byte"] or 0.0


def log_ticks(lo: float, hi: float) -> tuple[list[float], list[str]]:
    """Ticks of a log axis from ``lo`` to ``hi`` (data values): 1, 2 and 5 of each decade, or the decades
    alone over more than three of them; each labelled as people read numbers (``0.2``, ``50``, ``1,000``)."""
    k0, k1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    steps = (1,) if k1 - k0 > 3 else (1, 2, 5)
    values = [float(f"{m}e{k}") for k in range(k0, k1 + 1) for m in steps if lo <= float(f"{m}e{k}") <= hi]
    return values, [readable(v) for v in values]


def _beside(x: float, lo: float, hi: float) -> str:
    """Where a point's name goes on a log x axis from ``lo`` to ``hi``: under it, away from the nearer edge."""
    at = math.log10(x / lo) / math.log10(hi / lo)
    return "bottom right" if at < 0.3 else "bottom left" if at > 0.7 else "bottom center"


def roofline_figure(roofline: list[dict], labels: dict) -> dict:
    """Each kernel's achieved TFLOPS at its arithmetic intensity under its roofs (log-log): the compute
    peak and the HBM slope drawn and named once each (``labels`` of :func:`roofline_labels`), the row's
    other roofs (L2, the cores' paths) as a dash at its intensity, the binding one named. The axes'
    ranges are set (log10 units) so that every point and every roof lies inside them, with room for the
    roofs' names above them; the ticks are :func:`log_ticks`."""
    rows = [k for k in roofline if _intensity(k) > 0 and k["achieved_tflops"] > 0]
    xs = [_intensity(k) for k in rows] or [1.0]
    ys = [k["achieved_tflops"] for k in rows] or [1.0]
    roofs, seen = [], set()
    for k in rows:
        peak, hbm = k["roofs"]["compute_tflops"], k["roofs"]["hbm_tflops"]
        bw = hbm / _intensity(k) if k["hbm_intensity_flops_per_byte"] and hbm else None  # TB/s
        key = (peak, round(bw, 6) if bw else None)
        if peak > 0 and key not in seen:
            seen.add(key)
            roofs.append((peak, bw, k.get("unit")))
    ridges = [peak / bw for peak, bw, _ in roofs if bw]
    lo, hi = min(xs + ridges) / 4, max(xs + ridges) * 4
    others = [v for k in rows for name, v in k["roofs"].items() if v > 0 and name not in ("hbm_tflops",)]
    top = max([peak for peak, _, _ in roofs] + ys + others) * 3
    bottom = min(ys + [peak for peak, _, _ in roofs]) / 3
    data = []
    for peak, bw, unit in roofs:
        name = labels[f"peak.{unit}"] if unit in PEAK_UNITS else labels["peak"]
        line = {"color": "#666666", "dash": "dot", "width": 1.5}
        if bw:
            ridge = peak / bw
            start = max(lo, bottom / bw)
            # its name on the slope where no kernel is (a kernel's roof dashes are drawn at its intensity), far
            # enough from the left edge for the name (written left of the spot) to fit inside the chart
            text = labels["hbm"].format(tbps=readable(float(f"{bw:.3g}")))
            room = lo * (hi / lo) ** ((text_px(text) + 12) / ROOFLINE_PLOT_PX)
            spots = [start * (ridge / start) ** f for f in (0.5, 0.35, 0.65, 0.2, 0.8)]
            spots = [v for v in spots if v >= room] or [max(spots)]
            middle = max(spots, key=lambda v: min(abs(math.log10(v / x)) for x in xs))
            data.append(
                {
                    "type": "scatter",
                    "mode": "lines+text",
                    "x": [lo, middle, ridge],
                    "y": [bw * lo, bw * middle, peak],
                    "text": ["", text, ""],
                    "textposition": "top left",
                    "line": line,
                    "hoverinfo": "skip",
                }
            )
        data.append(
            {
                "type": "scatter",
                "mode": "lines+text",
                "x": [peak / bw if bw else lo, hi],
                "y": [peak, peak],
                "text": ["", name.format(tflops=readable(peak))],
                "textposition": "top left",
                "line": line,
                "hoverinfo": "skip",
            }
        )
    for k in rows:
        x, bound = _intensity(k), labels[f"roof.{k['bound_by']}"]
        for roof, value in k["roofs"].items():
            name = roof.removesuffix("_tflops")
            if name in ("compute", "hbm") or value <= 0:
                continue
            binding = name == k["bound_by"]  # the binding roof's dash in the point's colour
            data.append(
                {
                    "type": "scatter",
                    "mode": "markers",
                    "x": [x],
                    "y": [value],
                    "marker": {
                        "symbol": "line-ew-open",
                        "size": 22,
                        "color": "#d62728" if binding else "#888888",  # an open symbol is drawn in its colour
                        "line": {"width": 2},
                    },
                    "hovertext": [labels["at"].format(roof=labels[f"roof.{name}"], tflops=readable(value))],
                    "hoverinfo": "text",
                }
            )
        percent = readable(k["percent_of_roof"])
        hover = labels["hover"].format(
            kernel=k["kernel"],
            tflops=readable(k["achieved_tflops"]),
            intensity=readable(x),
            bound=bound,
            percent=percent,
        )
        data.append(
            {
                "type": "scatter",
                "mode": "markers+text",
                "x": [x],
                "y": [k["achieved_tflops"]],
                "text": [labels["point"].format(kernel=k["kernel"], bound=bound, percent=percent)],
                "textposition": _beside(x, lo, hi),
                "marker": {"size": 10, "color": "#d62728"},
                "hovertext": [hover],
                "hoverinfo": "text",
            }
        )
    xticks, yticks = log_ticks(lo, hi), log_ticks(bottom, top)
    axis = {"type": "log", "tickmode": "array", "showline": True, "linecolor": "#bbbbbb"}
    layout = _base_layout(
        260,
        xaxis={
            **axis,
            "range": [math.log10(lo), math.log10(hi)],
            "tickvals": xticks[0],
            "ticktext": xticks[1],
            "title": {"text": labels["intensity"]},
        },
        yaxis={
            **axis,
            "range": [math.log10(bottom), math.log10(top)],
            "tickvals": yticks[0],
            "ticktext": yticks[1],
            "title": {"text": labels["tflops"]},
        },
    )
    # under the plot: a row of tick labels and the axis title's line
    layout["margin"] = {"l": _left_margin(yticks[1], title=True), "r": 8, "t": 8, "b": XLABELS_PX + TITLE_PX + 8}
    return {"data": data, "layout": layout}


def compare_bars_figure(rows: list[tuple[str, float | None, float | None]], names: tuple[str, str]) -> dict:
    """Two runs' values of the same metrics side by side (``rows``: name, A, B)."""
    keys = [r[0] for r in rows]
    data = [
        {
            "type": "bar",
            "orientation": "h",
            "name": names[0],
            "y": keys,
            "x": [r[1] for r in rows],
            "marker": {"color": "#4c78a8"},
        },
        {
            "type": "bar",
            "orientation": "h",
            "name": names[1],
            "y": keys,
            "x": [r[2] for r in rows],
            "marker": {"color": "#f58518"},
        },
    ]
    layout = _base_layout(
        max(160, 50 + 30 * len(rows)),
        barmode="group",
        showlegend=True,
        yaxis={"categoryorder": "array", "categoryarray": list(reversed(keys))},
    )
    layout["margin"]["l"] = _left_margin(keys)
    return {"data": data, "layout": layout}


__all__ = (
    "CORE_COLOURS",
    "KIND_COLOURS",
    "compare_bars_figure",
    "empty_figure",
    "landing_grid",
    "log_ticks",
    "matrices_figure",
    "matrix_axes",
    "pipe_ratio_figure",
    "pipeline_figure",
    "roofline_figure",
    "roofline_labels",
    "tile_shapes",
    "timeline_figure",
)
