"""Lane names (``app/present/lanes.py``): made from the lanes' typed fields, equal to the engine's labels in English,
and Chinese in Chinese, in the views both UIs draw."""

from __future__ import annotations

import re

import pytest

from app.present import Replay, views
from app.present.lanes import lane_name
from app.present.walkthrough import run_lesson
from engine.scenarios.runner import run_scenario
from engine.trace import LaneKind
from lessons.catalog import get

# words a Chinese lane name may keep: the cores' and the copy directions' names and the pipes (hardware names)
ALLOWED = {
    "AIC",
    "AIV",
    "AI",
    "Core",
    "H2D",
    "D2H",
    "D2D",
    "H2H",
    "SCALAR",
    "VECTOR",
    "CUBE",
    "MTE1",
    "MTE2",
    "MTE3",
    "FIXP",
}


@pytest.fixture(scope="module")
def runs():
    return {
        "lesson 1": run_lesson(get(1)),
        "matmul": run_scenario("matmul", m=128, n=128, k=64).result,
        "pipeline": run_scenario("pipeline", n=64, batches=3, streams=2).result,
    }


def test_every_lane_is_named_from_its_fields(runs):
    kinds = set()
    for name, result in runs.items():
        for lane in result.trace.lanes:
            kinds.add(LaneKind(lane.kind))
            assert lane_name(lane, "en") == lane.label, name
            zh = lane_name(lane, "zh")
            latin = set(re.findall(r"[A-Za-z][A-Za-z0-9]*", zh)) - ALLOWED
            assert not latin, (name, lane.label, zh)
            if lane.kind != LaneKind.PIPE:
                assert re.search("[\u4e00-\u9fff]", zh), (name, lane.label, zh)
    assert kinds >= {
        LaneKind.HOST,
        LaneKind.STREAM,
        LaneKind.COPY_ENGINE,
        LaneKind.KERNELS,
        LaneKind.PIPE,
        LaneKind.BLOCK,
    }


def test_the_views_name_lanes_in_the_language_asked(runs):
    replay = Replay(runs["pipeline"])
    step = len(replay) // 2
    zh = views.timeline_view(replay, step, lang="zh")["lanes"]
    en = views.timeline_view(replay, step, lang="en")["lanes"]
    assert [x["label"] for x in en] == [runs["pipeline"].trace.lanes[x["id"]].label for x in en]
    assert "主机/主机线程" in [x["label"] for x in zh] and "设备 0 的流/默认流" in [x["label"] for x in zh]
    system = views.system_view(replay, step, "zh")
    assert {s["label"] for s in system["streams"]} >= {"默认流", "流 1"}
    assert {e["label"] for e in system["link"]["engines"]} >= {"H2D 引擎 0", "D2H 引擎 0"}
    lane = replay.event(step).lane
    assert lane_name(lane, "zh") in system["event"] and lane.label not in system["event"]
