"""The dashboard's builders as plain functions (no browser): figures and panels from small known
view-models, HTML text of components, the layouts' automation-contract ids, what the server sends a
player, the validation of what a browser asks for, and the ``ascendsim web`` command."""

import json

import pytest
from dash import html

from app.cli import main
from app.present.messages import metric_name
from app.present.messages import t as msg
from app.present.playback import Playback
from app.web import compare, figures, layout, markup, pages, panels, playground, render
from app.web.runs import RunRequestError, Runs, breakpoints_of, validate_request
from engine.trace.locations import CoreRef, SourceLine
from lessons.catalog import lessons

CONTRACT = ("step-back", "step-forward", "play", "step-slider", "step-label", "lang-switch")
CONTRACT += tuple(f"view-{v}" for v in ("system", "core", "timeline", "matrices", "pipeline", "metrics", "code"))
PLAYGROUND = ("pg-scenario", "pg-m", "pg-n", "pg-k", "pg-run", "pg-error")


def _ids(node, out=None):
    out = set() if out is None else out
    if isinstance(node, (list, tuple)):
        for n in node:
            _ids(n, out)
        return out
    if hasattr(node, "to_plotly_json"):
        ident = getattr(node, "id", None)
        if isinstance(ident, str):
            out.add(ident)
        for prop in ("children",):
            _ids(getattr(node, prop, None), out)
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return Runs(tmp_path_factory.mktemp("runs"))


# -- figures ---------------------------------------------------------------------------------------------------
TIMELINE = {
    "t0_us": 0.0,
    "t1_us": 10.0,
    "cursor_us": 4.0,
    "lanes": [
        {
            "label": "Host/host thread",
            "bars": [
                {
                    "start_us": 0.0,
                    "end_us": 2.0,
                    "name": "acl.init",
                    "kind": "CALL",
                    "bytes": 0,
                    "flops": 0,
                    "src": "a.py:1",
                },
                {
                    "start_us": 3.0,
                    "end_us": 4.0,
                    "name": "memcpy",
                    "kind": "COPY",
                    "bytes": 4096,
                    "flops": 0,
                    "src": "",
                },
            ],
        },
        {"label": "AIC 0/CUBE", "note": "900 events", "buckets": [{"start_us": 5.0, "end_us": 6.0, "busy": 0.5}]},
    ],
}
LABELS = {"duration": "duration", "bytes": "bytes", "flops": "flops", "src": "source", "busy": "busy", "time": "t"}


def test_timeline_figure_draws_one_bar_per_event_and_buckets_by_busy_share():
    fig = figures.timeline_figure(TIMELINE, LABELS)
    bars = {t["name"]: t for t in fig["data"]}
    assert bars["CALL"]["type"] == "bar" and bars["CALL"]["base"] == [0.0] and bars["CALL"]["x"] == [2.0]
    assert "4,096" in bars["COPY"]["hovertext"][0] and "a.py:1" in bars["CALL"]["hovertext"][0]
    assert bars["busy"]["marker"]["opacity"] == [0.5] and bars["busy"]["y"] == ["AIC 0/CUBE"]
    layout_ = fig["layout"]
    assert layout_["yaxis"]["categoryarray"] == ["AIC 0/CUBE", "Host/host thread"]  # first lane on top
    assert layout_["xaxis"]["range"] == [0.0, 10.0] and layout_["meta"]["cursor_us"] == 4.0


def test_timeline_figure_switches_to_webgl_above_the_threshold():
    many = [
        {"start_us": i, "end_us": i + 0.5, "name": "mmad", "kind": "COMPUTE", "bytes": 0, "flops": 1, "src": ""}
        for i in range(figures.WEBGL_BARS + 1)
    ]
    fig = figures.timeline_figure({**TIMELINE, "lanes": [{"label": "AIC 0/CUBE", "bars": many}]}, LABELS)
    (trace,) = fig["data"]
    assert trace["type"] == "scattergl" and len(trace["x"]) == 3 * len(many)
    assert trace["x"][:3] == [0, 0.5, None]


