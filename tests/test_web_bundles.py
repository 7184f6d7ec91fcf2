"""The dashboard's JavaScript bundles (``app/web/bundles/``, built into ``app/web/assets/``), without Node.

Each committed bundle was built from the committed sources (the hash its first line records, recomputed here),
the npm versions are pinned, each bundle's licence notice names what is in it, neither fetches code at run
time, and the plotly.js bundle registers every trace type the figures draw (the page in a browser:
tests/test_web_browser.py).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from app.present import report_views, views
from app.present.replay import Replay
from app.web import editor as ed
from app.web import figures, render
from engine.scenarios.runner import run_scenario

BUNDLES = {"editor": 450_000, "plotly": 1_800_000, "regenerator": 10_000}  # size caps, bytes (plotly.min.js: 4.8 MB)


def sources_digest(folder: Path) -> str:
    """What build.sh records: sha256 of ``sha256sum`` over its inputs, in its order."""
    names = ["build.js", "build.sh", "notice.js", "package.json", "package-lock.json"]
    names += sorted(p.relative_to(folder).as_posix() for p in (folder / "src").rglob("*") if p.is_file())
    listing = "".join(f"{hashlib.sha256((folder / n).read_bytes()).hexdigest()}  {n}\n" for n in names)
    return hashlib.sha256(listing.encode()).hexdigest()


def bundle(name: str) -> str:
    return (ed.ASSETS / f"{name}.bundle.js").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(BUNDLES))
def test_the_committed_bundle_was_built_from_the_committed_sources(name):
    first = bundle(name).split("\n", 1)[0]
    recorded = re.search(r"sources-sha256=([0-9a-f]{64})", first)
    assert recorded, f"{name}.bundle.js's first line records no sources hash: {first[:200]}"
    assert recorded.group(1) == sources_digest(ed.SOURCES), (
        f"app/web/bundles/ changed since assets/{name}.bundle.js was built: run app/web/bundles/build.sh and commit"
    )


def test_npm_packages_are_pinned_and_their_licences_ship_beside_the_bundles():
    package = json.loads((ed.SOURCES / "package.json").read_text())
    lock = json.loads((ed.SOURCES / "package-lock.json").read_text())["packages"]
    wanted = {**package["dependencies"], **package["devDependencies"]}
    assert {"@codemirror/state", "@codemirror/view", "@codemirror/lang-python", "plotly.js", "esbuild"} <= set(wanted)
    for name, version in wanted.items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{name} is not pinned: {version}"
        assert lock[f"node_modules/{name}"]["version"] == version, name
    notices = {n: (ed.ASSETS / f"{n}.bundle.LICENSE.txt").read_text() for n in BUNDLES}
    for name in ("@codemirror/state", "@codemirror/view", "@codemirror/lang-python"):
        assert f"{name} {package['dependencies'][name]} (MIT)" in notices["editor"], name
    assert "plotly.js 4.1.1 (MIT)" in notices["plotly"] and "@plotly/d3 " in notices["plotly"]
    assert "regl-scatter2d " in notices["plotly"]  # scattergl's WebGL drawing, bundled with its licence
    assert "regenerator-runtime 0.13.11 (MIT)" in notices["regenerator"]
    for name, notice in notices.items():
        assert f"Third-party software in {name}.bundle.js" in notice
        assert "Permission is hereby granted" in notice
        assert "esbuild" not in notice.replace("esbuild-plugin", "")  # build tools, not in a bundle
        assert "codemirror" not in notice or name == "editor"


@pytest.mark.parametrize("name", sorted(BUNDLES))
def test_the_bundle_is_small_and_fetches_no_code(name):
    text = bundle(name)
    assert len(text.encode()) < BUNDLES[name], f"{name}.bundle.js grew to {len(text.encode())} bytes"
    assert not re.search(r"\bimport\(|importScripts\(", text)  # no code loaded at run time
    if name == "editor":
        assert not re.search(r"\bfetch\(|XMLHttpRequest|@import|url\((?!'data:)", text)  # data: is inline
        assert set(re.findall(r"https?://[^\"' )]+", text)) <= {"http://www.w3.org/2000/svg"}


def test_the_page_loads_the_regenerator_runtime_before_dash_and_not_dash_s_polyfill():
    """Dash's @babel/polyfill 7 is left out of every page (app/web/app.py); what Dash's bundles need of it, the
    global ``regeneratorRuntime``, is an asset, and assets load before Dash's renderer and components."""
    import tempfile

    from app.web.app import create_app

    with tempfile.TemporaryDirectory() as tmp:
        page = create_app(tmp).server.test_client().get("/").get_data(as_text=True)
    scripts = re.findall(r'<script[^>]*src="([^"]+)"', page)
    assert not [s for s in scripts if "polyfill" in s], scripts
    first = {
        name: next(i for i, s in enumerate(scripts) if name in s)
        for name in ("regenerator.bundle.js", "dash_renderer", "dash_core_components.")
    }
    assert first["regenerator.bundle.js"] < first["dash_renderer"] < first["dash_core_components."], scripts
    assert "window.regeneratorRuntime=" in bundle("regenerator").replace(" ", "")


def _trace_types(figure: dict) -> set[str]:
    return {trace.get("type", "scatter") for trace in figure["data"]}


def test_the_plotly_bundle_registers_every_trace_type_the_figures_draw():
    registered = re.search(r"Plotly\.AscendSimTraces = (\[[^\]]*\]);", (ed.SOURCES / "src" / "plotly.js").read_text())
    assert registered, "src/plotly.js names no AscendSimTraces"
    traces = set(json.loads(registered.group(1)))
    assert 'AscendSimTraces=["bar","heatmap","scatter","scattergl"]' in bundle("plotly")  # what the page gets
    replay = Replay(run_scenario("matmul", numerics=True, m=256, n=256, k=256).result)  # every view has data
    step = len(replay.steps) - 1
    core = views.grid_cores(replay)[0]
    metrics = report_views.metrics_view(replay)
    timeline = views.timeline_view(replay, step, None, 300, (core,))
    bars = [b for lane in timeline["lanes"] for b in lane.get("bars", ())]
    many = {**timeline, "lanes": [{"label": "AIC 0", "bars": bars * (figures.WEBGL_BARS // len(bars) + 1)}]}
    labels = render.labels("en")
    drawn = {
        "timeline": figures.timeline_figure(timeline, labels),
        "timeline, WebGL": figures.timeline_figure(many, labels),
        "matrices": figures.matrices_figure(views.matrices_view(replay, step)),
        "pipeline": figures.pipeline_figure(views.pipeline_view(replay, step, core), "us"),
        "pipe ratios": figures.pipe_ratio_figure(metrics["pipe_ratios"], "t", metrics["pipe_ratio_names"]),
        "roofline": figures.roofline_figure(metrics["roofline"], figures.roofline_labels("en")),
        "compare": figures.compare_bars_figure([("a", 1.0, 2.0)], ("x", "y")),
        "empty": figures.empty_figure(),
    }
    assert _trace_types(drawn["timeline, WebGL"]) == {"scattergl"}
    assert {"heatmap", "bar", "scatter"} <= set().union(*map(_trace_types, drawn.values()))
    for name, figure in drawn.items():
        assert _trace_types(figure) <= traces, f"the {name} figure draws {_trace_types(figure) - traces}"
