"""The scheduler's steady-state memo (engine.aicore.steady) changes nothing: with it on and off, every trace
column, every task, every finding and the end time are equal; and it does place stretches (also through the
chain), so the comparison is not empty."""

import gc
from dataclasses import replace

import numpy as np
import pytest

from engine import Simulation, asc, load_profile
from engine.aicore import steady
from engine.aicore.matmul_tiling import auto_tiling, make_tiling
from engine.kernels.matmul import matmul_tiled
from engine.kernels.matmul_api import matmul_api_kernel
from engine.scenarios.runner import get_scenario, run_scenario
from tests.kernel_helpers import inputs, to_device
from tests.test_fast_path import assert_same_trace

PROFILE = load_profile("ascend910b1")


@pytest.fixture
def placements(monkeypatch):
    """Counts the stretches the memo places, and how many of those it found through the chain."""
    counts = {"placed": 0, "chained": 0, "keys": 0}
    enter, state = steady.StretchMemo.enter, steady.Stretch.state

    def counting_enter(self, run, stretch, issue):
        keys = counts["keys"]
        found = enter(self, run, stretch, issue)
        if found is None:
            counts["placed"] += 1
            counts["chained"] += counts["keys"] == keys  # placed without building its key
        return found

    def counting_state(self, *args):
        counts["keys"] += 1
        return state(self, *args)

    monkeypatch.setattr(steady.StretchMemo, "enter", counting_enter)
    monkeypatch.setattr(steady.Stretch, "state", counting_state)
    return counts


def run_matmul(on: bool, m: int, n: int, k: int, tiling, kernel=matmul_tiled, b_trans=False, out=np.float16):
    sim = Simulation("ascend910b1", numerics=False, steady=on)
    sim.acl.init()
    sim.acl.rt.set_device(0)
    stream, _ = sim.acl.rt.create_stream()
    a, b = inputs(m, n, k, seed=5)
    da, db = to_device(sim, a), to_device(sim, np.ascontiguousarray(b.T) if b_trans else b)
    dc, _ = sim.acl.rt.malloc(m * n * np.dtype(out).itemsize, 0)
    out_t = asc.half if out == np.float16 else asc.float32
    args = (asc.GlobalAddress(da), asc.GlobalAddress(db), asc.GlobalAddress(dc, out_t), tiling, b_trans)
    sim.acl.rt.launch_kernel(kernel, tiling.usedCoreNum, stream, *args)
    assert sim.acl.rt.synchronize_stream(stream) == 0
    return sim.finish()


def assert_same_run(off, on):
    assert_same_trace(off, on)
    assert off.end_ps == on.end_ps
    assert off.host_end_ps == on.host_end_ps


CASES = [  # long K loops (the memo's stretches), tails, transposed B, fp32 C, one core, odd staging; placed?
    ((1024, 1024, 2048), None, False, np.float16, True),
    ((1000, 1100, 1500), None, False, np.float32, True),
    ((512, 768, 3000), make_tiling(512, 768, 3000, 24, (128, 128, 64), 2, 2, 4, 6, 0), True, np.float16, True),
    # one core alone, 64 K steps per base block: its K spans are stamped templates, the memo places those it met
    ((256, 256, 4096), make_tiling(256, 256, 4096, 1, (128, 128, 64), 2, 1, 1, 1, 1), False, np.float16, True),
    (
        (640, 640, 2000),
        replace(make_tiling(640, 640, 2000, 24, (64, 64, 32), 2, 4, 4, 4, 0), stepKb=3, depthB1=6),
        False,
        np.float16,
        True,
    ),
    ((600, 500, 1800), make_tiling(600, 500, 1800, 24, (64, 96, 32), 1, 2, 3, 5, 1), True, np.float32, True),
]