def test_matrices_figure_axes_heat_and_an_empty_output():
    view = {
        "tensors": [
            {
                "name": "A",
                "shape": [96, 64],
                "role": "input",
                "role_label": "input",
                "heat": [[0.5] * 32] * 48,
                "cell": [2, 2],
            },
            {"name": "C", "shape": [96, 96], "role": "output", "role_label": "output", "heat": None, "cell": None},
        ]
    }
    fig = figures.matrices_figure(view)
    a, c = fig["data"]
    assert (a["xaxis"], c["xaxis"]) == ("x", "x2") and a["z"] == [[0.5] * 32] * 48
    assert (a["dx"], a["dy"], a["x0"]) == (2, 2, 1.0)  # 48 x 48 cells at most, in element coordinates
    assert c["z"] == [[None] * 48] * 48 and fig["layout"]["yaxis2"]["range"] == [96, 0]
    axes = figures.matrix_axes([(96, 64), (96, 96)])
    shapes = figures.tile_shapes([[1, 3, "L0C", 16, 32, 16, 8]], axes, {"L1": "dot"})
    assert shapes == [
        {
            "type": "rect",
            "xref": "x2",
            "yref": "y2",
            "x0": 32,
            "x1": 40,
            "y0": 16,
            "y1": 32,
            "line": {"color": figures.CORE_COLOURS[3], "width": 2, "dash": "solid"},
        }
    ]


def test_pipeline_figure_one_bar_per_stage_and_tile():
    view = {
        "stages": [{"stage": "MTE2", "label": "CopyIn"}, {"stage": "CUBE", "label": "Compute"}],
        "tiles": [
            {
                "tile": "C[0:16, 0:16]",
                "cells": {
                    "MTE2": {"start_us": 1.0, "end_us": 2.0, "count": 2},
                    "CUBE": {"start_us": 2.0, "end_us": 3.0, "count": 4},
                },
            },
            {"tile": "C[0:16, 16:32]", "cells": {"MTE2": {"start_us": 2.0, "end_us": 2.5, "count": 2}}},
        ],
        "t0_us": 1.0,
        "t1_us": 3.0,
        "cursor_us": 2.2,
    }
    fig = figures.pipeline_figure(view, "t")
    mte2, cube = fig["data"]
    assert mte2["y"] == ["C[0:16, 0:16]", "C[0:16, 16:32]"] and mte2["x"] == [1.0, 0.5]
    assert cube["y"] == ["C[0:16, 0:16]"] and "(4)" in cube["hovertext"][0]
    assert fig["layout"]["meta"]["cursor_us"] == 2.2


def test_pipeline_of_an_operator_level_run_says_why_it_is_empty(runs):
    request = {"scenario": "pipeline", "profile": "ascend910b1", "params": {"n": 128, "batches": 2}, "numerics": False}
    runs.compute(request, "test-session", lambda phase, values: None)
    loaded = runs.load(request)
    for lang, words in (("en", "operator-level"), ("zh", "算子级")):  # no cores: the player picks none
        fig = render.pipeline(loaded, len(loaded.replay) - 1, None, lang)
        assert fig["data"] == [] and words in fig["layout"]["annotations"][0]["text"]
        assert fig["layout"]["xaxis"]["range"][1] < 0  # the cursor (time >= 0) never shows over it


def test_metric_figures():
    fig = figures.pipe_ratio_figure({"aic_mac_ratio": 0.5, "aic_mte2_ratio": 0.0}, "busy")
    assert fig["data"][0]["y"] == ["aic_mac_ratio"] and fig["data"][0]["x"] == [50.0]
    words = {"aic_mac_ratio": metric_name("aic_mac_ratio", "zh", with_id=False)}
    fig = figures.pipe_ratio_figure({"aic_mac_ratio": 0.5}, "busy", words)  # named in words, the id on hover
    assert fig["data"][0]["y"] == ["Cube 忙碌占比"] and fig["data"][0]["customdata"] == ["aic_mac_ratio"]
    roof = [
        {
            "kernel": "k",
            "intensity_flops_per_byte": 10.0,
            "hbm_intensity_flops_per_byte": 100.0,
            "achieved_tflops": 50.0,
            "bound_by": "compute",
            "percent_of_roof": 16.67,
            "roofs": {"compute_tflops": 300.0, "hbm_tflops": 180.0},
        }
    ]
    fig = figures.roofline_figure(roof, figures.roofline_labels("en"))
    slope, flat, point = fig["data"]
    assert point["x"] == [100.0] and point["y"] == [50.0] and slope["y"][-1] == flat["y"][0] == 300.0  # ridge at peak
    assert slope["x"][-1] == pytest.approx(300.0 / 1.8)  # 1.8 TB/s = 180 TFLOPS at 100 flop/B
    assert "HBM 1.8 TB/s" in slope["text"] and "compute peak 300 TFLOPS" in flat["text"]
    bars = figures.compare_bars_figure([("percent_of_peak", 30.0, 60.0)], ("A", "B"))
    assert [t["x"] for t in bars["data"]] == [[30.0], [60.0]]


