"""The matrices and roofline figures read at a glance, built from real runs: a 1 x N vector is a strip with no
row axis, every subplot has a few readable ticks that neither run past the figure nor into the next subplot,
tile outlines land on the tiles' elements, and the roofline's point sits at its achieved TFLOPS inside the
axes' ranges under named roofs, with its hover text in the page's language."""

import math
import re

import pytest

from app.present import Replay
from app.present import views as V
from app.present.messages import t
from app.present.walkthrough import lesson_walkthrough
from app.web import figures
from app.web import figures_matrices as FM
from engine.scenarios.runner import get_scenario, run_scenario

READABLE = re.compile(r"^-?\d{1,3}(,\d{3})*(\.\d+)?$")  # "0", "512", "98,304", "0.2": never "1e+05" or "000"


@pytest.fixture(scope="module")
def vectors():
    """Lesson 5: x and y, 1 x 98,304 each, values known (its inputs)."""
    return lesson_walkthrough(5).replay


@pytest.fixture(scope="module")
def matmul():
    run = run_scenario("matmul", m=256, n=256, k=256, cores=4)
    return Replay(run.result, inputs=get_scenario("matmul").inputs(run.params))


def _axes(fig: dict, i: int) -> tuple[dict, dict]:
    suffix = "" if i == 0 else str(i + 1)
    return fig["layout"][f"xaxis{suffix}"], fig["layout"][f"yaxis{suffix}"]


def _plot_px(fig: dict) -> tuple[float, float]:
    """The plot area's width (at the nominal figure width) and height, in pixels."""
    layout = fig["layout"]
    m = layout["margin"]
    return FM.NOMINAL_WIDTH - m["l"] - m["r"], layout["height"] - m["t"] - m["b"]


