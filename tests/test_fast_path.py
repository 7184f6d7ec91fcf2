"""The fast paths produce exactly the straightforward path's program, trace and bytes, event for event
and byte for byte; a kernel runs a fast path only when its declaration names one."""

import json
import math
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from engine import Simulation, asc, load_profile
from engine.aicore.matmul_tiling import auto_tiling, make_tiling
from engine.kernels import matmul, matmul_fast
from engine.kernels.matmul import API_K_STEP, matmul_tiled
from engine.kernels.matmul_api import matmul_api_kernel
from engine.kernels.matmul_leaky_relu import matmul_leaky_relu, workspace_bytes
from engine.scenarios.kernels import matmul_tolerance
from engine.scenarios.runner import get_scenario
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


def run(fast, m, n, k, tiling, numerics=True, b_trans=False, out=np.float16, kernel=matmul_tiled):
    sim = Simulation("ascend910b1", numerics=numerics, fast=fast)
    sim.acl.init()
    sim.acl.rt.set_device(0)
    stream, _ = sim.acl.rt.create_stream()
    a, b = inputs(m, n, k, seed=11)
    da, db = to_device(sim, a), to_device(sim, np.ascontiguousarray(b.T) if b_trans else b)
    dc, _ = sim.acl.rt.malloc(m * n * np.dtype(out).itemsize, 0)
    out_t = asc.half if out == np.float16 else asc.float32
    args = (asc.GlobalAddress(da), asc.GlobalAddress(db), asc.GlobalAddress(dc, out_t), tiling, b_trans)
    sim.acl.rt.launch_kernel(kernel, tiling.usedCoreNum, stream, *args)
    assert sim.acl.rt.synchronize_stream(stream) == 0
    c = from_device(sim, dc, (m, n), out)
    return c, sim.finish()


CASES = [  # M, N or K tails that are not multiples of 16 in all but one; fp32 C in three (depths count base blocks)
    ((300, 200, 100), None, False, np.float16),
    ((257, 129, 300), None, False, np.float32),
    ((150, 170, 190), make_tiling(150, 170, 190, 24, (32, 48, 16), 2, 3, 2, 3, 1), False, np.float16),
    ((512, 512, 512), make_tiling(512, 512, 512, 24, (64, 64, 64), 1, 2, 4, 6, 0), False, np.float16),
    ((96, 640, 128), make_tiling(96, 640, 128, 24, (32, 64, 32), 2, 4, 1, 5, 1), False, np.float32),
    (
        (160, 224, 200),
        replace(make_tiling(160, 224, 200, 24, (32, 32, 16), 2, 4, 2, 2, 0), stepKb=3, depthB1=6),
        True,
        np.float16,
    ),
    (
        (70, 90, 330),
        replace(make_tiling(70, 90, 330, 24, (32, 48, 16), 2, 1, 2, 2, 0), stepKa=3, depthA1=6),
        True,
        np.float32,
    ),
]


@pytest.mark.parametrize(("shape", "tiling", "b_trans", "out"), CASES)
def test_fast_path_trace_and_c_equal_straightforward(shape, tiling, b_trans, out):
    m, n, k = shape
    tiling = tiling or auto_tiling(PROFILE, m, n, k, out_bytes=np.dtype(out).itemsize)[0]
    c_slow, slow = run(False, m, n, k, tiling, b_trans=b_trans, out=out)
    c_fast, fast = run(True, m, n, k, tiling, b_trans=b_trans, out=out)
    assert_same_trace(slow, fast)
    assert fast.findings == []
    np.testing.assert_array_equal(c_fast.view(np.uint8), c_slow.view(np.uint8))  # tolerance 0
    a, b = inputs(m, n, k, seed=11)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    tol = matmul_tolerance(ref, k, "fp16" if out == np.float16 else "fp32")
    assert np.max(np.abs(c_fast.astype(np.float32) - ref)) <= tol