# -- panels and HTML -------------------------------------------------------------------------------------
HOST = {
    "host": {"title": "Host CPU", "doing": "in acl.init", "call": "acl.init", "blocked": True},
    "link": {
        "title": "link",
        "engines": [
            {
                "label": "H2D engine 0",
                "direction": "H2D",
                "busy": True,
                "task": "H2D copy",
                "bytes_done": 1024,
                "bytes_total": 4096,
                "progress": 0.25,
            }
        ],
    },
    "streams": [{"label": "stream 1", "pending": 2, "running": "add_kernel", "done": 1}],
}
CORE = {
    "core": "AIV 0",
    "kind": "AIV",
    "index": 0,
    "block": 3,
    "active": True,
    "activity": "vector",
    "buffers": [
        {
            "name": "UB",
            "capacity": 196608,
            "used": 24576,
            "fill": 0.125,
            "slots": [
                {
                    "position": "VECIN",
                    "queue": 0,
                    "slot": 1,
                    "offset": 4096,
                    "length": 4096,
                    "state": "enqueued",
                    "state_label": "enqueued (data ready)",
                    "tile": "x[0:1, 2048:4096]",
                    "tile_ref": {},
                    "writer": 17,
                }
            ],
        }
    ],
    "pipes": [
        {
            "pipe": "VECTOR",
            "title": "Vector unit",
            "busy": True,
            "instruction": "add",
            "last": "add",
            "kind": "COMPUTE",
            "src": "k.py:9",
            "start_us": 1.0,
            "end_us": 1.5,
        }
    ],
}


def test_host_panel():
    text = markup.to_html(panels.host_panel(HOST, "en"))
    assert 'class="box host blocked"' in text and "in acl.init" in text
    assert "H2D copy" in text and "1.0 KiB / 4.0 KiB" in text and 'style="width: 25.0%"' in text
    assert "queued 2" in text and "running: add_kernel" in text


def test_core_panel_slots_carry_their_identity_for_clicks():
    text = markup.to_html(panels.core_panel(CORE, "en"))
    assert 'class="slot ready"' in text
    assert all(attr in text for attr in ('data-buf="UB"', 'data-q="0"', 'data-s="1"'))
    assert "x[0:1, 2048:4096]" in text and "block 3" in text and "Vector computing" in text
    assert "24.0 KiB of 192.0 KiB" in text and "k.py:9" in text
    assert "使用" not in text and "数" in markup.to_html(panels.core_panel(CORE, "zh"))
    assert msg("web.no_core", "en") in markup.to_html(panels.core_panel(None, "en"))


def test_code_panel_marks_the_current_line():
    view = {"file": "k.py", "line": 11, "first_line": 10, "lines": ["a = 1", "b = a < 2", "c = 3"]}
    text = markup.to_html(panels.code_panel(view))
    assert '<div class="line current"><span class="ln">11</span><span class="tx">b = a &lt; 2</span></div>' in text
    assert "k.py:11" in text


@pytest.fixture(scope="module")
def single_buffered():
    """A real run the presenter describes: vector-add with one slot per queue (double buffering recommended)."""
    from app.present.replay import Replay
    from engine.scenarios.runner import run_scenario

    run = run_scenario("vector-add", buffer_num=1)
    return Replay(run.result, context={"params": run.params})


