"""The replay's state equals what the engine really did: tile values against the call-by-call path's
buffers after every instruction, slot states against its queues, on several kernels and shapes."""

from collections import defaultdict

import numpy as np
import pytest

from app.present import Breakpoint, Replay, StepFilter
from engine.scenarios.runner import get_scenario, run_scenario
from engine.trace import LaneKind
from engine.trace.detail import NO_SLOT, QueueOp, QueueOpKind
from engine.trace.locations import CoreRef
from tests.replay_helpers import run_with_truth

CASES = [
    ("vector-add", {"length": 5000, "tile_length": 512, "cores": 3}),
    ("vector-add", {"length": 4096, "tile_length": 1024, "cores": 2, "buffer_num": 1}),
    ("matmul", {"m": 256, "n": 256, "k": 256, "cores": 4}),
    ("matmul", {"m": 300, "n": 200, "k": 100, "cores": 3}),
    ("matmul", {"m": 257, "n": 129, "k": 300, "cores": 2, "base": "64,64,32", "buffer_num": 1}),
    ("matmul-leaky-relu", {"m": 128, "n": 96, "k": 64, "cores": 2}),
]


def _replay(result, name, values):
    scenario = get_scenario(name)
    return Replay(result, inputs=scenario.inputs(values))


@pytest.mark.parametrize(("name", "params"), CASES)
def test_tile_values_equal_the_engines_buffers(name, params):
    result, truth, values = run_with_truth(name, **params)
    replay = _replay(result, name, values)
    t = result.trace
    checked = 0
    for (core_name, detail), snapshots in truth.writes.items():
        c = replay.index.core_index(replay.core_named(core_name))
        rows = replay.index.core_rows(c)
        rows = rows[t.detail[rows] == detail]
        assert len(rows) == len(snapshots), (core_name, t.details[detail])
        for row, expected in zip(rows, snapshots, strict=True):
            got = replay.tiles.values(c, int(row))
            np.testing.assert_array_equal(got, expected, err_msg=f"{core_name} row {row} {t.details[detail].op}")
            checked += 1
    assert checked >= 16


@pytest.mark.parametrize(("name", "params"), CASES)
def test_slot_states_follow_the_engines_queues(name, params):
    """Per core and queue slot, the replay's sequence of states (ordered by when each change takes effect)
    is the engine's sequence of alloc / enque / deque / free, in program order."""
    result, truth, _values = run_with_truth(name, **params)
    t = result.trace
    names = {QueueOpKind.ALLOC: "allocated", QueueOpKind.ENQUE: "enqueued", QueueOpKind.DEQUE: "dequeued"}
    names[QueueOpKind.FREE] = "free"
    replay = Replay(result)
    for c, core in enumerate(replay.index.cores):
        expected = defaultdict(list)
        for queue, slot, state in truth.slot_changes.get(core.ref.label, []):
            expected[(queue, slot)].append(state)
        got = defaultdict(list)
        for effects in replay.index.queue_index(c).values():
            for row in effects.rows:
                d = t.detail_of(int(row))
                if isinstance(d, QueueOp) and d.op in names:
                    got[(d.queue, d.slot)].append(names[d.op])
        assert got == expected, core.ref


def test_state_at_a_step_of_a_256_matmul_on_4_cores():
    run = run_scenario("matmul", m=256, n=256, k=256, cores=4)
    replay = Replay(run.result, inputs=get_scenario("matmul").inputs(run.params))
    t = replay.trace  # the first COMPUTE row is the scalar unit issuing (SCALAR lane): look for the mmad by name
    first_mmad = replay.next_where(0, np.flatnonzero((t.kind == 6) & (t.name == t.names.index("mmad"))))
    state = replay.state_at(first_mmad)
    assert state.event.name == "mmad"
    core = next(c for c in state.cores if c.core == state.event.core)
    assert core.active and core.block is not None
    cube = next(p for p in core.pipes if p.pipe == "CUBE")
    assert cube.busy and cube.name == "mmad" and cube.row == state.row
    buffers = {b.name: b for b in core.buffers}
    assert set(buffers) == {"L1", "L0A", "L0B", "L0C"}
    assert buffers["L1"].capacity == 512 * 1024 and 0 < buffers["L1"].used <= buffers["L1"].capacity
    a2 = [s for s in buffers["L0A"].slots if s.tile is not None]
    assert a2 and a2[0].tile["tensor"] == "A"
    # the operands of the mmad are the tiles in L0A / L0B, and their numbers are slices of A and B
    inputs = get_scenario("matmul").inputs(run.params)
    slot = a2[0]
    values = replay.tile_values(first_mmad, core.core, "L0A", slot.queue, slot.slot)
    tile = slot.tile
    np.testing.assert_array_equal(
        values[: tile["rows"], : tile["cols"]],
        inputs["A"][tile["row"] : tile["row"] + tile["rows"], tile["col"] : tile["col"] + tile["cols"]],
    )


