"""The matrices figure: every named GM tensor as a heatmap in element coordinates, laid out so that a
trainee reads it at a glance (part of :mod:`.figures`, which lists it with the other charts).

Matrices (and N x 1 columns) stand side by side in a band; a 1 x N vector is a full-width strip under
them (a thin band with no row axis: it has one row). Every axis has a few ticks with exact element
indices written with thousands separators (``0``, ``49,152``, ``98,304``), and the gaps between the
subplots and the figure's margins are computed from those labels, so no label is cut at the figure's
edge or runs into the neighbouring subplot. Geometry is in pixels for a plot :data:`NOMINAL_WIDTH` wide
(a wider page only widens the gaps). Tile outlines (:func:`tile_shapes`, and the browser's own copy in
``player.js``) are rectangles in element coordinates on each tensor's axes, whatever its layout.
"""

from __future__ import annotations

import math
from itertools import pairwise

from app.present.text import readable
from app.present.views import heat_cells

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
NOMINAL_WIDTH = 520  # px: the figure width the layout is computed for (the matrices panel on a laptop screen)
# px at the figures' font size (11 px), as DejaVu Sans draws it (Linux's default sans-serif, among the widest): a
# digit and most lowercase letters; the narrow and wide ones; an uppercase letter; a CJK character (one em)
CHAR_PX = 7.0
NARROW_PX, SEMI_PX, UPPER_PX, WIDE_PX = 3.5, 4.4, 8.6, 11.0
_NARROW, _SEMI, _WIDE = frozenset(" ijlI.,:;'|!·"), frozenset("ftr()[]/\\-"), frozenset("mwMW%@")
TICK_PX = 4  # px: a tick mark and the space between it and its label
TITLE_PX = 18  # px: one line of a subplot's title
XLABELS_PX = 18  # px: the row of x tick labels under a subplot
STRIP_PX = 18  # px: the thickness of a vector's strip
BAND_PX = (150, 260)  # px: the band of matrices, at least and at most (about square cells in between)
TITLE_ONE_LINE_PX = 200  # px: a subplot narrower than this has a title of two lines
MARGIN_PX = 6  # px: the figure's margin where no label needs room
FONT = {"family": "system-ui, sans-serif", "size": 11}  # every figure's (text_px is measured at this size)


def tensor_kind(rows: int, cols: int) -> str:
    """``row`` (a 1 x N vector: a horizontal strip), ``col`` (N x 1: a vertical strip) or ``matrix``."""
    if rows == 1 and cols > 1:
        return "row"
    if cols == 1 and rows > 1:
        return "col"
    return "matrix"


