"""The scalar unit (engine/aicore/scalar_unit.py): issuing an instruction costs it the cycles the profile
gives the instruction's kind, it runs in parallel with the pipes (its cost shows only where it holds an
instruction back), and a kernel of many tiny instructions is bound by it, as on hardware.

Exact: the SCALAR lane's issue rows add up to the profile's cost of every instruction the core issued,
and their details count those instructions. Stated tolerances: a pipe-bound kernel is slower with its
scalar costs than without by less than one tile's issue (about 30 cycles), not by its total scalar time.
"""

from dataclasses import fields, replace

import numpy as np
import pytest

from engine import Simulation, asc, load_profile
from engine.aicore.matmul_tiling import make_tiling
from engine.aicore.pipes import Pipe
from engine.analysis.pipes import kernel_metrics
from engine.kernels.matmul import API_K_STEP, matmul_tiled
from engine.kernels.matmul_api import matmul_api_kernel
from engine.kernels.vector_add import add_kernel
from engine.trace import Kind
from engine.trace.detail import Issue

PROFILE = load_profile("ascend910b1")
NO_SCALAR = replace(PROFILE, scalar=replace(PROFILE.scalar, **{f.name: 0 for f in fields(PROFILE.scalar)}))


def _device(profile):
    sim = Simulation(profile, numerics=False)
    sim.acl.init()
    sim.acl.rt.set_device(0)
    stream, _ = sim.acl.rt.create_stream()
    return sim, stream


def run_add(profile=PROFILE, length=16 * 4096, tile=4096, buffer_num=2, cores=1):
    sim, stream = _device(profile)
    gm = [asc.GlobalAddress(sim.acl.rt.malloc(length * 2, 0)[0], asc.half) for _ in range(3)]
    assert sim.acl.rt.launch_kernel(add_kernel, cores, stream, *gm, length, tile, buffer_num) == 0
    assert sim.acl.rt.synchronize_stream(stream) == 0
    return sim.finish()


def run_matmul(kernel, base, profile=PROFILE, size=256):
    sim, stream = _device(profile)
    tiling = make_tiling(size, size, size, 1, base, 2, 1, 1, 1, 0)
    ptrs = [sim.acl.rt.malloc(size * size * 2, 0)[0] for _ in range(3)]
    args = [asc.GlobalAddress(p, asc.half) for p in ptrs]
    assert sim.acl.rt.launch_kernel(kernel, 1, stream, *args, tiling) == 0
    assert sim.acl.rt.synchronize_stream(stream) == 0
    result = sim.finish()
    return result, kernel_metrics(result.trace, profile)


def scalar_rows(trace, core: str):
    lane = trace.core_lane(core, Pipe.S)
    return np.flatnonzero((trace.columns["lane"] == lane) & trace.rows_with(lambda d: isinstance(d, Issue)))


def test_issue_rows_add_up_to_the_cost_of_every_instruction_issued():
    """One vector core, 16 tiles: 3 copies + 1 add + 12 queue flags per tile, and every issue row says how
    many instructions it issued."""
    result = run_add(length=16 * 1024, tile=1024, buffer_num=1)
    t = result.trace
    rows = scalar_rows(t, "AIV 0")
    assert len(rows) >= 1 and (t.kind[rows] == Kind.COMPUTE).all()
    assert {t.names[int(n)] for n in t.columns["name"][rows]} == {"issue"}
    on_core = np.isin(t.columns["lane"], [t.core_lane("AIV 0", p) for p in (Pipe.S, Pipe.V, Pipe.MTE2, Pipe.MTE3)])
    instr = (
        on_core
        & np.isin(t.kind, (Kind.MOVE, Kind.COMPUTE, Kind.FLAG_SET, Kind.FLAG_WAIT))
        & ~np.isin(np.arange(len(t)), rows)
    )
    kinds = {k: int(((t.kind == k) & instr).sum()) for k in (Kind.MOVE, Kind.COMPUTE, Kind.FLAG_SET, Kind.FLAG_WAIT)}
    assert kinds == {
        Kind.MOVE: 48,
        Kind.COMPUTE: 16,
        Kind.FLAG_SET: 96,
        Kind.FLAG_WAIT: 93,
    }  # 3 first allocs wait on nothing
    s = PROFILE.scalar
    cycles = 48 * s.copy_ub + 16 * s.vector + (96 + 93) * s.flag
    busy = int((t.end[rows] - t.start[rows]).sum())
    assert busy == sum(round(c * PROFILE.ps_per_cycle) for c in [s.copy_ub] * 48 + [s.vector] * 16 + [s.flag] * 189)
    assert busy == pytest.approx(cycles * PROFILE.ps_per_cycle, abs=253)
    assert sum(t.detail_of(int(r)).instructions for r in rows) == int(instr.sum())


