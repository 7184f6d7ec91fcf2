"""The fast paths produce exactly the straightforward path's program and trace, event for event."""

from dataclasses import replace

import numpy as np
import pytest

from engine import Simulation, asc, load_profile
from engine.aicore.matmul_tiling import auto_tiling, make_tiling
from engine.kernels.matmul import matmul_tiled
from engine.kernels.matmul_leaky_relu import matmul_leaky_relu, workspace_bytes
from engine.runner import get_scenario
from engine.trace import COLUMN_NAMES, DERIVED_COLUMNS
from tests.kernel_helpers import from_device, inputs, to_device

PROFILE = load_profile("ascend910b1")
TIMING_COLUMNS = ("start", "end", "lane", "kind", "name", "nbytes", "flops", "buf", "slot", "src", "cause")


def assert_same_trace(slow, fast):
    """Every stored and derived column equal, ids resolved to what they name (detail ids depend on the
    order details were first met), the task tables and every finding."""
    ts, tf = slow.trace, fast.trace
    assert len(ts) == len(tf) > 0
    for name in (*COLUMN_NAMES, *DERIVED_COLUMNS):
        if name != "detail":
            np.testing.assert_array_equal(ts.columns[name], tf.columns[name], err_msg=name)
    assert ts.names == tf.names and ts.srcs == tf.srcs and ts.lanes == tf.lanes
    assert [ts.detail_of(i) for i in range(len(ts))] == [tf.detail_of(i) for i in range(len(tf))]
    for name, column in ts.tasks.items():
        np.testing.assert_array_equal(column, tf.tasks[name], err_msg=name)
    assert slow.findings == fast.findings
    assert list(slow.tasks) == list(fast.tasks)


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
    assert_same_trace(slow, fast)
    assert fast.findings == []
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


def run_leaky(fast, numerics=True, **params):
    """The matmul-leaky-relu scenario on the slow or the fast path: (its outcome, result, C and workspace bytes)."""
    scenario = get_scenario("matmul-leaky-relu")
    sim = Simulation("ascend910b1", numerics=numerics, fast=fast)
    outcome = scenario.run(sim, **scenario.validate(sim.profile, params))
    device = [a for a in sim.devmem.space._allocs if a.data is not None]
    return outcome, sim.finish(), [bytes(a.data) for a in device]


LEAKY_CASES = [
    {"m": 300, "n": 208, "k": 100},  # tails in M, N and K
    {"m": 512, "n": 256, "k": 256, "cores": 1},  # one group, many base blocks: both workspace slots reused
    {"m": 256, "n": 512, "k": 256, "cores": 4},
    {"m": 1000, "n": 608, "k": 300, "alpha": 0.25},
    {"m": 96, "n": 64, "k": 48, "alpha": 0.0, "base": "32,32,16"},
]


@pytest.mark.parametrize("params", LEAKY_CASES)
def test_leaky_relu_fast_path_trace_equals_straightforward(params):
    slow_outcome, slow, _ = run_leaky(False, **params)
    fast_outcome, fast, _ = run_leaky(True, **params)
    assert_same_trace(slow, fast)
    assert fast.findings == []
    assert slow_outcome.correct and fast_outcome.correct


def test_leaky_relu_fast_path_leaves_the_same_numbers_in_c_and_in_the_workspace():
    """C and the workspace's last fp32 base blocks: what the vector cores wrote on the slow path, within
    the tolerance of a different fp32 summation order."""
    _, _, slow = run_leaky(False, m=512, n=256, k=256, cores=2)
    _, _, fast = run_leaky(True, m=512, n=256, k=256, cores=2)
    assert len(slow) == len(fast)
    for s, f in zip(slow, fast, strict=True):
        assert len(s) == len(f)
        if len(s) == 512 * 256 * 2:  # C (fp16)
            a, b = np.frombuffer(s, np.float16).astype(np.float32), np.frombuffer(f, np.float16).astype(np.float32)
        else:
            a, b = np.frombuffer(s, np.uint8), np.frombuffer(f, np.uint8)
            if len(s) % 4 == 0 and len(s) != 512 * 256 * 2:
                a, b = np.frombuffer(s, np.float32), np.frombuffer(f, np.float32)
        assert np.allclose(a, b, atol=2e-2, rtol=2e-3)


def test_leaky_relu_fast_path_without_numerics_has_the_same_trace():
    _, with_numbers, _ = run_leaky(True, m=384, n=256, k=192)
    _, without, _ = run_leaky(True, numerics=False, m=384, n=256, k=192)
    for name in TIMING_COLUMNS:
        np.testing.assert_array_equal(with_numbers.trace.columns[name], without.trace.columns[name], err_msg=name)


@pytest.mark.parametrize("flags", [(True, False), (False, True)])
def test_leaky_relu_broken_variants_give_the_same_findings_on_both_paths(flags):
    """The debugging lesson's race (no wait) and deadlock (no set): found the same way on both paths."""
    results = []
    for fast in (False, True):
        sim = Simulation("ascend910b1", fast=fast)
        sim.acl.init()
        sim.acl.rt.set_device(0)
        stream, _ = sim.acl.rt.create_stream()
        a, b = inputs(256, 256, 128, seed=3)
        tiling = auto_tiling(PROFILE, 256, 256, 128)[0]
        dc, _ = sim.acl.rt.malloc(256 * 256 * 2, 0)
        dw, _ = sim.acl.rt.malloc(workspace_bytes(tiling), 0)
        ptrs = (to_device(sim, a), to_device(sim, b), dc, dw)
        gm = [asc.GlobalAddress(p, d) for p, d in zip(ptrs, (asc.half, asc.half, asc.half, asc.float32), strict=True)]
        sim.acl.rt.launch_kernel(matmul_leaky_relu, tiling.usedCoreNum, stream, *gm, tiling, 0.1, *flags)
        sim.acl.rt.synchronize_stream(stream)
        results.append(sim.finish())
    assert results[0].findings and results[0].findings == results[1].findings
    assert_same_trace(*results)
