"""The selector resolver: a lesson step points into a run by data, never by a row number."""

import pytest

from engine.aicore.pipes import Pipe
from engine.device.stream import TaskKind
from engine.trace import Kind, Lane, LaneKind, Trace
from lessons.selectors import SelectorError, describe, lane_facts, resolve


@pytest.fixture
def trace():
    t = Trace()
    host = t.lane("Host", "host thread", 0, LaneKind.HOST)
    s1 = t.lane("Device 0 streams", "stream 1", 1, LaneKind.STREAM, unit=1)
    s2 = t.lane("Device 0 streams", "stream 2", 1, LaneKind.STREAM, unit=2)
    h2d = t.lane("Device 0 copy engines", "H2D engine 0", 2, LaneKind.COPY_ENGINE, unit=0, direction="H2D")
    cube0 = t.lane("AIC 0", "CUBE", 10, LaneKind.PIPE, core=0, core_type="AIC", pipe=int(Pipe.M))
    cube1 = t.lane("AIC 1", "CUBE", 11, LaneKind.PIPE, core=1, core_type="AIC", pipe=int(Pipe.M))
    mte2 = t.lane("AIV 3", "MTE2", 103, LaneKind.PIPE, core=3, core_type="AIV", pipe=int(Pipe.MTE2))
    copy, mmad, call = t.name("H2D copy"), t.name("mmad"), t.name("acl.init")
    t.add(0, 10, host, Kind.CALL, call)  # row 0
    first, second = (t.task(seq, stream, int(TaskKind.COPY), 0, -1, "H2D") for seq, stream in ((1, 1), (2, 2)))
    t.add(20, 30, s1, Kind.COPY, copy, detail=first)  # 1 (and its engine row, 2): the direction is the task's
    t.add(20, 30, h2d, Kind.COPY, copy, detail=first)
    t.add(40, 50, s2, Kind.COPY, copy, detail=second)  # 3
    t.add(40, 50, h2d, Kind.COPY, copy, detail=second)
    t.add(60, 70, cube1, Kind.COMPUTE, mmad)  # 5
    t.add(65, 75, cube0, Kind.COMPUTE, mmad)  # 6
    t.add(80, 90, cube0, Kind.COMPUTE, mmad)  # 7
    t.add(81, 82, mte2, Kind.MOVE, t.name("data_copy GM->UB"))  # 8
    return t.freeze()


def test_first_mmad_on_core_0(trace):
    assert resolve(trace, {"kind": "COMPUTE", "name": "mmad", "core": 0, "nth": 0}) == 6
    assert resolve(trace, {"kind": "COMPUTE", "name": "mmad", "core": 0, "nth": 1}) == 7
    assert resolve(trace, {"kind": "COMPUTE", "name": "mmad"}) == 5  # any core: the earliest


def test_copies_count_once_on_their_stream(trace):
    assert resolve(trace, {"kind": "COPY", "direction": "H2D", "nth": 1}) == 3
    assert resolve(trace, {"kind": "COPY", "stream": 2}) == 3
    assert resolve(trace, {"kind": "COPY", "lane": "copy_engine", "nth": -1}) == 4


def test_lane_kinds_pipes_and_negative_nth(trace):
    assert resolve(trace, {"kind": "CALL", "lane": "host"}) == 0
    assert resolve(trace, {"kind": "MOVE", "pipe": "MTE2", "core_type": "AIV", "core": 3}) == 8
    assert resolve(trace, {"kind": "COMPUTE", "nth": -1}) == 7
    assert resolve(trace, {"name_prefix": "data_copy"}) == 8


def test_too_few_matches_and_bad_keys_name_the_problem(trace):
    with pytest.raises(SelectorError, match=r"matches 3 row\(s\); nth=3"):
        resolve(trace, {"kind": "COMPUTE", "name": "mmad", "nth": 3})
    with pytest.raises(SelectorError, match="selector key 'row'"):
        resolve(trace, {"row": 4})
    with pytest.raises(SelectorError, match="selector kind must be one of"):
        resolve(trace, {"kind": "COMPUTES"})
    with pytest.raises(SelectorError, match="selector pipe must be one of"):
        resolve(trace, {"pipe": "MTE9"})
    with pytest.raises(SelectorError, match="selector core must be an integer"):
        resolve(trace, {"core": "0"})


def test_lane_facts_read_the_typed_lane_fields():
    pipe = Lane("AIC 12", "CUBE", 22, LaneKind.PIPE, core=12, core_type="AIC", pipe=int(Pipe.M))
    assert (lane_facts(pipe).kind, lane_facts(pipe).core, lane_facts(pipe).pipe) == ("pipe", 12, "CUBE")
    assert lane_facts(Lane("AIV 3", "BLOCK", 103, LaneKind.BLOCK, core=3, core_type="AIV")).kind == "block"
    assert lane_facts(Lane("Device 0 streams", "default stream", 1, LaneKind.STREAM, unit=0)).stream == 0
    engine = Lane("Device 0 copy engines", "D2H engine 0", 2, LaneKind.COPY_ENGINE, unit=0, direction="D2H")
    assert lane_facts(engine).direction == "D2H"
    assert lane_facts(Lane("Something", "else", 9)).kind == "other"


def test_describe_reads_like_the_lesson_says():
    assert describe({"kind": "COMPUTE", "name": "mmad", "core": 0}) == "#1 compute name=mmad core 0"
    assert describe({"kind": "COPY", "direction": "H2D", "nth": 1}) == "#2 copy direction=H2D"
