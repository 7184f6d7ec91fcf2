"""Frames (app.present.frames): every frame of a window equals the view-models computed step by step."""

import json

import numpy as np
import pytest

from app.present import Breakpoint, Replay
from app.present import views as V
from app.present.frames import FrameSource, frame, frames, outline
from app.present.vocabulary import Activity
from app.server.store import RunSpec
from engine import Simulation
from engine.scenarios.runner import run_scenario
from engine.trace.locations import CoreRef
from lessons.catalog import get

RUNS = {
    "vector-add": {"length": 4096, "tile_length": 512, "cores": 2},
    "matmul": {"m": 256, "n": 256, "k": 256, "cores": 4},
    "matmul-odd": {"m": 200, "n": 136, "k": 72, "cores": 3},
    "matmul-leaky-relu": {"m": 128, "n": 128, "k": 128, "cores": 2},
}


def _replay(name):
    scenario = "matmul" if name == "matmul-odd" else name
    r = run_scenario(scenario, **RUNS[name])
    spec = RunSpec.of(scenario, "ascend910b1", r.params, True)
    return Replay(r.result, inputs=spec.inputs(), context={"params": r.params})


@pytest.fixture(scope="module")
def lesson1():
    sim = Simulation()
    get(1).module("scenario").scenario(sim)
    return Replay(sim.finish())


def _expected(replay, step, core, lang):
    sv = V.system_view(replay, step, lang)
    cv = V.core_view(replay, step, core, lang)
    for p in cv["pipes"]:
        del p["progress"]
    return sv, cv


def _check_every_step(replay, core, lang="en"):
    w = frames(replay, 0, len(replay), core, lang)
    assert w["count"] == len(replay)
    names = [t["name"] for t in outline(replay)["outputs"]]
    for s in range(len(replay)):
        f = frame(w, s)
        sv, cv = _expected(replay, s, core, lang)
        assert f["labels"] == sv["step_label"]
        assert f["events"] == sv["event"]
        assert f["times"] == sv["time_us"]
        assert f["host"] == {k: sv[k] for k in ("host", "link", "streams")}
        assert f["grid"] == "".join(Activity(c["activity"]).code for c in sv["device"]["cores"]), s
        assert f["core"] == cv, s
        assert f["code"] == V.code_view(replay, s, 10, lang)
        if replay.result.gm:
            mv = V.matrices_view(replay, s, 8, lang)
            want = sorted(
                (i, t["core"], t["buffer"], t["row"], t["col"], t["rows"], t["cols"])
                for i, tensor in enumerate(mv["tensors"])
                for t in tensor["tiles"]
            )
            cores = [c.ref.label for c in replay.index.cores]
            got = sorted((a, cores[c], *rest) for c, tiles in f["tiles"].items() for a, *rest in tiles)
            assert got == want, s
            done = {t["name"]: t["done_count"] for t in mv["tensors"] if "done_count" in t}
            assert dict(zip(names, f["done"], strict=True)) == done, s
    return w


@pytest.mark.parametrize("name", list(RUNS))
def test_every_frame_equals_the_view_models(name):
    replay = _replay(name)
    w = _check_every_step(replay, replay.index.cores[0].ref)
    # consecutive steps repeat their parts: each is stored once
    assert len(w["parts"]["core"]) < len(replay) and len(w["parts"]["host"]) < len(replay) / 4


def test_lesson_run_frames_in_chinese(lesson1):
    _check_every_step(lesson1, CoreRef("AIV", 3), "zh")


def test_a_window_from_the_middle_equals_the_same_steps_of_the_whole(lesson1):
    whole = frames(lesson1, 0, len(lesson1), CoreRef("AIV", 0))
    part = FrameSource(lesson1).frames(100, 57, CoreRef("AIV", 0))
    assert (part["first"], part["count"]) == (100, 57)
    for s in range(100, 157):
        assert frame(part, s) == frame(whole, s)
    with pytest.raises(IndexError):
        frame(part, 99)


def test_a_window_is_clipped_to_the_run(lesson1):
    w = frames(lesson1, len(lesson1) - 10, 1000, CoreRef("AIV", 0))
    assert w["first"] == len(lesson1) - 10 and w["count"] == 10
    assert frames(lesson1, -5, 3, CoreRef("AIV", 0))["first"] == 0