def test_metrics_panel_try_buttons_only_on_the_playground(single_buffered):
    from app.present.views import metrics_view

    view = metrics_view(single_buffered, "en")
    assert any(r["rule"] == "double_buffering" for r in view["recommendations"])
    with_try = str(panels.metrics_panel(view, "en", tryable=True))
    assert "try-rec" in with_try and "buffer_num=2" in with_try
    assert "try-rec" not in str(panels.metrics_panel(view, "en", tryable=False))


def test_recommendations_read_in_chinese_title_advice_evidence_and_threshold(single_buffered):
    """Every word of a recommendation in the page's language; the evidence named from the glossary, its id on
    hover; the threshold translated."""
    from app.present.views import metrics_view

    rec = next(r for r in metrics_view(single_buffered, "zh")["recommendations"] if r["rule"] == "double_buffering")
    assert rec["title"] == "启用双缓冲" and "槽位" in rec["advice"] and rec["threshold"].startswith("重叠率")
    names = {e["id"]: e["name"] for e in rec["evidence"]}
    assert names["mte2_compute_overlap"] == "计算时 MTE2 同时搬入的占比" and "threshold" not in names
    text = str(panels.metrics_panel(metrics_view(single_buffered, "zh"), "zh"))
    assert "title='mte2_compute_overlap'" in text and "重叠率 <" in text
    en = next(r for r in metrics_view(single_buffered, "en")["recommendations"] if r["rule"] == "double_buffering")
    assert en["advice"].startswith("Give the input queues two slots") and en["threshold"].startswith("overlap <")


def test_tile_panel_shows_the_numbers():
    view = {
        "core": "AIC 0",
        "buffer": "L0A",
        "queue": 2,
        "slot": 0,
        "tile": {"label": "A[0:16, 0:16]"},
        "values": [[1.0, 2.5], [3.0, 4.0]],
        "shape": [16, 16],
        "dtype": "float16",
        "truncated": True,
    }
    text = str(panels.tile_panel(view, "en"))
    assert "A[0:16, 0:16]" in text and "2.5" in text and "16 x 16 float16" in text


def test_to_html_escapes_and_refuses_what_it_cannot_write():
    assert markup.to_html(html.Span("<b>&", title='"x"')) == '<span title="&quot;x&quot;">&lt;b&gt;&amp;</span>'
    assert markup.to_html([None, "a", 1, html.Br()]) == "a1<br>"
    from dash import dcc

    with pytest.raises(TypeError):
        markup.to_html(dcc.Graph())


def test_the_panels_elements_write_what_dash_s_components_write():
    """The window's panels are built from :class:`markup.h` (no Dash component's bookkeeping): each element and
    prop they use is written as the same call of ``dash.html`` is, and data-* attributes in the order given
    (Dash's own order changed from one process to the next)."""

    def tree(el):
        return el.Div(
            [
                el.H4("<title>"),
                el.Span("a & b", className="num"),
                el.Button([el.B("x"), "y"], className="slot free", title='64 "B"', **{"data-buf": "L1"}),
                el.Table([el.Caption("pipes"), el.Tbody([el.Tr([el.Td("", className="")], className="busy")])]),
                el.Pre([el.Span([el.I("3"), "t"], className="l c")], className="code"),
                el.Ul([el.Li("note")]),
                el.Div(el.Div(className="fill", style={"width": "25.0%"}), className="bar"),
            ],
            className="core",
            style={"backgroundColor": "#fff"},
        )

    assert markup.to_html(tree(markup.h)) == markup.to_html(tree(html))
    assert markup.to_html(markup.h.Button("b", **{"data-s": 0, "data-buf": "L1"})) == (
        '<button data-s="0" data-buf="L1">b</button>'
    )
    with pytest.raises(TypeError, match="no prop 'onclick'"):
        markup.to_html(markup.h.Div("x", onclick="alert(1)"))


