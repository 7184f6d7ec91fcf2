"""Figure builders: plotly figures (plain dicts) from the presenter's view-models, one per chart.

Each function takes a view-model of :mod:`app.present.views` (or a part of one) and returns a figure
dict ``{"data": [...], "layout": {...}}`` that ``dcc.Graph`` draws; nothing here reads a run. What a
browser changes while stepping is kept out of the data: the tiles outlined on the matrices are
``layout.shapes`` (replaced by a clientside ``Patch``), and the cursor of the timeline and the
pipeline is a line the browser lays over the chart (``layout.meta.cursor_us`` says where it starts).
"""

from __future__ import annotations

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
# one colour per core (cycled): tile outlines and the output tiles each core wrote
CORE_COLOURS = (
    "#e6194b",
    "#3cb44b",
    "#4363d8",
    "#f58231",
    "#911eb4",
    "#46f0f0",
    "#f032e6",
    "#bcf60c",
    "#008080",
    "#9a6324",
    "#800000",
    "#808000",
    "#000075",
    "#808080",
    "#fabebe",
    "#ffd8b1",
    "#aaffc3",
    "#e6beff",
    "#ffe119",
    "#000000",
    "#7f7fff",
    "#ff7f7f",
    "#7fbf7f",
    "#bf7fbf",
)
WEBGL_BARS = 1500  # above this many bars the timeline draws with WebGL (scattergl)
LANE_PX = 22
_FONT = {"family": "system-ui, sans-serif", "size": 11}


def _base_layout(height: int, **extra) -> dict:
    layout = {
        "height": height,
        "margin": {"l": 8, "r": 8, "t": 8, "b": 32},
        "font": _FONT,
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
            "automargin": True,
            "fixedrange": True,
        },
        shapes=[],
        meta={"cursor_us": view["cursor_us"]},
        uirevision="timeline",
        dragmode="zoom",
    )
    layout["margin"] = {"l": 8, "r": 8, "t": 8, "b": 36}
    return {"data": data, "layout": layout}


# -- matrices ---------------------------------------------------------------------------------------------
def matrix_axes(shapes: list) -> list[dict]:
    """Per tensor (``(rows, cols)``): its subplot's axes, its heatmap trace, the cell size of the
    (downsampled) heatmap and the x-domain; what the browser needs to outline tiles on it."""
    n = max(1, len(shapes))
    gap = 0.04
    width = (1 - gap * (n - 1)) / n
    out = []
    for i, (rows, cols) in enumerate(shapes):
        suffix = "" if i == 0 else str(i + 1)
        x0 = i * (width + gap)
        out.append(
            {
                "x": f"x{suffix}",
                "y": f"y{suffix}",
                "trace": i,
                "cell": _cells(rows, cols),
                "rows": rows,
                "cols": cols,
                "domain": [round(x0, 6), round(x0 + width, 6)],
            }
        )
    return out