@pytest.mark.parametrize(("shape", "tiling", "b_trans", "out"), [CASES[0], CASES[2], CASES[5]])
def test_matmul_api_fast_path_trace_and_c_equal_straightforward(shape, tiling, b_trans, out):
    """The Matmul API's kernel stamps its base blocks with the API's scalar work, one instruction per K
    step: the same trace and bytes as running the Matmul object's iterate / get_tensor_c for real."""
    m, n, k = shape
    tiling = tiling or auto_tiling(PROFILE, m, n, k, out_bytes=np.dtype(out).itemsize)[0]
    c_slow, slow = run(False, m, n, k, tiling, b_trans=b_trans, out=out, kernel=matmul_api_kernel)
    c_fast, fast = run(True, m, n, k, tiling, b_trans=b_trans, out=out, kernel=matmul_api_kernel)
    assert_same_trace(slow, fast)
    np.testing.assert_array_equal(c_fast.view(np.uint8), c_slow.view(np.uint8))
    t = tiling
    regions = [t.core_region(i) for i in range(t.usedCoreNum)]
    base_blocks = sum(math.ceil(rows / t.baseM) * math.ceil(cols / t.baseN) for _m, _n, rows, cols in regions)
    k_steps = (fast.trace.columns["name"] == fast.trace.names.index(API_K_STEP)).sum()
    assert k_steps == base_blocks * math.ceil(k / t.baseK)


def test_a_product_too_large_to_keep_gives_the_same_bytes(monkeypatch):
    """Over the size kept per launch the fast path computes each core's region at once: same bytes."""
    tiling = auto_tiling(PROFILE, 257, 129, 300)[0]
    c_launch, _ = run(True, 257, 129, 300, tiling)
    monkeypatch.setattr(matmul_fast, "PRODUCT_LIMIT_BYTES", 1024)
    c_region, _ = run(True, 257, 129, 300, tiling)
    np.testing.assert_array_equal(c_region.view(np.uint16), c_launch.view(np.uint16))
    _, _, (slow_c, slow_work) = run_leaky(False, m=300, n=208, k=100)
    _, _, (fast_c, fast_work) = run_leaky(True, m=300, n=208, k=100)
    assert fast_c == slow_c and fast_work == slow_work


def test_fast_path_without_numerics_has_the_same_timing():
    tiling = auto_tiling(PROFILE, 384, 384, 256)[0]
    _, with_numbers = run(True, 384, 384, 256, tiling)
    _, without = run(True, 384, 384, 256, tiling, numerics=False)
    for name in TIMING_COLUMNS:
        np.testing.assert_array_equal(with_numbers.trace.columns[name], without.trace.columns[name], err_msg=name)


def run_leaky(fast, numerics=True, **params):
    """The matmul-leaky-relu scenario on the slow or the fast path: (its outcome, result, (C's bytes, the
    workspace's bytes)) (read when the kernel has finished, before the scenario frees them)."""
    scenario = get_scenario("matmul-leaky-relu")
    sim = Simulation("ascend910b1", numerics=numerics, fast=fast)
    kept = {}

    def probe(seq, plan, when):  # C's copy back to the host: the kernel is done, nothing is freed yet
        if when == "before" and plan.direction == "D2H":
            allocs = sim.devmem.space.live()
            kept["C"] = bytes(sim.devmem.view(plan.source[1]))
            kept["W"] = bytes(sim.devmem.view(max(allocs, key=lambda a: a.ident)))

    sim.copy_probe = probe
    outcome = scenario.run(sim, **scenario.validate(sim.profile, params))
    return outcome, sim.finish(), (kept.get("C"), kept.get("W"))


LEAKY_CASES = [
    {"m": 300, "n": 208, "k": 100},  # tails in M, N and K
    {"m": 512, "n": 256, "k": 256, "cores": 1},  # one group, many base blocks: both workspace slots reused
    {"m": 256, "n": 512, "k": 256, "cores": 4},
    {"m": 1000, "n": 608, "k": 300, "alpha": 0.25},
    {"m": 96, "n": 64, "k": 48, "alpha": 0.0, "base": "32,32,16"},
    {"m": 160, "n": 128, "k": 1100, "cores": 2, "base": "32,64,32"},  # a long K loop: its K spans are stamped
]


@pytest.mark.parametrize("params", LEAKY_CASES)
def test_leaky_relu_fast_path_trace_equals_straightforward(params):
    slow_outcome, slow, _ = run_leaky(False, **params)
    fast_outcome, fast, _ = run_leaky(True, **params)
    assert_same_trace(slow, fast)
    assert fast.findings == []
    assert slow_outcome.correct and fast_outcome.correct