# -- layouts: the automation contract --------------------------------------------------------------------------------
def test_every_contract_id_exists_on_the_lesson_and_playground_pages():
    shell = _ids(layout.shell("en"))
    lesson = _ids(layout.lessons_page("en", lessons()))
    playground = _ids(layout.playground_page("en", ["matmul"], ["ascend910b1"], "matmul", "ascend910b1"))
    assert "lang-switch" in shell
    for ids in (lesson, playground):
        assert set(CONTRACT) - {"lang-switch"} <= ids
    assert "narration" in lesson and set(PLAYGROUND) <= playground


def test_every_label_has_both_languages():
    page = layout.lessons_page("zh", lessons())
    spans = []

    def walk(node):
        if isinstance(node, (list, tuple)):
            for n in node:
                walk(n)
        elif hasattr(node, "to_plotly_json"):
            if isinstance(getattr(node, "id", None), dict) and node.id.get("type") == "t":
                spans.append(node)
            walk(getattr(node, "children", None))

    walk(page)
    assert len(spans) > 20
    for span in spans:
        assert span.children == msg(span.id["key"], "zh") != msg(span.id["key"], "en") or span.id["key"] == "web.tflops"


# -- what the server sends ---------------------------------------------------------------------------------------
def test_lesson_meta_and_window(runs):
    loaded = runs.load({"lesson": 1})
    meta = render.meta(loaded)
    assert meta["n"] == len(loaded.replay) and meta["window"] == meta["n"]  # a short run in one window
    assert meta["lesson"]["anchors"][0] == 0 and len(meta["lesson"]["text"]["zh"]) == len(meta["lesson"]["anchors"])
    assert "\n" not in meta["lesson"]["text"]["en"][0]  # paragraphs, not terminal lines
    # the grid's cores as fields (the browser draws them and parses no name), AICs first
    cells = meta["grid_cores"]
    assert cells[0] == {"name": "AIC 0", "kind": "AIC", "index": 0, "short": "C0", "css": "aic"}
    aivs = [c for c in cells if c["kind"] == "AIV"]
    assert aivs[3] == {"name": "AIV 3", "kind": "AIV", "index": 3, "short": "V3", "css": "aiv"}
    assert meta["grid"] == [c["css"] for c in cells] and json.loads(json.dumps(meta)) == meta
    w = render.window(loaded, 0, meta["window"], "AIV 0", "en", ())
    assert w["count"] == meta["n"] and len(w["index"]["core"]) == w["count"]
    assert w["parts"]["core"][0].startswith('<div class="core">') and "AIV 0" in w["parts"]["core"][0]
    assert len(json.dumps(w)) < 1000 * meta["n"]  # 770 bytes a step measured, panels included
    # the playback's answers, as data: the browser applies them and decides none
    anchors = meta["lesson"]["anchors"]
    assert w["lesson"] == [Playback(meta["n"], anchors, step=s).lesson_step for s in range(w["count"])]
    assert w["lesson"][anchors[8]] == 8  # event 21, synchronize_stream, narrates the step about it
    assert meta["lesson"]["nav"]["1"][:3] == [0, 1, 2] and meta["lesson"]["nav"]["-1"][:3] == [None, None, 0]
    assert meta["speeds"]["50"] == [20, 1] and meta["speeds"]["200"] == [20, 4]
    part = render.window(loaded, 100, 50, "AIV 0", "en", ())
    assert part["lesson"] == w["lesson"][100:150]


@pytest.mark.slow
@pytest.mark.parametrize("number", [lesson.number for lesson in lessons()])
def test_every_lesson_plays(runs, number):
    loaded = runs.load({"lesson": number})
    meta = render.meta(loaded)
    resolved = [a for a in meta["lesson"]["anchors"] if a is not None]
    assert all(0 <= a < meta["n"] for a in resolved)
    w = render.first_window(loaded, "zh")
    assert w["count"] == meta["window"] and w["labels"][0].startswith("第")
    fig, _note = render.matrices(loaded, "en")
    assert isinstance(fig["data"], list)