def matrices_figure(view: dict) -> dict:
    """A, B and C side by side as heatmaps in element coordinates (row 0 at the top): inputs show
    their values, an output shows which core wrote each tile (empty until it lands). Tile outlines
    are ``layout.shapes`` (drawn by the browser per step; see :func:`tile_shapes`)."""
    tensors = view["tensors"]
    axes = matrix_axes([tuple(t["shape"]) for t in tensors])
    data, layout_axes, annotations = [], {}, []
    for tensor, ax in zip(tensors, axes, strict=True):
        rows, cols = tensor["shape"]
        suffix = ax["x"][1:]
        layout_axes[f"xaxis{suffix}"] = {
            "domain": ax["domain"],
            "range": [0, cols],
            "anchor": ax["y"],
            "showgrid": False,
            "zeroline": False,
        }
        layout_axes[f"yaxis{suffix}"] = {
            "domain": [0, 0.9],
            "range": [rows, 0],
            "anchor": ax["x"],
            "showgrid": False,
            "zeroline": False,
        }
        fr, fc = ax["cell"]
        gr, gc = -(-rows // fr), -(-cols // fc)
        if tensor["role"] == "output":
            colorscale = [[j / max(1, len(CORE_COLOURS) - 1), c] for j, c in enumerate(CORE_COLOURS)]
            trace = {"z": [[None] * gc for _ in range(gr)], "zmin": 0, "zmax": len(CORE_COLOURS) - 1}
            trace["colorscale"] = colorscale
        elif tensor["heat"] is not None:
            trace = {"z": tensor["heat"], "colorscale": "RdBu", "reversescale": True}
        else:
            trace = {"z": [[0] * gc for _ in range(gr)], "colorscale": [[0, "#eeeeee"], [1, "#eeeeee"]]}
        data.append(
            {
                "type": "heatmap",
                "x0": fc / 2,
                "dx": fc,
                "y0": fr / 2,
                "dy": fr,
                "xaxis": ax["x"],
                "yaxis": ax["y"],
                "showscale": False,
                "hoverinfo": "skip" if tensor["role"] == "output" else "x+y+z",
                **trace,
            }
        )
        annotations.append(
            {
                "text": f"<b>{tensor['name']}</b> ({tensor['role_label']}) {rows} x {cols}",
                "xref": "paper",
                "yref": "paper",
                "x": (ax["domain"][0] + ax["domain"][1]) / 2,
                "y": 1.0,
                "showarrow": False,
                "xanchor": "center",
                "yanchor": "top",
            }
        )
    layout = _base_layout(300, annotations=annotations, shapes=[], margin={"l": 30, "r": 8, "t": 8, "b": 20})
    layout.update(layout_axes)
    return {"data": data, "layout": layout}


def _cells(rows: int, cols: int, cells: int = 48) -> list[int]:
    return [max(1, -(-rows // cells)), max(1, -(-cols // cells))]


def tile_shapes(tiles: list, axes: list, buffer_dash: dict | None = None) -> list[dict]:
    """Rectangles for ``[tensor, core, buffer, row, col, rows, cols]`` tiles on :func:`matrices_figure`'s axes."""
    out = []
    dash = buffer_dash or {}
    for tensor, core, buffer, row, col, rows, cols in tiles:
        ax = axes[tensor]
        out.append(
            {
                "type": "rect",
                "xref": ax["x"],
                "yref": ax["y"],
                "x0": col,
                "x1": col + cols,
                "y0": row,
                "y1": row + rows,
                "line": {
                    "color": CORE_COLOURS[core % len(CORE_COLOURS)],
                    "width": 2,
                    "dash": dash.get(buffer, "solid"),
                },
            }
        )
    return out


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
        legend={"orientation": "h", "y": -0.15},
        xaxis={"title": {"text": time_label}, "range": [t0 - pad, t1 + pad], "zeroline": False},
        yaxis={
            "categoryorder": "array",
            "categoryarray": list(reversed(labels)),
            "type": "category",
            "automargin": True,
        },
        meta={"cursor_us": view["cursor_us"]},
    )
    layout["margin"] = {"l": 8, "r": 8, "t": 8, "b": 60}
    return {"data": data, "layout": layout}


# -- metrics -----------------------------------------------------------------------------------------------
def pipe_ratio_figure(ratios: dict, title: str) -> dict:
    """One bar per msprof-named pipe ratio (busy share of the kernel's time)."""
    names = [k for k, v in ratios.items() if v]
    values = [round(100 * ratios[k], 2) for k in names]
    layout = _base_layout(
        max(120, 40 + 18 * len(names)),
        xaxis={"title": {"text": title}, "range": [0, 100]},
        yaxis={"automargin": True, "categoryorder": "array", "categoryarray": list(reversed(names))},
    )
    bar = {"type": "bar", "orientation": "h", "x": values, "y": names, "marker": {"color": "#4c78a8"}}
    bar.update(text=[f"{v:.1f} %" for v in values], textposition="auto", hoverinfo="x+y")
    return {"data": [bar], "layout": layout}


def _intensity(kernel: dict) -> float:
    """Flops per byte of HBM traffic (the HBM roof's x axis), else per byte of GM traffic."""
    return kernel["hbm_intensity_flops_per_byte"] or kernel["intensity_flops_per_byte"] or 0.0


def roofline_figure(roofline: list[dict], labels: dict) -> dict:
    """Each kernel's achieved TFLOPS at its arithmetic intensity under the roofs (log-log)."""
    data = []
    xs = [_intensity(k) for k in roofline if _intensity(k)]
    lo, hi = (min(xs) / 10, max(xs) * 10) if xs else (0.1, 1000.0)
    for k in roofline:
        roofs = k["roofs"]
        peak = roofs["compute_tflops"]  # a roofline row's roofs always include compute and HBM
        hbm = roofs["hbm_tflops"]
        intensity = _intensity(k)
        if peak and hbm and intensity:
            bw = hbm / intensity  # TB/s that gives hbm_tflops at this intensity
            ridge = peak / bw
            data.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "x": [lo, ridge, hi],
                    "y": [bw * lo, peak, peak],
                    "line": {"color": "#888888", "dash": "dot"},
                    "hoverinfo": "skip",
                }
            )
        data.append(
            {
                "type": "scatter",
                "mode": "markers+text",
                "x": [intensity],
                "y": [k["achieved_tflops"]],
                "text": [k["kernel"]],
                "textposition": "top center",
                "marker": {"size": 10, "color": "#d62728"},
                "hovertext": [f"{k['kernel']}: {k['achieved_tflops']} TFLOPS, bound by {k['bound_by']}"],
                "hoverinfo": "text",
            }
        )
    layout = _base_layout(
        240,
        xaxis={"type": "log", "dtick": 1, "title": {"text": labels["intensity"]}},
        yaxis={"type": "log", "dtick": 1, "title": {"text": labels["tflops"]}},
    )
    layout["margin"] = {"l": 50, "r": 8, "t": 8, "b": 40}
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
        yaxis={"automargin": True, "categoryorder": "array", "categoryarray": list(reversed(keys))},
    )
    return {"data": data, "layout": layout}


__all__ = (
    "CORE_COLOURS",
    "KIND_COLOURS",
    "compare_bars_figure",
    "empty_figure",
    "matrices_figure",
    "matrix_axes",
    "pipe_ratio_figure",
    "pipeline_figure",
    "roofline_figure",
    "tile_shapes",
    "timeline_figure",
)
