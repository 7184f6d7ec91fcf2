"""The core view's fractals: which 16 x 16 block of which tile sits where in L1 / L0, in what order, rebuilt
from the trace alone (the same on a fast-path run, whose buffers never held data), in both languages."""

from __future__ import annotations

import numpy as np
import pytest

from app.present import Replay
from app.present import views as V
from app.web import panels
from engine.scenarios.runner import get_scenario, run_scenario
from tests.replay_helpers import first_mmad

PARAMS = {"m": 300, "n": 200, "k": 100, "cores": 3}


@pytest.fixture(scope="module")
def matmul():
    run = run_scenario("matmul", "ascend910b1", numerics=True, **PARAMS)
    return run, Replay(run.result, inputs=get_scenario("matmul").inputs(run.params))


def _slots(replay, step):
    core = replay.event(step).core
    view = V.core_view(replay, step, core)
    return core, {b["name"]: [s for s in b["slots"] if s["tile_ref"]] for b in view["buffers"]}


def test_each_buffer_says_its_layout_and_draws_its_fractals_in_their_order(matmul):
    run, replay = matmul
    step = first_mmad(replay)
    core, held = _slots(replay, step)
    assert [s["format"] for s in held["L1"]] == ["NZ", "NZ"]
    assert [s["format"] for s in held["L0A"]] == ["ZZ"] and [s["format"] for s in held["L0B"]] == ["ZN"]
    inputs = get_scenario("matmul").inputs(run.params)
    for buf, want in (("L1", "NZ"), ("L0A", "ZZ"), ("L0B", "ZN")):
        s = held[buf][0]
        tile = V.tile_view(replay, step, core, buf, s["queue"], s["slot"], max_cells=16)
        f = tile["fractals"]
        rows, cols = f["grid"]
        cells = np.array(f["cells"])
        if want == "NZ":  # column of fractals after column of fractals
            expected = np.arange(rows * cols).reshape(cols, rows).T
        else:  # row after row
            expected = np.arange(rows * cols).reshape(rows, cols)
        np.testing.assert_array_equal(cells, expected[: cells.shape[0], : cells.shape[1]])
        assert {a for row in f["inner"] for a in row} == ({"n"} if want == "ZN" else {"z"})
        assert f["format"] == want and f["fractal"] == [16, 16]
        # the numbers are the tile as a matrix: a slice of A or B, wherever its fractals sit
        ref = s["tile_ref"]
        source = inputs[ref["tensor"]]
        corner = source[ref["row"] : ref["row"] + 16, ref["col"] : ref["col"] + 16].astype(np.float64)
        np.testing.assert_allclose(np.array(tile["values"]), corner, atol=1e-5)  # the view rounds to 5 places


def test_the_worked_example_points_at_the_element_it_names(matmul):
    """The example "A[r, c] sits in ... element E of the slot": the E-th element the replay rebuilt is A[r, c]."""
    run, replay = matmul
    step = first_mmad(replay)
    core, held = _slots(replay, step)
    inputs = get_scenario("matmul").inputs(run.params)
    c = replay.index.core_index(core)
    for buf in ("L1", "L0A", "L0B"):
        s = held[buf][0]
        state = replay.slot(step, core, buf, s["queue"], s["slot"])
        content = replay.slot_fractals(core, state)
        f = V.tile_view(replay, step, core, buf, s["queue"], s["slot"])["fractals"]
        where = f["where"]
        tensor, rest = where.split("[", 1)
        r, col = (int(x) for x in rest.split("]")[0].split(", "))
        offset = int(where.split("element ")[1].split(" ")[0])
        writes = replay.tiles.slot_writes(c, state.writer, state.since)
        d = replay.tiles.instr(writes[0]).dst
        first = min(replay.tiles.instr(w).dst.start for w in writes)
        region = d._replace(start=first, rows=1, row_bytes=content.starts[-1] * 2 + 512, stride=0)
        raw = replay.tiles.read_region(c, region, writes)
        assert raw[offset] == inputs[tensor][r, col], (buf, where)


def test_a_fast_path_run_shows_the_same_layouts():
    fast = run_scenario("matmul", "ascend910b1", numerics=False, **PARAMS)
    replay = Replay(fast.result)
    _core, held = _slots(replay, first_mmad(replay))
    assert [s["format"] for s in held["L0A"]] == ["ZZ"] and [s["format"] for s in held["L0B"]] == ["ZN"]
    assert held["L0A"][0]["tile"] == "A[0:112, 0:32]"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_fractal_view_is_in_both_languages_and_the_web_draws_it(matmul, lang):
    _run, replay = matmul
    step = first_mmad(replay)
    core, held = _slots(replay, step)
    s = held["L0B"][0]
    tile = V.tile_view(replay, step, core, "L0B", s["queue"], s["slot"], lang=lang)
    f = tile["fractals"]
    if lang == "zh":
        assert "分形按行排列" in f["format_label"] and "位于分形" in f["where"] and "次序" in f["legend"]
    else:
        assert f["format_label"].startswith("ZN (CANN's Zn)") and "sits in fractal" in f["where"]
    html = str(panels.tile_panel(tile, lang))
    assert "fractals" in html and "↓" in html and f["title"] in html