def test_validation_names_the_field_the_limit_and_the_value():
    base = {"scenario": "matmul", "profile": "ascend910b1", "numerics": True}
    cases = [
        ({"m": 0, "n": 64, "k": 64}, "m must be >= 1, got 0"),
        ({"m": "abc"}, "m must be an integer, got 'abc'"),
        ({"m": ""}, "m is required (default 1024), got nothing"),
        ({"buffer_num": 3}, "buffer_num must be one of 1, 2, got 3"),
        ({"cores": 99}, "cores must be in 1..24 (ascend910b1), got 99"),
        ({"m": 8192, "n": 8192, "k": 8192}, "m x n x k with numerics must be <= 68,719,476,736 (4096^3)"),
        ({"evil": 1}, "'evil' is not a parameter of matmul"),
    ]
    for params, expected in cases:
        with pytest.raises(RunRequestError) as err:
            validate_request({**base, "params": params})
        assert str(err.value).startswith(expected), str(err.value)
    with pytest.raises(RunRequestError, match=r"^scenario must be one of"):
        validate_request({"scenario": "rm -rf /"})
    with pytest.raises(RunRequestError, match=r"^profile must be one of"):
        validate_request({**base, "profile": "../../etc/passwd"})
    with pytest.raises(RunRequestError, match=r"^numerics must be true or false"):
        validate_request({**base, "numerics": "yes"})
    spec, _scenario, cost = validate_request({**base, "params": {"m": "8192", "n": 8192, "k": 8192}, "numerics": False})
    assert dict(spec.params)["m"] == 8192 and cost.events < 6_000_000


def test_a_job_stores_its_run_for_every_process_and_reports_its_phases(runs, tmp_path):
    request = {"scenario": "matmul", "profile": "ascend910b1", "params": {"m": 48, "n": 32, "k": 16}, "numerics": True}
    phases = []
    assert runs.compute(request, "test-session", lambda phase, values: phases.append(phase)) is None
    assert phases[0] == "simulating" and "storing" in phases
    spec = runs.spec(request)
    other = Runs(runs.directory)  # another worker: same folder, nothing in memory
    assert other.stored(spec)
    loaded = other.load(request)
    assert loaded.key == spec.key and len(loaded.replay) > 10
    again = []
    runs.compute(request, "test-session", lambda phase, values: again.append(phase))
    assert again == []  # stored: not simulated again
    with pytest.raises(RunRequestError, match="not finished"):
        other.load({**request, "params": {"m": 49, "n": 32, "k": 16}})


def test_runs_of_other_code_are_never_served(runs, monkeypatch):
    """Stored runs live in a folder named after the code that made them, under whatever folder the server
    was given: a server of changed code (the playground's runs as the lessons') starts afresh."""
    import app.web.runs as runs_module

    request = {"scenario": "matmul", "profile": "ascend910b1", "params": {"m": 48, "n": 32, "k": 16}, "numerics": False}
    spec = runs.spec(request)
    runs.store.run(spec)
    assert Runs(runs.directory).store.get(spec) is not None  # same code: served
    monkeypatch.setattr(runs_module, "fingerprint", lambda *folders: "changed-code")
    newer = Runs(runs.directory)
    assert newer.store.get(spec) is None and not newer.stored(spec)


def test_a_failing_run_reports_why_and_is_not_stored(runs):
    request = {"scenario": "debug-demo", "params": {"bug": "wait-cycle"}, "numerics": True}
    try:
        runs.compute(request, "test-session", lambda phase, values: None)
    except RunRequestError as exc:
        assert str(exc) and not runs.stored(runs.spec(request))  # a failure is never stored as a result
    else:
        assert runs.stored(runs.spec(request))


def test_breakpoints_from_the_browser_are_validated(runs):
    loaded = runs.load({"lesson": 1})
    bps = breakpoints_of([{"kind": "KERNEL"}, {"core": "AIV 1"}, {"src": "x.py:1"}, {"mark": ""}, {}], loaded)
    assert len(bps) == 4
    assert bps[1].core == CoreRef("AIV", 1) and bps[2].src == SourceLine("x.py", 1)  # typed on arrival
    with pytest.raises(RunRequestError, match=r"^breakpoint kind must be one of"):
        breakpoints_of([{"kind": "NOPE"}], loaded)
    with pytest.raises(RunRequestError, match=r"^breakpoint core must be one of"):
        breakpoints_of([{"core": "AIC 99"}], loaded)
    with pytest.raises(
        RunRequestError, match=r"^breakpoint source line must be file:line such as kernels/add.py:42 .*, got 'x.py'"
    ):
        breakpoints_of([{"src": "x.py"}], loaded)


