"""Which core and which source line travel as typed fields (CoreRef, SourceLine), through the presenter and
the JSON edge, and the UIs' words (Activity, SlotStatus) are defined once. Nothing above the trace parses
a core's name or a "file:line"."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from app.present import Breakpoint, Replay, StepFilter
from app.present.frames import frames
from app.present.messages import LANGS
from app.present.messages import t as msg
from app.present.views import timeline_view
from app.present.vocabulary import Activity, SlotStatus
from engine.aicore.pipes import Pipe
from engine.scenarios.runner import run_scenario
from engine.trace import Kind, Lane, LaneKind
from engine.trace.locations import CoreRef, SourceLine

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def replay():
    run = run_scenario("vector-add", length=4 * 2048, tile_length=1024, cores=2, numerics=False)
    return Replay(run.result)


def test_a_core_reference_names_itself_and_round_trips_through_json():
    ref = CoreRef("AIV", 17)
    assert (ref.label, ref.short, ref.css) == ("AIV 17", "V17", "aiv")
    assert CoreRef.from_dict(json.loads(json.dumps(ref.to_dict()))) == ref
    assert ref.to_dict() == {"kind": "AIV", "index": 17}
    assert sorted([CoreRef("AIV", 0), CoreRef("AIC", 10), CoreRef("AIC", 2)]) == [
        CoreRef("AIC", 2),
        CoreRef("AIC", 10),
        CoreRef("AIV", 0),
    ]  # as viewers list cores: AICs first, by number (not by text: "AIC 10" < "AIC 2")
    lane = Lane("AIC 3", "MTE2", 3, LaneKind.PIPE, core=3, core_type="AIC", pipe=5)
    assert CoreRef.of_lane(lane) == CoreRef("AIC", 3) and CoreRef.of_lane(Lane("Host", "host thread", 0)) is None
    with pytest.raises(ValueError, match="kind is one of AIC, AIV"):
        CoreRef("AI", 1)
    with pytest.raises(ValueError, match="whole number >= 0"):
        CoreRef("AIC", -1)


def test_a_source_line_round_trips_through_json_and_parses_only_file_and_line():
    src = SourceLine("lessons/l01_host_lifecycle/solution.py", 42)
    assert (src.label, src.name) == ("lessons/l01_host_lifecycle/solution.py:42", "solution.py")
    assert SourceLine.from_dict(json.loads(json.dumps(src.to_dict()))) == src
    assert SourceLine.parse(src.label) == src and SourceLine.parse(" C:/x/a.py:7 ") == SourceLine("C:/x/a.py", 7)
    for bad in ("a.py", "a.py:", "a.py:x", ":3", "a.py:0"):
        with pytest.raises(ValueError):
            SourceLine.parse(bad)


def first_vector_op(replay) -> int:
    """The step of the first row on a VECTOR pipe (the first COMPUTE row is the scalar unit issuing)."""
    t = replay.trace
    vector = [i for i, lane in enumerate(t.lanes) if lane.pipe == Pipe.V]
    return replay.next_where(0, np.flatnonzero(np.isin(t.lane, vector) & (t.kind == Kind.COMPUTE)))


def test_the_state_at_a_step_carries_its_core_and_lines_as_fields(replay):
    step = first_vector_op(replay)
    state = replay.state_at(step)
    event = state.event
    assert event.core == CoreRef("AIV", 0) and event.lane.label == "AIV 0/VECTOR"
    assert isinstance(event.src, SourceLine) and event.src.file == "engine/kernels/vector_add.py"
    doc = json.loads(json.dumps(state.to_dict()))  # the JSON edge: references as their fields
    assert CoreRef.from_dict(doc["event"]["core"]) == event.core
    assert SourceLine.from_dict(doc["event"]["src"]) == event.src
    assert [CoreRef.from_dict(c["core"]) for c in doc["cores"]] == [c.core for c in state.cores]
    busy = next(p for c in state.cores for p in c.pipes if p.busy)
    assert busy.src is not None and doc["host"]["src"] == (state.host.src.to_dict() if state.host.src else None)


def test_breakpoints_match_typed_cores_and_lines(replay):
    step = first_vector_op(replay)
    event = replay.event(step)
    rows = Breakpoint(src=event.src).rows(replay)
    assert len(rows) and all(replay.event_at_row(int(r)).src == event.src for r in rows)
    rows = Breakpoint(kind="COMPUTE", core=event.core).rows(replay)
    assert len(rows) and all(replay.event_at_row(int(r)).core == event.core for r in rows)
    assert replay.core_named(event.core.label) == event.core
    with pytest.raises(KeyError, match="no core 'AIV 9'"):
        replay.core_named("AIV 9")
    # a name where a reference belongs would silently match nothing: refused
    with pytest.raises(TypeError, match="core is a CoreRef"):
        Breakpoint(core="AIV 0")
    with pytest.raises(TypeError, match="src is a SourceLine"):
        Breakpoint(src=event.src.label)
    with pytest.raises(TypeError, match="StepFilter cores are CoreRef"):
        StepFilter(cores=frozenset({"AIV 0"}))
    with pytest.raises(TypeError, match="opened up is a CoreRef"):
        frames(replay, 0, 10, "AIV 0")
    with pytest.raises(TypeError, match="to expand are CoreRef"):
        timeline_view(replay, 0, expand=("AIV 0",))


def test_each_word_of_the_uis_is_defined_once_with_its_codes_and_translations():
    assert len({a.code for a in Activity}) == len(Activity) and len({a.glyph for a in Activity}) == len(Activity)
    assert [a.value for a in Activity] == ["cube", "vector", "load", "store", "wait", "busy", "idle"]
    assert json.dumps({"a": Activity.CUBE, "s": SlotStatus.IN_USE}) == '{"a": "cube", "s": "in use"}'
    for lang in LANGS:
        for a in Activity:
            assert msg(f"activity.{a}", lang, block=1)
        for s in SlotStatus:
            assert msg(f"state.{s}", lang)
    css = (ROOT / "app/web/assets/style.css").read_text()
    tcss = (ROOT / "app/tui/ascendsim.tcss").read_text()
    for a in Activity:
        assert f".cell.{a.css}" in css and f".{a.style} " in tcss, a
    for s in SlotStatus:
        assert s.css == "free" or f".slot.{s.css}" in css, s
        assert f".{s.style} " in tcss, s


# the front ends and the presenter: none of them takes a core's name or a source line apart
_PARSERS = re.compile(r"""\.split\(" "\)|rpartition\(" "\)|rpartition\(":"\)|rsplit\(":"|split\(":"\)|"AI[CV] \{""")
_SCANNED = ("app/present", "app/tui", "app/web/render.py", "app/web/panels.py", "app/web/player.py", "app/web/runs.py")


def test_nothing_above_the_trace_parses_a_core_name_or_a_source_line():
    files = [p for name in _SCANNED for p in sorted((ROOT / name).rglob("*.py")) or [ROOT / name]]
    files.append(ROOT / "app/web/assets/player.js")
    found = [
        f"{path.relative_to(ROOT)}:{i}: {line.strip()}"
        for path in files
        for i, line in enumerate(path.read_text().splitlines(), start=1)
        if _PARSERS.search(line)
    ]
    assert found == []