def test_streams_and_engines_of_a_pipeline():
    run = run_scenario("pipeline", n=256, batches=4, streams=2, numerics=False)
    replay = Replay(run.result)
    t = replay.trace
    copies = np.flatnonzero((t.kind == 2) & t.rows_on(LaneKind.COPY_ENGINE))
    step = replay.step_of_row(int(copies[0]))
    state = replay.state_at(step)
    busy = [e for e in state.engines if e.copy is not None]
    assert busy and busy[0].direction == "H2D" and 0 <= busy[0].bytes_done <= busy[0].bytes_total == 256 * 256 * 2
    first = next(s for s in state.streams if s.running is not None)
    assert first.running.kind == "COPY" and first.running.start <= state.time < first.running.end
    # somewhere the host has queued work ahead of the device: pending tasks were submitted and have not started
    queued = 0
    for step in range(0, len(replay), 7):
        now = replay.state_at(step)
        for stream in now.streams:
            for task in stream.pending:
                assert task.submit <= now.time and (task.start == -1 or task.start >= now.time)
                queued += 1
    assert queued > 0
    end = replay.state_at(len(replay) - 1)
    assert all(s.running is None and s.pending_count == 0 for s in end.streams)
    assert sum(s.done for s in end.streams) == 16


def test_navigation_filters_and_breakpoints():
    run = run_scenario("matmul", m=128, n=128, k=128, cores=2, numerics=False)
    full = Replay(run.result)
    aic0, aic1 = CoreRef("AIC", 0), CoreRef("AIC", 1)
    only = Replay(run.result, step_filter=StepFilter(cores=frozenset({aic0})))
    assert 0 < len(only) < len(full)
    cores = {only.event(s).core for s in range(len(only))}
    assert aic1 not in cores and aic0 in cores and None in cores  # host and stream rows are kept
    s = full.next_of_kind(0, "COMPUTE")
    assert full.event(s).kind == "COMPUTE"
    assert full.next_of_kind(s, "COMPUTE", forward=False) is None or full.next_of_kind(s, "COMPUTE", False) < s
    assert full.toggle_breakpoint(Breakpoint(core=aic1))
    hit = full.next_breakpoint(0)
    assert full.event(hit).core == aic1 and full.event(hit).lane.label.startswith("AIC 1/")
    assert not full.toggle_breakpoint(Breakpoint(core=aic1))
    assert full.next_breakpoint(0) is None


def test_a_slot_holds_its_content_since_the_last_alloc_before_its_write():
    """``SlotState.since`` (memoised alloc rows, a binary search per slot) against a scan of the trace: the slot's
    last ``alloc_tensor`` row before the write that filled it, or the block's start if later."""
    run = run_scenario("matmul", m=256, n=256, k=512, cores=2, numerics=False)
    replay = Replay(run.result)
    t = replay.trace
    allocs = defaultdict(list)  # (core, queue, slot) -> alloc rows, in row order
    for c in range(len(replay.index.cores)):
        for row in replay.index.core_rows(c).tolist():
            d = t.detail_of(row)
            if isinstance(d, QueueOp) and d.op == QueueOpKind.ALLOC:
                allocs[(c, d.queue, d.slot)].append(row)
    checked = 0
    for step in range(0, len(replay), 7):
        state = replay.state_at(step)
        for core in state.cores:
            c = replay.index.core_index(core.core)
            for buf in core.buffers:
                for s in buf.slots:
                    if s.writer < 0:
                        continue
                    key = (c, s.queue, NO_SLOT if s.slot < 0 else s.slot)
                    before = [r for r in allocs.get(key, ()) if r < s.writer]
                    block_row = replay.index.block_at(c, state.row)
                    assert s.since == max(block_row, before[-1] if before else -1), (step, core.core, s)
                    checked += 1
    assert checked > 100