def test_the_scalar_unit_runs_in_parallel_with_the_pipes():
    """A load-bound add: the scalar unit issues ahead while MTE2 works, so its 4 % of scalar time costs
    the kernel only the first instructions' issue, not 4 %."""
    costed, free = run_add(), run_add(NO_SCALAR)
    m, m0 = kernel_metrics(costed.trace, PROFILE), kernel_metrics(free.trace, NO_SCALAR)
    assert m["pipe_ratios"]["aiv_scalar_ratio"] > 0.005 and m0["pipe_ratios"]["aiv_scalar_ratio"] == 0
    slower_us = m["kernel_us"] - m0["kernel_us"]
    assert 0 < slower_us < 40 / PROFILE.chip.clock_mhz  # under 40 cycles: one tile's issue
    assert slower_us < 0.1 * m["pipe_time_us"]["s"]


@pytest.mark.parametrize("kernel", [matmul_api_kernel, matmul_tiled], ids=["matmul_api", "basic"])
def test_a_matmul_of_tiny_base_blocks_is_scalar_bound_with_the_matmul_api(kernel):
    """Base blocks of 32x32x32: each K step moves and multiplies little, while the Matmul API's iteration
    logic costs the scalar unit the same per K step as for big blocks (ADK's matmul_high_performance
    case 0, base 64^3, already spends 0.67 of its time on scalar work). With the API the kernel is
    scalar-bound and slower than its pipes' work; with basic instructions it stays bound by MTE2."""
    result, m = run_matmul(kernel, (32, 32, 32))
    ratios = m["pipe_ratios"]
    busiest = max(("aic_mac_ratio", "aic_mte1_ratio", "aic_mte2_ratio", "aic_scalar_ratio"), key=ratios.get)
    _, m0 = run_matmul(kernel, (32, 32, 32), NO_SCALAR)
    if kernel is matmul_api_kernel:
        assert busiest == "aic_scalar_ratio" and ratios["aic_scalar_ratio"] > 0.95
        assert m["kernel_us"] > 1.3 * m0["kernel_us"]  # the pipes wait for the scalar unit to issue
        names = result.trace.names
        api = (result.trace.columns["name"] == names.index(API_K_STEP)).sum()
        assert api == (256 // 32) ** 3  # one scalar_work per K step of every base block
    else:
        assert busiest == "aic_mte2_ratio" and ratios["aic_scalar_ratio"] < 0.5
        assert m["kernel_us"] == pytest.approx(m0["kernel_us"], rel=0.02)


def test_big_base_blocks_take_the_matmul_api_off_the_scalar_unit():
    """The same API kernel with the recommended 128x256x64 base block issues 1/256 of the K steps per
    output: the pipes set the pace again, and scalar work falls well under the busiest pipe."""
    _, tiny = run_matmul(matmul_api_kernel, (32, 32, 32))
    _, big = run_matmul(matmul_api_kernel, (128, 256, 64))
    r = big["pipe_ratios"]
    assert max(r["aic_mte2_ratio"], r["aic_mac_ratio"]) > r["aic_scalar_ratio"]
    assert big["kernel_us"] < tiny["kernel_us"] / 5
