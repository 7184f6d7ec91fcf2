"""The pipeline's prefetch mode (seed 5.1 through the StreamManager) against hand-computed timelines.

Round profile: every host call costs 1 us, a 64x64 fp16 copy (8 KiB) 7.8125 us on the one H2D or D2H
engine, a 64^3 matmul 100 us on the cores, no kernel start cost. Three batches.
"""

import itertools

import numpy as np
import pytest

from engine import Simulation
from engine.analysis.phases import phases
from engine.scenarios.pipeline import run as run_pipeline
from engine.trace import Kind, LaneKind
from tests.conftest import ROUND

COPY, MATMUL = 7.8125, 100.0


def pipeline(streams, depth, batches=3):
    sim = Simulation(ROUND, numerics=False, strict=True)
    run_pipeline(sim, n=64, batches=batches, streams=streams, pageable=False, seed=0, prefetch_depth=depth)
    return sim.finish()


def stream_log(result):
    t = result.trace
    rows = np.flatnonzero(t.rows_on(LaneKind.STREAM))
    return [(t.start[r] / 1e6, t.end[r] / 1e6, t.lanes[t.lane[r]].thread, t.names[t.name[r]]) for r in rows]


def test_depth_1_on_two_streams_by_hand():
    """Host: init, set_device, 2 streams, 2 x 3 device buffers, 3 x 3 pinned buffers: 19 us. Then copy in
    batch 0 on stream 1 (calls at 19, 20; event 21-23), copy in batch 1 (23, 24; event 25-27), compute batch
    0 on stream 2 (wait event 1 at 27-28, matmul 28-29, copy out 29-30, event 30-32), copy in batch 2
    after compute 0 (wait at 32-33 ...), compute 1, compute 2."""
    log = stream_log(pipeline(2, 1))
    copies_in = [(s, e) for s, e, lane, name in log if name == "H2D copy"]
    assert copies_in == [
        (20.0, 27.8125),
        (27.8125, 35.625),
        (35.625, 43.4375),
        (43.4375, 51.25),
        (143.4375, 151.25),
        (151.25, 159.0625),
    ]  # batch 2 waits until compute 0 freed set 0
    kernels = [(s, e, lane) for s, e, lane, name in log if name.startswith("matmul")]
    assert kernels == [(35.625, 135.625, "stream 2"), (143.4375, 243.4375, "stream 2"), (251.25, 351.25, "stream 2")]
    outs = [(s, e) for s, e, lane, name in log if name == "D2H copy"]
    assert outs == [(135.625, 143.4375), (243.4375, 251.25), (351.25, 359.0625)]


def test_one_stream_serialises_everything_by_hand():
    """One stream: the same program minus one stream creation, and FIFO order: copy 0, copy 1, compute 0,
    copy 2, compute 1, compute 2: the work ends at 18 + 2 copies + ... = 389.3125 us."""
    result = pipeline(1, 1)
    work = phases(result)["work"]
    assert (work["start_us"], work["end_us"]) == (19.0, 389.3125)
    expected = 19 + 6 * COPY + 3 * MATMUL + 3 * COPY + 0.0  # copies and kernels back to back on one FIFO
    assert work["end_us"] == pytest.approx(expected + 1 - 1 + 0)  # the first copy is submitted at 20 - 1


@pytest.mark.parametrize(("streams", "depth"), list(itertools.product((1, 2, 3, 4), (1, 2, 3, 4))))
def test_prefetch_orders_and_never_blocks_compute_behind_copies(streams, depth):
    result = pipeline(streams, depth, batches=5)
    t = result.trace
    assert result.findings == []  # no cross-stream race: events order every reuse of a buffer set
    log = stream_log(result)
    copies = [(s, e, lane) for s, e, lane, name in log if name == "H2D copy"]
    kernels = [(s, e, lane) for s, e, lane, name in log if name.startswith("matmul")]
    outs = [(s, e, lane) for s, e, lane, name in log if name == "D2H copy"]
    assert len(copies) == 10 and len(kernels) == len(outs) == 5
    for i in range(5):
        assert kernels[i][0] >= copies[2 * i + 1][1]  # compute after its own copy in
        if i >= depth + 1:
            assert copies[2 * i][0] >= outs[i - depth - 1][1]  # the set is free again
        if streams > 1:
            assert copies[2 * i][2] == "stream 1" and kernels[i][2] != "stream 1"  # roles
    # compute never waits for copies it does not need: on one compute stream a kernel follows the previous
    # batch's copy out; on several, it starts the moment the cores are free
    if streams == 2:
        assert all(b[0] == a[1] + COPY for a, b in itertools.pairwise(kernels))
    elif streams > 2:
        assert all(b[0] == a[1] for a, b in itertools.pairwise(kernels))
    marks = [t.names[t.name[r]] for r in np.flatnonzero(t.kind == Kind.MARK)]
    assert "mark batch 0 copy in -> stream 1" in marks


def test_deeper_prefetch_is_not_slower_with_roles():
    """The old least-busy placement made depth 2 slower than depth 1 (compute queued behind copies on a FIFO
    stream). With roles a deeper prefetch costs at most the host time of queueing its extra copy tasks (4
    calls of 1 us each) before the first compute: these batches are all alike, so depth buys nothing more."""
    spans = {}
    for depth in (1, 2, 3, 4):
        work = phases(pipeline(2, depth, batches=6))["work"]
        spans[depth] = work["end_us"] - work["start_us"]
    for depth, span in spans.items():
        assert 0 <= span - spans[1] <= 4 * (depth - 1), spans