@pytest.mark.parametrize(("shape", "tiling", "b_trans", "out", "placed"), CASES)
def test_memo_on_and_off_give_the_same_run(placements, shape, tiling, b_trans, out, placed):
    m, n, k = shape
    tiling = tiling or auto_tiling(PROFILE, m, n, k, out_bytes=np.dtype(out).itemsize)[0]
    off = run_matmul(False, m, n, k, tiling, b_trans=b_trans, out=out)
    assert placements["placed"] == 0
    on = run_matmul(True, m, n, k, tiling, b_trans=b_trans, out=out)
    assert_same_run(off, on)
    assert (placements["placed"] > 0) == placed


def test_the_chain_places_stretches_and_gives_the_same_run(placements):
    """A long K loop on every core: most stretches are found through the previous one."""
    tiling = auto_tiling(PROFILE, 2048, 2048, 2048)[0]
    off = run_matmul(False, 2048, 2048, 2048, tiling)
    on = run_matmul(True, 2048, 2048, 2048, tiling)
    assert_same_run(off, on)
    assert placements["chained"] > 50


def test_matmul_api_kernel_memo_on_and_off_give_the_same_run(placements):
    tiling = auto_tiling(PROFILE, 768, 1024, 2048)[0]
    off = run_matmul(False, 768, 1024, 2048, tiling, kernel=matmul_api_kernel)
    on = run_matmul(True, 768, 1024, 2048, tiling, kernel=matmul_api_kernel)
    assert_same_run(off, on)
    assert placements["placed"] > 0


@pytest.mark.parametrize("params", [{"m": 512, "n": 512, "k": 2048, "cores": 2}, {"m": 1000, "n": 608, "k": 1300}])
def test_mixed_kernel_memo_on_and_off_give_the_same_run(placements, params):
    """The Cube + vector kernel: cross-core flags end stretches; everything else as above."""
    scenario = get_scenario("matmul-leaky-relu")
    results = []
    for on in (False, True):
        sim = Simulation("ascend910b1", numerics=False, steady=on)
        scenario.run(sim, **scenario.validate(sim.profile, params))
        results.append(sim.finish())
    assert_same_run(*results)
    assert placements["placed"] > 0


def test_random_tilings_memo_on_and_off_give_the_same_run(placements):
    """Tilings drawn at random (seeded): sizes, base blocks, depths, steps, core splits and orders."""
    rng = np.random.default_rng(23)
    for _ in range(6):
        m, n = (int(x) for x in rng.integers(64, 700, 2))
        k = int(rng.integers(600, 2500))
        base = (int(rng.choice([32, 64, 128])), int(rng.choice([32, 64, 128])), int(rng.choice([16, 32, 64])))
        cores = int(rng.integers(1, 25))
        m_cores = int(rng.integers(1, max(2, min(cores, -(-m // base[0])) + 1)))
        n_cores = max(1, min(cores // m_cores, -(-n // base[1])))
        tiling = make_tiling(
            m, n, k, cores, base, int(rng.integers(1, 3)), int(rng.integers(1, 5)), m_cores, n_cores, 0
        )
        b_trans = bool(rng.integers(2))
        off = run_matmul(False, m, n, k, tiling, b_trans=b_trans)
        on = run_matmul(True, m, n, k, tiling, b_trans=b_trans)
        assert_same_run(off, on)
    assert placements["placed"] > 0


def test_a_kernel_lets_go_of_its_scheduling_state_as_it_ends():
    """A kernel's per-core runs, its blocks' programs and its stretch memo are freed when the kernel ends, by
    reference counting: they refer to each other, and the garbage collector would find them only at a full
    collection, after the trace (and, in a UI, the replay) had been built on top of them."""
    from engine.aicore.dispatch import KernelScheduler, _CoreRun, _Group
    from engine.aicore.program import Program

    kinds = (KernelScheduler, _CoreRun, _Group, steady.StretchMemo, Program)

    def alive() -> dict:
        return {k.__name__: n for k in kinds if (n := sum(type(o) is k for o in gc.get_objects()))}

    gc.collect()
    assert alive() == {}
    gc.disable()
    try:
        run = run_scenario("matmul", m=512, n=512, k=512, numerics=False)
        assert len(run.result.trace) > 1000
        assert alive() == {}
    finally:
        gc.enable()