def axis_ticks(extent: int, parts: int = 2) -> tuple[list[int], list[str]]:
    """A few ticks along an axis ``extent`` elements long: 0, steps of a round size, and the end (the
    extent itself, where the last element ends), each labelled with separators (``12,288``)."""
    extent = max(1, int(extent))
    step = extent / parts
    if step != int(step):  # round it down to two significant digits: 60,003 / 4 -> 15,000
        scale = 10 ** max(0, math.floor(math.log10(step)) - 1)
        step = max(1, int(step // scale) * scale)
    step = int(step)
    values = list(range(0, extent, step))
    if values and extent - values[-1] < step / 2:
        values.pop()  # too close to the end to read apart from it
    values.append(extent)
    return values, [readable(v) for v in values]


def text_px(text: str) -> float:
    """About how wide ``text`` is drawn at the figures' font size (at most, in the widest common font)."""
    px = 0.0
    for ch in text:
        if ch in _NARROW:
            px += NARROW_PX
        elif ch in _SEMI:
            px += SEMI_PX
        elif ch in _WIDE or ord(ch) >= 0x2E80:
            px += WIDE_PX
        else:
            px += UPPER_PX if ch.isupper() else CHAR_PX
    return px


def _ylabels_px(rows: int, kind: str) -> float:
    """Room left of a subplot for its row tick labels (none on a 1 x N strip)."""
    if kind == "row":
        return 0.0
    return max(text_px(t) for t in axis_ticks(rows)[1]) + TICK_PX + 2


def _overhang_px(cols: int, kind: str, parts: int) -> float:
    """How far the last column tick label reaches past a subplot's right edge (its centre is on the edge)."""
    if kind == "col":
        return 0.0
    return text_px(axis_ticks(cols, parts)[1][-1]) / 2 + 2


def _title(tensor: dict) -> tuple[str, str]:
    rows, cols = tensor["shape"]
    head = f"<b>{tensor['name']}</b> ({tensor['role_label']})"
    return head, f"{readable(rows)} x {readable(cols)}"


def _layout(shapes: list) -> dict:
    """Where each tensor's subplot goes: x and y domains (paper fractions), tick parts, title lines, and
    the figure's height and margins; one computation for :func:`matrix_axes` and :func:`matrices_figure`."""
    kinds = [tensor_kind(r, c) for r, c in shapes]
    band = [i for i, k in enumerate(kinds) if k != "row"]
    strips = [i for i, k in enumerate(kinds) if k == "row"]
    parts = [4 if k == "row" else 2 for k in kinds]
    left = _ylabels_px(shapes[band[0]][0], "matrix") if band else 0.0
    right = max([_overhang_px(shapes[i][1], "row", 4) for i in strips] or [0.0])
    if band:
        last = band[-1]
        right = max(right, _overhang_px(shapes[last][1], kinds[last], 2))
    margin = {"l": round(max(MARGIN_PX, left)), "r": round(max(MARGIN_PX, right)), "t": 4, "b": 4}
    plot_w = NOMINAL_WIDTH - margin["l"] - margin["r"]
    # the band: each subplot's left gap holds its row labels and the previous one's overhanging last label
    gaps = [0.0][: len(band)] + [
        _overhang_px(shapes[a][1], kinds[a], 2) + _ylabels_px(shapes[b][0], kinds[b]) + 6 for a, b in pairwise(band)
    ]
    columns = [i for i in band if kinds[i] == "col"]
    matrices = [i for i in band if kinds[i] == "matrix"]
    free = plot_w - sum(gaps) - STRIP_PX * len(columns)
    width = {i: STRIP_PX if kinds[i] == "col" else free / max(1, len(matrices)) for i in band}
    # a subplot too narrow for "A (input) 1,024 x 1,024" on one line has its shape on a second line
    title_lines = {i: 2 if kinds[i] != "row" and width[i] < TITLE_ONE_LINE_PX else 1 for i in range(len(shapes))}
    x_domain, x = {}, 0.0
    for i, gap in zip(band, gaps, strict=True):
        x += gap
        x_domain[i] = [x / plot_w, (x + width[i]) / plot_w]
        x += width[i]
    for i in strips:
        x_domain[i] = [0.0, 1.0]
    if matrices:
        ratio = max(shapes[i][0] / max(1, shapes[i][1]) for i in matrices)
        band_px = min(BAND_PX[1], max(BAND_PX[0], width[matrices[0]] * ratio))
    else:
        band_px = BAND_PX[0]
    # top to bottom, in pixels: the band (titles, plots, column labels), then each strip
    spans, y = {}, 0.0
    if band:
        head_px = TITLE_PX * max(title_lines[i] for i in band)
        for i in band:
            spans[i] = (y + head_px, y + head_px + band_px)
        y += head_px + band_px + XLABELS_PX
    for i in strips:
        spans[i] = (y + TITLE_PX * title_lines[i], y + TITLE_PX * title_lines[i] + STRIP_PX)
        y = spans[i][1] + XLABELS_PX
    height = max(1.0, y)
    y_domain = {i: [1 - b / height, 1 - a / height] for i, (a, b) in spans.items()}
    return {
        "kinds": kinds,
        "parts": parts,
        "x_domain": x_domain,
        "y_domain": y_domain,
        "title_lines": title_lines,
        "margin": margin,
        "height": round(height) + margin["t"] + margin["b"],
    }


def _rounded(domain: list[float]) -> list[float]:
    return [round(min(1.0, max(0.0, v)), 6) for v in domain]


def matrix_axes(shapes: list) -> list[dict]:
    """Per tensor (``(rows, cols)``): its subplot's axes, its heatmap trace, the cell size of the
    (downsampled) heatmap, its layout (``kind``: matrix, row or col strip) and its x and y domains;
    what the browser needs to outline tiles and colour the output's cells on it."""
    shapes = [(int(r), int(c)) for r, c in shapes]
    if not shapes:
        return []
    lay = _layout(shapes)
    out = []
    for i, (rows, cols) in enumerate(shapes):
        suffix = "" if i == 0 else str(i + 1)
        out.append(
            {
                "x": f"x{suffix}",
                "y": f"y{suffix}",
                "trace": i,
                "cell": heat_cells(rows, cols),
                "rows": rows,
                "cols": cols,
                "kind": lay["kinds"][i],
                "domain": _rounded(lay["x_domain"][i]),
                "y_domain": _rounded(lay["y_domain"][i]),
            }
        )
    return out


def _axis(domain: list, anchor: str, extent: int, parts: int, shown: bool, reverse: bool) -> dict:
    axis = {
        "domain": domain,
        "range": [extent, 0] if reverse else [0, extent],
        "anchor": anchor,
        "showgrid": False,
        "zeroline": False,
        "showline": False,
    }
    if shown:
        values, text = axis_ticks(extent, parts)
        axis.update(tickmode="array", tickvals=values, ticktext=text, ticks="outside", ticklen=3, tickangle=0)
    else:  # the one row (or column) of a vector: no axis to read
        axis.update(showticklabels=False, ticks="", tickvals=[])
    return axis


def matrices_figure(view: dict) -> dict:
    """The tensors as heatmaps in element coordinates (row 0 at the top), laid out by :func:`matrix_axes`:
    inputs show their values, an output shows which core wrote each tile (empty until it lands). Tile
    outlines are ``layout.shapes`` (drawn by the browser per step; see :func:`tile_shapes`)."""
    tensors = view["tensors"]
    if not tensors:
        layout = {"height": 120, "margin": {"l": 8, "r": 8, "t": 8, "b": 8}, "font": FONT, "shapes": []}
        layout.update(xaxis={"visible": False}, yaxis={"visible": False}, paper_bgcolor="#ffffff")
        return {"data": [], "layout": {**layout, "plot_bgcolor": "#ffffff", "showlegend": False}}
    shapes = [tuple(t["shape"]) for t in tensors]
    titles = [_title(t) for t in tensors]
    lay = _layout(shapes)
    axes = matrix_axes(shapes)
    data, layout_axes, annotations = [], {}, []
    for i, (tensor, ax) in enumerate(zip(tensors, axes, strict=True)):
        rows, cols = shapes[i]
        kind, suffix = ax["kind"], ax["x"][1:]
        layout_axes[f"xaxis{suffix}"] = _axis(ax["domain"], ax["y"], cols, lay["parts"][i], kind != "col", False)
        layout_axes[f"yaxis{suffix}"] = _axis(ax["y_domain"], ax["x"], rows, 2, kind != "row", True)
        heat = tensor.get("heat")
        fr, fc = tensor["cell"] if heat is not None and tensor.get("cell") else ax["cell"]
        gr, gc = -(-rows // fr), -(-cols // fc)
        if tensor["role"] == "output":
            colorscale = [[j / max(1, len(CORE_COLOURS) - 1), c] for j, c in enumerate(CORE_COLOURS)]
            trace = {"z": [[None] * gc for _ in range(gr)], "zmin": 0, "zmax": len(CORE_COLOURS) - 1}
            trace["colorscale"] = colorscale
        elif heat is not None:
            trace = {"z": heat, "colorscale": "RdBu", "reversescale": True}
        else:
            trace = {"z": [[0] * gc for _ in range(gr)], "colorscale": [[0, "#eeeeee"], [1, "#eeeeee"]]}
        hover = {"row": "x+z", "col": "y+z"}.get(kind, "x+y+z")
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
                "hoverinfo": "skip" if tensor["role"] == "output" else hover,
                **trace,
            }
        )
        head, size = titles[i]
        annotations.append(
            {
                "text": f"{head}{'<br>' if lay['title_lines'][i] == 2 else ' '}{size}",
                "xref": "paper",
                "yref": "paper",
                "x": (ax["domain"][0] + ax["domain"][1]) / 2 if kind != "row" else 0.0,
                "y": ax["y_domain"][1],
                "yshift": 2,
                "showarrow": False,
                "xanchor": "center" if kind != "row" else "left",
                "yanchor": "bottom",
            }
        )
    layout = {
        "height": lay["height"],
        "margin": lay["margin"],
        "font": FONT,
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#fafafa",
        "showlegend": False,
        "hovermode": "closest",
        "annotations": annotations,
        "shapes": [],
        **layout_axes,
    }
    return {"data": data, "layout": layout}


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


def landing_grid(output: dict, ax: dict) -> dict:
    """For an output tensor (an outline's ``outputs`` entry: its tiles in landing order, ``[row, col, rows, cols,
    core]``) on its heatmap's cells (``ax`` of :func:`matrix_axes`): per cell, the position in that order of the
    first tile that covers it (``order``; None: never) and that tile's core colour index (``colour``). Once
    ``n`` tiles have landed, the heatmap shows ``colour`` where ``order < n``."""
    fr, fc = ax["cell"]
    gr, gc = -(-ax["rows"] // fr), -(-ax["cols"] // fc)
    order: list[list] = [[None] * gc for _ in range(gr)]
    colour: list[list] = [[None] * gc for _ in range(gr)]
    for j, (row, col, rows, cols, core) in enumerate(output["tiles"]):
        for r in range(row // fr, min(gr, -(-(row + rows) // fr))):
            for c in range(col // fc, min(gc, -(-(col + cols) // fc))):
                if order[r][c] is None:
                    order[r][c], colour[r][c] = j, core % len(CORE_COLOURS)
    return {"tensor": output["tensor"], "trace": ax["trace"], "order": order, "colour": colour}


__all__ = (
    "CORE_COLOURS",
    "FONT",
    "axis_ticks",
    "landing_grid",
    "matrices_figure",
    "matrix_axes",
    "tensor_kind",
    "text_px",
    "tile_shapes",
)