def _step_with_tiles(replay: Replay) -> tuple[int, dict]:
    n = len(replay)
    for step in range(n // 4, n, max(1, n // 200)):
        view = V.matrices_view(replay, step)
        if any(x["tiles"] for x in view["tensors"]):
            return step, view
    raise AssertionError("no step holds a tile")


def _tile_rows(view: dict) -> list[list]:
    return [
        [i, 0, tile["buffer"], tile["row"], tile["col"], tile["rows"], tile["cols"]]
        for i, tensor in enumerate(view["tensors"])
        for tile in tensor["tiles"]
    ]


# -- matrices ---------------------------------------------------------------------------------------------
def test_a_vector_is_a_thin_strip_without_a_row_axis(vectors):
    _step, view = _step_with_tiles(vectors)
    fig = figures.matrices_figure(view)
    axes = figures.matrix_axes([tuple(x["shape"]) for x in view["tensors"]])
    _w, plot_h = _plot_px(fig)
    spans = []
    for i, tensor in enumerate(view["tensors"]):
        assert tensor["shape"] == [1, 98304] and tensor["strip"] and axes[i]["kind"] == "row"
        xaxis, yaxis = _axes(fig, i)
        assert yaxis["showticklabels"] is False and yaxis["tickvals"] == []  # no 0-1 row ticks
        assert yaxis["range"] == [1, 0] and xaxis["range"] == [0, 98304]
        assert xaxis["domain"] == [0.0, 1.0]  # the strip is as wide as the figure
        assert xaxis["tickvals"][0] == 0 and xaxis["tickvals"][-1] == 98304 and 3 <= len(xaxis["tickvals"]) <= 6
        assert all(READABLE.match(text) for text in xaxis["ticktext"]), xaxis["ticktext"]
        assert "98,304" in xaxis["ticktext"]
        bottom, top = yaxis["domain"]
        assert (top - bottom) * plot_h <= FM.STRIP_PX + 1  # a thin band, not a 200 px tall block
        spans.append((bottom, top))
        # the last label (centred on the right edge) fits in the right margin: it is not cut (the width estimate is
        # checked against Chromium's drawing in tests/test_web_figure_margins.py)
        assert fig["layout"]["margin"]["r"] >= FM.text_px(xaxis["ticktext"][-1]) / 2
    (_b1, t1), (b0, _t0) = sorted(spans)
    gap_px = (b0 - t1) * plot_h
    assert gap_px >= FM.XLABELS_PX + FM.TITLE_PX - 1  # x's tick labels and y's title between the strips
    # the strip's heat has STRIP_CELLS times more cells along it than a matrix side, and the figure places them
    x = view["tensors"][0]
    assert x["cell"] == V.heat_cells(1, 98304) == axes[0]["cell"] and len(x["heat"]) == 1
    assert len(x["heat"][0]) == -(-98304 // x["cell"][1]) == 48 * V.STRIP_CELLS
    trace = fig["data"][0]
    assert trace["dx"] == x["cell"][1] and trace["x0"] == x["cell"][1] / 2 and trace["hoverinfo"] == "x+z"


def test_tile_outlines_land_on_the_tiles_elements_of_a_strip(vectors):
    _step, view = _step_with_tiles(vectors)
    axes = figures.matrix_axes([tuple(x["shape"]) for x in view["tensors"]])
    rows = _tile_rows(view)
    shapes = figures.tile_shapes(rows, axes)
    assert len(shapes) == len(rows) > 0
    for rect, (i, _core, _buffer, row, col, nrows, ncols) in zip(shapes, rows, strict=True):
        assert (rect["xref"], rect["yref"]) == (axes[i]["x"], axes[i]["y"])
        assert (rect["x0"], rect["x1"], rect["y0"], rect["y1"]) == (col, col + ncols, row, row + nrows)
        assert (rect["y0"], rect["y1"]) == (0, 1) and 0 <= rect["x0"] < rect["x1"] <= 98304  # the strip's one row


def test_matrices_have_few_readable_ticks_inside_their_subplot(matmul):
    _step, view = _step_with_tiles(matmul)
    fig = figures.matrices_figure(view)
    axes = figures.matrix_axes([tuple(x["shape"]) for x in view["tensors"]])
    plot_w, plot_h = _plot_px(fig)
    margin = fig["layout"]["margin"]
    assert [x["name"] for x in view["tensors"]] == ["A", "B", "C"]
    for i, tensor in enumerate(view["tensors"]):
        rows, cols = tensor["shape"]
        assert not tensor["strip"] and axes[i]["kind"] == "matrix"
        xaxis, yaxis = _axes(fig, i)
        assert xaxis["range"] == [0, cols] and yaxis["range"] == [rows, 0]  # element coordinates, row 0 on top
        for axis, extent in ((xaxis, cols), (yaxis, rows)):
            assert axis["tickvals"] == [0, extent // 2, extent]  # 0, 128, 256: within the subplot, the ends named
            assert axis["ticktext"] == [str(v) for v in axis["tickvals"]]
            assert all(READABLE.match(text) for text in axis["ticktext"])
    # the row labels of each subplot fit in the gap left of it, with the overhang of the previous one's last label
    ylabel_px = FM.text_px("256") + FM.TICK_PX
    assert margin["l"] >= ylabel_px
    for i in range(1, 3):
        left = _axes(fig, i - 1)[0]["domain"][1]
        right = _axes(fig, i)[0]["domain"][0]
        assert (right - left) * plot_w >= ylabel_px + FM.text_px("256") / 2
    assert margin["r"] >= FM.text_px("256") / 2  # C's last column label is not cut at the figure's edge
    # titles sit above the plots, inside the figure
    for note, ax in zip(fig["layout"]["annotations"], axes, strict=True):
        assert note["yanchor"] == "bottom" and note["y"] == ax["y_domain"][1]
        lines = note["text"].count("<br>") + 1
        assert (1 - note["y"]) * plot_h >= lines * FM.TITLE_PX - 1
    # inputs' heat is placed by the view's own cell size, and the output's cells are the browser's grid
    a = view["tensors"][0]
    assert a["cell"] == axes[0]["cell"] and fig["data"][0]["dx"] == a["cell"][1]
    c_trace = fig["data"][2]
    assert len(c_trace["z"]) == -(-256 // axes[2]["cell"][0]) and c_trace["hoverinfo"] == "skip"


def test_tile_outlines_land_on_the_tiles_elements_of_a_matrix(matmul):
    _step, view = _step_with_tiles(matmul)
    axes = figures.matrix_axes([tuple(x["shape"]) for x in view["tensors"]])
    rows = _tile_rows(view)
    shapes = figures.tile_shapes(rows, axes)
    assert len(shapes) == len(rows) > 0
    for rect, (i, _core, _buffer, row, col, nrows, ncols) in zip(shapes, rows, strict=True):
        assert (rect["xref"], rect["yref"]) == (axes[i]["x"], axes[i]["y"])
        assert (rect["x0"], rect["x1"], rect["y0"], rect["y1"]) == (col, col + ncols, row, row + nrows)
        assert 0 <= rect["x0"] < rect["x1"] <= 256 and 0 <= rect["y0"] < rect["y1"] <= 256


def test_matrices_and_vectors_together_never_overlap():
    shapes = [(512, 256), (256, 1), (1, 40000), (512, 1), (1, 7)]
    axes = figures.matrix_axes(shapes)
    assert [a["kind"] for a in axes] == ["matrix", "col", "row", "col", "row"]
    boxes = [(a["domain"], a["y_domain"]) for a in axes]
    for i, (xi, yi) in enumerate(boxes):
        for xj, yj in boxes[i + 1 :]:
            apart_x = xi[1] <= xj[0] or xj[1] <= xi[0]
            apart_y = yi[1] <= yj[0] or yj[1] <= yi[0]
            assert apart_x or apart_y, (xi, yi, xj, yj)
    assert axes[2]["domain"] == axes[4]["domain"] == [0.0, 1.0]  # vectors: full-width strips under the band
    assert axes[2]["y_domain"][1] < axes[0]["y_domain"][0]
    fig = figures.matrices_figure(
        {
            "tensors": [
                {"name": f"t{i}", "shape": list(s), "role": "input", "role_label": "in", "heat": None, "cell": None}
                for i, s in enumerate(shapes)
            ]
        }
    )
    col_x, col_y = _axes(fig, 1)
    assert col_x["showticklabels"] is False and col_y["tickvals"] == [0, 128, 256]  # N x 1: no column axis
    assert fig["data"][1]["hoverinfo"] == "y+z"
    assert _axes(fig, 4)[0]["tickvals"] == [0, 1, 2, 3, 4, 5, 6, 7]  # a short vector's ticks: every element


@pytest.mark.parametrize(
    ("extent", "parts", "values"),
    [
        (1024, 2, [0, 512, 1024]),
        (98304, 4, [0, 24576, 49152, 73728, 98304]),
        (60003, 4, [0, 15000, 30000, 45000, 60003]),  # round steps, the end itself last
        (1, 2, [0, 1]),
        (3, 2, [0, 1, 2, 3]),
    ],
)
def test_axis_ticks_are_round_steps_and_the_end(extent, parts, values):
    got, text = FM.axis_ticks(extent, parts)
    assert got == values and all(READABLE.match(x) for x in text)


# -- roofline ---------------------------------------------------------------------------------------------
def _roofline(replay: Replay, lang: str) -> tuple[list[dict], dict]:
    rows = V.metrics_view(replay, lang)["roofline"]
    return rows, figures.roofline_figure(rows, figures.roofline_labels(lang))


def _points(fig: dict) -> list[dict]:
    return [d for d in fig["data"] if d.get("marker", {}).get("size") == 10]


def _inside(value: float, axis: dict) -> bool:
    lo, hi = axis["range"]
    return lo < math.log10(value) < hi  # a log axis's range is in log10 units


@pytest.fixture(scope="module")
def vector_add():
    run = run_scenario("vector-add", numerics=False)
    return Replay(run.result)


@pytest.mark.parametrize("which", ["matmul", "vector_add"])
def test_each_kernel_sits_at_its_achieved_tflops_inside_the_axes(which, request):
    replay = request.getfixturevalue(which)
    rows, fig = _roofline(replay, "en")
    layout = fig["layout"]
    (point,) = _points(fig)
    (row,) = rows
    assert point["y"] == [row["achieved_tflops"]] and row["achieved_tflops"] > 0
    assert point["x"] == [row["hbm_intensity_flops_per_byte"]]
    assert _inside(point["y"][0], layout["yaxis"]) and _inside(point["x"][0], layout["xaxis"])
    peak = row["roofs"]["compute_tflops"]
    assert _inside(peak, layout["yaxis"])  # the roof is in view, with room for its name above it
    for axis in (layout["xaxis"], layout["yaxis"]):
        assert axis["type"] == "log" and len(axis["tickvals"]) >= 2
        assert all(_inside(v, axis) for v in axis["tickvals"])
        assert all(READABLE.match(text) for text in axis["ticktext"]), axis["ticktext"]
    assert layout["xaxis"]["title"]["text"] == t("web.intensity", "en")
    assert layout["yaxis"]["title"]["text"] == t("web.tflops", "en")
    names = [x for d in fig["data"] for x in d.get("text", ()) if x]
    assert any(x.startswith("compute peak ") and x.endswith(" TFLOPS") for x in names), names
    assert any(x.startswith("HBM ") and x.endswith(" TB/s") for x in names), names
    assert f"bound by {t('fig.roof.' + row['bound_by'], 'en')}" in point["hovertext"][0]


def test_the_roofline_speaks_chinese(matmul):
    rows, fig = _roofline(matmul, "zh")
    (point,) = _points(fig)
    hover = point["hovertext"][0]
    assert "bound by" not in hover and "受限于" in hover and rows[0]["kernel"] in hover
    assert fig["layout"]["xaxis"]["title"]["text"] == t("web.intensity", "zh")
    names = " ".join(x for d in fig["data"] for x in d.get("text", ()) if x)
    assert "算力峰值" in names and "compute" not in names and " of " not in names
    extra = [d["hovertext"][0] for d in fig["data"] if d.get("marker", {}).get("symbol") == "line-ew-open"]
    assert extra and all("屋顶" in x and "roof" not in x for x in extra)  # L2 and the cores' paths, named


def test_a_row_that_names_its_unit_names_its_peak(matmul):
    rows = [{**r, "unit": "cube"} for r in V.metrics_view(matmul)["roofline"]]
    for lang, words in (("en", "Cube peak "), ("zh", "Cube 峰值 ")):
        fig = figures.roofline_figure(rows, figures.roofline_labels(lang))
        assert any(x.startswith(words) for d in fig["data"] for x in d.get("text", ()) if x)


def test_the_metrics_panel_draws_the_labelled_roofline(matmul):
    from app.web import panels

    html_text = str(panels.metrics_panel(V.metrics_view(matmul, "zh"), "zh").to_plotly_json())
    assert "受限于" in html_text and "bound by" not in html_text and "算力峰值" in html_text
