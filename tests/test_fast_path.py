"""The fast path produces exactly the straightforward path's program and trace, event for event."""

from dataclasses import replace

import numpy as np
import pytest

from engine import Simulation, asc, load_profile
from engine.aicore.matmul_tiling import auto_tiling, make_tiling
from engine.kernels.matmul import matmul_tiled
from tests.kernel_helpers import from_device, inputs, to_device

PROFILE = load_profile("ascend910b1")
TIMING_COLUMNS = ("start", "end", "lane", "kind", "name", "nbytes", "flops", "buf", "slot", "src", "cause")


def run(fast, m, n, k, tiling, numerics=True, b_trans=False):
    sim = Simulation("ascend910b1", numerics=numerics, fast=fast)
    sim.acl.init()
    sim.acl.rt.set_device(0)
    stream, _ = sim.acl.rt.create_stream()
    a, b = inputs(m, n, k, seed=11)
    da, db = to_device(sim, a), to_device(sim, np.ascontiguousarray(b.T) if b_trans else b)
    dc, _ = sim.acl.rt.malloc(m * n * 2, 0)
    args = (asc.GlobalAddress(da), asc.GlobalAddress(db), asc.GlobalAddress(dc), tiling, b_trans)
    sim.acl.rt.launch_kernel(matmul_tiled, tiling.usedCoreNum, stream, *args)
    assert sim.acl.rt.synchronize_stream(stream) == 0
    c = from_device(sim, dc, (m, n), np.float16)
    return c, sim.finish()


CASES = [
    ((300, 200, 100), None, False),
    ((257, 129, 300), None, False),
    ((150, 170, 190), make_tiling(150, 170, 190, 24, (32, 48, 16), 2, 3, 2, 3, 1), False),
    ((512, 512, 512), make_tiling(512, 512, 512, 24, (64, 64, 64), 1, 2, 4, 6, 0), False),
    ((96, 640, 128), make_tiling(96, 640, 128, 24, (32, 64, 32), 2, 4, 1, 5, 1), False),
    ((160, 224, 200), replace(make_tiling(160, 224, 200, 24, (32, 32, 16), 2, 4, 2, 2, 0), stepKb=3), True),
]


@pytest.mark.parametrize(("shape", "tiling", "b_trans"), CASES)
def test_fast_path_trace_equals_straightforward(shape, tiling, b_trans):
    m, n, k = shape
    tiling = tiling or auto_tiling(PROFILE, m, n, k)[0]
    c_slow, slow = run(False, m, n, k, tiling, b_trans=b_trans)
    c_fast, fast = run(True, m, n, k, tiling, b_trans=b_trans)
    assert len(slow.trace) == len(fast.trace) > 100
    for name in TIMING_COLUMNS:
        np.testing.assert_array_equal(slow.trace.columns[name], fast.trace.columns[name], err_msg=name)
    assert slow.trace.names == fast.trace.names and slow.trace.lanes == fast.trace.lanes
    assert slow.findings == fast.findings == []
    ref = inputs(m, n, k, seed=11)
    ref = ref[0].astype(np.float32) @ ref[1].astype(np.float32)
    for c in (c_slow, c_fast):
        assert np.max(np.abs(c.astype(np.float32) - ref)) <= k * 2.0**-22 + np.max(np.abs(ref)) * 2.0**-11


def test_fast_path_without_numerics_has_the_same_timing():
    tiling = auto_tiling(PROFILE, 384, 384, 256)[0]
    _, with_numbers = run(True, 384, 384, 256, tiling)
    _, without = run(True, 384, 384, 256, tiling, numerics=False)
    for name in TIMING_COLUMNS:
        np.testing.assert_array_equal(with_numbers.trace.columns[name], without.trace.columns[name], err_msg=name)