def test_lesson_questions_are_answered_by_the_simulator_once(runs):
    lesson = lessons()[0]
    question = lesson.questions[0].id
    answer = runs.truth(lesson, question)
    assert answer in lesson.questions[0].choices
    assert runs.truth(lesson, question) == answer
    with pytest.raises(RunRequestError):
        runs.truth(lesson, "nope")


def test_playground_and_compare_helpers():
    assert compare.parse_options("matmul", "--m 64 --buffer-num 1") == {"m": "64", "buffer_num": "1"}
    assert compare.parse_options("pipeline", "--pageable --streams 2") == {"pageable": True, "streams": "2"}
    with pytest.raises(RunRequestError, match="--q"):
        compare.parse_options("matmul", "--q 1")
    request = playground.request_of("matmul", "ascend910b1", "64", "32", "16", [{"name": "buffer_num"}], [1], True)
    assert request["params"] == {"m": "64", "n": "32", "k": "16", "buffer_num": 1}
    assert validate_request(request)[0].scenario == "matmul"
    request = playground.request_of("pipeline", "ascend910b1", "1", "256", "1", [{"name": "pageable"}], [["on"]], False)
    assert request["params"] == {"n": "256", "pageable": True}
    assert pages.describe({"lesson": 3}) == "lesson 3"
    assert "m=64" in pages.describe({"scenario": "matmul", "profile": "p", "params": {"m": 64}, "numerics": False})


# -- the command and the WSGI object ------------------------------------------------------------------------------
def test_web_command_help_and_bad_arguments(capsys):
    assert main(["web", "--help"]) == 0
    assert "--host" in capsys.readouterr().out
    assert main(["web", "--port", "0"]) == 2
    assert "--port" in capsys.readouterr().err
    assert main(["web", "--lang", "fr"]) == 2


def test_the_wsgi_object(tmp_path, monkeypatch):
    monkeypatch.setenv("ASCENDSIM_RUNS", str(tmp_path))
    import app.web

    server = app.web.server
    client = server.test_client()
    page = client.get("/")
    assert page.status_code == 200 and b"AscendSim" in page.data
    assert client.get("/_dash-layout").status_code == 200


def test_export_names_and_descriptions_leave_automatic_fields_out():
    run = {"scenario": "matmul", "profile": "ascend910b1", "params": {"m": 64, "cores": None, "base": ""}}
    assert pages.export_name(run) == "matmul-m64" and "cores" not in pages.describe(run)
    assert pages.export_name({**run, "numerics": False}) == "matmul-m64-timing"
    assert pages.export_name({"exercise": 3, "code": "ab"}) == "exercise-3"
    assert pages.describe({"lesson": 3}, "zh") == "第 3 课" and "3" in pages.describe({"exercise": 3}, "zh")