def test_breakpoints_mark_their_steps_in_the_window(lesson1):
    bps = (Breakpoint(kind="KERNEL"), Breakpoint(kind="COPY"))
    w = frames(lesson1, 0, len(lesson1), CoreRef("AIV", 0), "en", bps)
    rows = np.union1d(bps[0].rows(lesson1), bps[1].rows(lesson1))
    expected = [s for s in range(len(lesson1)) if lesson1.row(s) in set(rows.tolist())]
    assert w["breaks"] == expected and len(expected) >= 4
    assert all(lesson1.event(s).kind in ("KERNEL", "COPY") for s in w["breaks"])


def test_a_run_without_cores_has_no_core_part():
    r = run_scenario("pipeline", n=128, batches=3, streams=2)
    replay = Replay(r.result)
    w = frames(replay, 0, len(replay))
    assert w["core"] is None and "core" not in w["parts"]
    assert set(w["parts"]["grid"][0]) == {"i"}


def test_outline_lists_output_tiles_in_landing_order_with_their_core():
    replay = _replay("matmul")
    o = outline(replay)
    assert o["n"] == len(replay) and o["cores"][:4] == ["AIC 0", "AIC 1", "AIC 2", "AIC 3"]
    (c,) = o["outputs"]
    assert c["name"] == "C" and c["total"] == len(c["tiles"]) == 4  # 128 x 128 base blocks
    cells = np.zeros((256, 256), dtype=int)
    for row, col, rows, cols, core in c["tiles"]:
        assert 0 <= core < 4
        cells[row : row + rows, col : col + cols] += 1
    assert (cells == 1).all()  # the output tiles cover C exactly once
    last = frame(frames(replay, len(replay) - 1, 1, CoreRef("AIC", 0)), len(replay) - 1)
    assert last["done"] == [c["total"]]


def test_a_window_is_small_json(lesson1):
    w = frames(lesson1, 0, len(lesson1), CoreRef("AIV", 0))
    size = len(json.dumps(w))
    assert size < 800 * len(lesson1)  # bytes per step, parts included (575 measured)


class _EveryTensor(dict):
    """Every tensor name a tile may carry, each with an index (a run without named GM tensors still has tiles)."""

    def __contains__(self, name) -> bool:
        return True

    def __getitem__(self, name) -> int:
        return self.setdefault(name, len(self))


@pytest.mark.parametrize("name", ["matmul-odd", "matmul-leaky-relu", "vector-add", "dynamic-shapes"])
def test_the_tiles_of_a_whole_window_are_each_steps_own_slot_for_slot(name):
    """The window's tile pass (all steps at once) lists, at every step and for every core, what the one-step path
    (the core's state: its buffers' slots) lists, in the same order. dynamic-shapes runs 8 blocks on each core:
    what an earlier block wrote is not held by a later one."""
    from app.present.tile_pass import core_tiles

    if name == "dynamic-shapes":
        replay = Replay(run_scenario(name, count=3).result)
        tensors = _EveryTensor()
    else:
        replay = _replay(name)
        tensors = {info.name: i for i, info in enumerate(replay.result.gm.values())}
    rows = replay.steps.astype(np.int64)
    cores = range(len(replay.index.cores))
    if name == "dynamic-shapes":  # core 0 into its second block (the whole run takes half a minute)
        second = replay.index.lane_rows[replay.index.cores[0].block_lane][1]
        rows, cores = rows[rows <= second + 300], (0,)
    times = replay.trace.start[rows].astype(np.int64)
    held = 0
    for c in cores:
        want = []
        for row, time in zip(rows.tolist(), times.tolist(), strict=True):
            state = replay.core_state(c, row, time)
            want.append(
                [
                    [tensors[s.tile["tensor"]], b.name, s.tile["row"], s.tile["col"], s.tile["rows"], s.tile["cols"]]
                    for b in state.buffers
                    for s in b.slots
                    if s.tile and s.tile["tensor"] in tensors
                ]
            )
        assert core_tiles(replay, c, rows, times, tensors) == want, c
        held += sum(map(len, want))
    assert held, "no core held a tile at any step: the test would compare nothing"