def test_leaky_relu_fast_path_leaves_the_same_bytes_in_c_and_in_the_workspace():
    """C and the workspace's last fp32 base blocks: what the vector cores and the fixpipe wrote on the
    slow path, byte for byte."""
    for params in ({"m": 512, "n": 256, "k": 256, "cores": 2}, {"m": 300, "n": 208, "k": 100}):
        _, _, slow = run_leaky(False, **params)
        _, _, fast = run_leaky(True, **params)
        assert slow[0] is not None and slow[1] is not None
        assert fast == slow


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


def _plain_body(x: asc.GlobalAddress, n: int):
    asc.scalar_work(n)


def test_a_fast_path_runs_only_where_a_kernel_names_it_and_the_simulation_allows_it():
    taken = []

    def fast(x, n):
        taken.append(asc.get_block_idx())
        asc.scalar_work(n)

    named = asc.jit(kernel_type=asc.KernelType.AIV_ONLY, fast_path=fast)(_plain_body)
    unnamed = asc.jit(kernel_type=asc.KernelType.AIV_ONLY)(_plain_body)
    assert named.fast_path is fast and unnamed.fast_path is None
    for kernel, fast_sim, expected in ((named, True, [0, 1]), (named, False, []), (unnamed, True, [])):
        taken.clear()
        sim = Simulation("ascend910b1", fast=fast_sim)
        sim.acl.init()
        sim.acl.rt.set_device(0)
        stream, _ = sim.acl.rt.create_stream()
        x, _ = sim.acl.rt.malloc(64, 0)
        assert sim.acl.rt.launch_kernel(kernel, 2, stream, asc.GlobalAddress(x), 3) == 0
        assert sim.acl.rt.synchronize_stream(stream) == 0
        assert taken == expected


_KERNELS = """
import importlib, json, pkgutil, sys
sys.path.insert(0, {root!r})
import engine.kernels.matmul
from engine.aicore.launch import JitKernel

def fast_paths():
    found = {{}}
    for name, module in sorted(sys.modules.items()):
        if name.startswith(("engine.kernels", "engine.scenarios")):
            for attr, value in vars(module).items():
                if isinstance(value, JitKernel):
                    found[attr] = getattr(value.fast_path, "__qualname__", None)
    return found

alone = fast_paths()
import engine.kernels, engine.scenarios
for package in (engine.kernels, engine.scenarios):
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        importlib.import_module(info.name)
print(json.dumps([alone, fast_paths()]))
"""


def test_no_import_attaches_a_fast_path():
    """In a fresh interpreter: matmul_tiled has its fast path with nothing else imported, and importing
    every other engine module changes no kernel's fast path; only the four matmul kernels name one."""
    root = str(Path(__file__).resolve().parent.parent)
    out = subprocess.run(
        [sys.executable, "-c", _KERNELS.format(root=root)], capture_output=True, text=True, check=True, cwd=root
    )
    alone, everything = json.loads(out.stdout)
    assert alone["matmul_tiled"] == "stamped_matmul_tiled"
    assert {k: v for k, v in everything.items() if k in alone} == alone
    assert {k: v for k, v in everything.items() if v} == {
        "matmul_tiled": "stamped_matmul_tiled",
        "matmul_api_kernel": "stamped_matmul_api",
        "matmul_leaky_relu": "stamped_matmul_leaky_relu",
        "matmul_tiling_data": "stamped_matmul_tiling_data",  # matmul_tiled's, after GET_TILING_DATA
    }