def test_the_timeline_opens_on_the_devices_work_and_follows_the_cursor_page_by_page(runs):
    """Lesson 1 is 90 % host set-up: the timeline's window is the device's work (with a margin) wide, and while
    following the cursor it shows the page each step is on (app.present.viewport: one rule for both UIs), with
    dozens of events in view; set-up and teardown are shaded and named."""
    from app.present import viewport

    loaded = runs.load({"lesson": 1})
    end = loaded.outline["end_us"]
    a, b = loaded.outline["phases_us"]["work"]
    assert 0 < a < b <= end and (b - a) < 0.2 * end  # the work is a sliver of the whole run
    span = render.opening_span(loaded)
    assert span == pytest.approx((b - a) * viewport.OPENING_MARGIN)
    w = render.window(loaded, 0, len(loaded.replay), None, "en", ())
    tl = render.follow_pages(loaded, 0, len(loaded.replay), span)
    starts = loaded.replay.trace.start / 1e6
    opening = tuple(viewport.window(end, span, (a + b) / 2))
    for i, t in enumerate(w["times"]):
        lo, hi = tl["pages"][tl["page"][i]]
        assert hi - lo == pytest.approx(span)
        if t < a:  # in the host's set-up the timeline stays on the device's work (it opens there)
            assert (lo, hi) == pytest.approx(opening)
            continue
        assert lo <= t <= hi and (t - lo) >= viewport.PAGE_LEAD * span * 0.999  # what led here is in view
    on_work = {tl["page"][i] for i, t in enumerate(w["times"]) if a <= t < b}  # set-up has only a few long calls
    assert on_work and all(
        ((starts >= lo) & (starts <= hi)).sum() >= 24 for lo, hi in map(tl["pages"].__getitem__, on_work)
    )
    assert tl["page"] == sorted(tl["page"]) and len(tl["pages"]) > 1  # forward steps never turn a page back
    fig = render.timeline(loaded, 0, "zh", render.pages_span(tl), [], tuple(tl["pages"][0]))
    assert fig["layout"]["xaxis"]["range"] == tl["pages"][0]
    bands = [s for s in fig["layout"]["shapes"] if s.get("type") == "rect" and s.get("yref") == "paper"]
    assert len(bands) == 2 and bands[0]["x0"] == 0 and bands[0]["x1"] == pytest.approx(a)
    assert {n["text"] for n in fig["layout"]["annotations"]} >= {"准备"}
    # the whole run shown: no pages, nothing moves
    assert render.follow_pages(loaded, 0, len(loaded.replay), None)["pages"] == []


def test_the_playgrounds_empty_fields_say_what_auto_means():
    from app.web.playground import param_fields

    def placeholders(scenario, lang):
        out = {}
        for label in param_fields(scenario, lang):
            for child in label.children if isinstance(label.children, list) else [label.children]:
                if getattr(child, "placeholder", None):
                    out[child.id["name"]] = child.placeholder
        return out

    assert placeholders("matmul", "en") == {"cores": "auto: all 24 cores", "base": "auto: the tiler chooses"}
    assert placeholders("vector-add", "zh") == {"cores": "自动：足够 48 个 Vector 核的块数"}


def test_the_window_carries_each_steps_tile_outlines_and_the_meta_when_each_cell_fills(runs):
    """What the matrices show at a step is computed in Python: the outlines at every step of a window are
    figures.tile_shapes of app.present.frames.frame's tiles at that step, and an output's heatmap once n tiles
    have landed is its landing grid thresholded at n (the browser only swaps them in)."""
    from app.present.frames import frame

    loaded = runs.load({"lesson": 6})
    meta = render.meta(loaded)
    w = render.window(loaded, 0, len(loaded.replay), None, "en", ())
    raw = loaded.source.frames(0, len(loaded.replay), loaded.core(None), "en", ())
    axes = figures.matrix_axes(render.tensor_shapes(loaded))
    assert len(w["tiles"]["at"]) == w["count"] and len(w["tiles"]["held"]) > 2
    for i in range(0, w["count"], 7):
        held = frame(raw, i)["tiles"]
        want = figures.tile_shapes(
            [[t[0], c, t[1], *t[2:]] for c, tiles in held.items() for t in tiles], axes, render.BUFFER_DASH
        )
        got = [s for k in w["tiles"]["held"][w["tiles"]["at"][i]] for s in w["tiles"]["shapes"][k]]
        assert got == want
    assert any(s["line"]["dash"] == "dot" for shapes in w["tiles"]["shapes"] for s in shapes)  # L1, dotted
    (grid,) = meta["landing"]  # C, its 4 base blocks
    (out,) = loaded.outline["outputs"]
    filled = [sum(o is not None and o < n for row in grid["order"] for o in row) for n in range(len(out["tiles"]) + 1)]
    assert filled[0] == 0 and filled == sorted(filled) and filled[-1] == sum(len(row) for row in grid["order"])
    first = out["tiles"][0]  # the first tile's cells carry its core's colour
    fr, fc = axes[grid["tensor"]]["cell"]
    assert (
        grid["order"][first[0] // fr][first[1] // fc] == 0
        and grid["colour"][first[0] // fr][first[1] // fc] == first[4]
    )
    assert json.loads(json.dumps(meta)) == meta