def test_the_matmul_whose_tiling_is_tiling_data_records_the_same_fast_and_slow():
    """engine.kernels.matmul_tiling_data: GET_TILING_DATA, then matmul_tiled (its fast path or its code)."""
    from engine.kernels.matmul_tiling_data import matmul_tiling_data, tiling_context

    m, n, k = 256, 192, 128
    tiling = auto_tiling(PROFILE, m, n, k, 4, 2)[0]
    runs = []
    for fast in (False, True):
        sim = Simulation("ascend910b1", fast=fast)
        sim.acl.init()
        sim.acl.rt.set_device(0)
        stream, _ = sim.acl.rt.create_stream()
        a, b = inputs(m, n, k, seed=11)
        dc, _ = sim.acl.rt.malloc(m * n * 2, 0)
        ctx = tiling_context(tiling)
        gm = (asc.GlobalAddress(to_device(sim, a)), asc.GlobalAddress(to_device(sim, b)), asc.GlobalAddress(dc))
        assert (
            sim.acl.rt.launch_kernel(matmul_tiling_data, ctx.get_block_dim(), stream, *gm, ctx.get_raw_tiling_data())
            == 0
        )
        assert sim.acl.rt.synchronize_stream(stream) == 0
        c = from_device(sim, dc, (m, n), np.float16)
        runs.append(sim.finish())
        ref = a.astype(np.float32) @ b.astype(np.float32)
        assert np.max(np.abs(c.astype(np.float32) - ref)) <= matmul_tolerance(ref, k, "fp16")
    assert_same_trace(*runs)


def test_a_stamped_copy_finds_the_values_of_an_allocation_it_met_at_that_offset_all_at_once():
    """A stamped copy's GM tile keys and move details are kept per allocation and offset: a copy whose offset in
    an allocation was met before takes every access's value there from what was found then, and only the accesses
    to allocations at new offsets are found anew, in access order (a new detail record takes the next id, as in a
    step run for real); the values come back in access order."""
    from engine.kernels.stamp import ByAllocation

    allocs = ["a", "b", "a", "c", "b"]
    found = []

    def finder(delta):
        def value(i):
            found.append(i)
            return (allocs[i], delta[allocs[i]])

        return value

    by = ByAllocation(allocs)
    first = {"a": 0, "b": 0, "c": 0}
    assert by.values(first, finder(first)) == (("a", 0), ("b", 0), ("a", 0), ("c", 0), ("b", 0))
    assert found == [0, 1, 2, 3, 4]
    found.clear()
    moved = {"a": 0, "b": 64, "c": 128}
    assert by.values(moved, finder(moved)) == (("a", 0), ("b", 64), ("a", 0), ("c", 128), ("b", 64))
    assert found == [1, 3, 4]  # a at offset 0 was met: its two accesses are not found again
    found.clear()
    mixed = {"a": 0, "b": 64, "c": 0}
    assert by.values(mixed, finder(mixed)) == (("a", 0), ("b", 64), ("a", 0), ("c", 0), ("b", 64))
    assert found == []
    assert ByAllocation(["a"]).values({"a": 8}, lambda i: 7) == (7,)
    assert ByAllocation([]).values({}, lambda i: 7) == ()


@pytest.mark.parametrize("b_trans", [False, True])
def test_a_long_k_loop_stamps_its_k_spans_and_gives_the_same_run(monkeypatch, b_trans):
    """Inside a base block recorded for real, each K span (both operands starting a chunk: here stepKa 2, stepKb 3,
    so 6 K steps, and a tail) runs its code the first time its signature is met and is stamped after: the same
    trace and bytes as running every K step, and most spans never run their code."""
    m, n, k = 96, 80, 1100
    tiling = replace(make_tiling(m, n, k, 4, (32, 32, 32), 2, 2, 2, 2, 0), stepKb=3, depthB1=6)
    spans = matmul.k_spans(tiling)
    assert len(spans) == 6 and spans[-1][1] - spans[-1][0] < spans[0][1] - spans[0][0]  # 1100 = 5 x 192 + 140
    calls = {"n": 0}
    real = matmul._k_span

    def counted(*args):
        calls["n"] += 1
        return real(*args)

    monkeypatch.setattr(matmul, "_k_span", counted)
    c_slow, slow = run(False, m, n, k, tiling, b_trans=b_trans)
    every = calls["n"]
    calls["n"] = 0
    c_fast, fast = run(True, m, n, k, tiling, b_trans=b_trans)
    assert_same_trace(slow, fast)
    np.testing.assert_array_equal(c_fast.view(np.uint8), c_slow.view(np.uint8))
    regions = [tiling.core_region(i) for i in range(tiling.usedCoreNum)]
    blocks = sum(math.ceil(rows / 32) * math.ceil(cols / 32) for _m, _n, rows, cols in regions)
    assert every == blocks * len(spans) and calls["n"] <= every // 4, (calls["n"], every)
