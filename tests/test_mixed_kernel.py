"""Mixed (MIX_AIC_1_2) kernels: one AIC and two AIVs per block, synchronised by cross-core flags."""

import numpy as np
import pytest

from app.cli import main
from engine import asc
from engine.aicore.matmul_tiling import MultiCoreMatmulTiling
from engine.device.runtime import CoreArray
from engine.host.acl_codes import ACL_ERROR_API_NOT_SUPPORT, ACL_ERROR_RT_AICORE_EXCEPTION, ACL_ERROR_RT_AICORE_TIMEOUT
from engine.kernels.matmul_leaky_relu import matmul_leaky_relu, workspace_bytes
from engine.profiles.profile import load_profile
from engine.scenarios import ScenarioFailed
from engine.scenarios.kernels import matmul_tolerance
from engine.scenarios.runner import run_scenario
from engine.trace import Kind
from tests.kernel_helpers import device, empty_device, from_device, inputs, launch, to_device


def tiling_for(m, n, k, cores=None):
    api = MultiCoreMatmulTiling(load_profile("ascend910b1"))
    api.set_dim(cores or 24)
    api.set_shape(m, n, k)
    return api.get_tiling()


def run_leaky(m, n, k, alpha=0.1, cores=None, **flags):
    """LeakyReLU(A @ B) with the mixed kernel; returns (C, reference, sync code, result)."""
    a, b = inputs(m, n, k, seed=3)
    t = tiling_for(m, n, k, cores)
    sim, stream = device()
    da, db = to_device(sim, a), to_device(sim, b)
    dc, dw = empty_device(sim, m * n * 2), empty_device(sim, workspace_bytes(t))
    args = [asc.GlobalAddress(p, d) for p, d in ((da, asc.half), (db, asc.half), (dc, asc.half), (dw, asc.float32))]
    assert sim.acl.rt.launch_kernel(matmul_leaky_relu, t.usedCoreNum, stream, *args, t, alpha, *flags.values()) == 0
    ret = sim.acl.rt.synchronize_stream(stream)
    c = from_device(sim, dc, (m, n), np.float16).astype(np.float32)
    ref = a.astype(np.float32) @ b.astype(np.float32)
    return c, np.maximum(ref, np.float32(alpha) * ref), ret, sim.finish()


def events(result, process, name_prefix):
    t = result.trace
    out = []
    for i in range(len(t)):
        lane = t.lanes[t.lane[i]]
        if lane.process == process and t.names[t.name[i]].startswith(name_prefix):
            out.append((int(t.start[i]), int(t.end[i]), t.names[t.name[i]]))
    return sorted(out)


@pytest.mark.parametrize(
    ("m", "n", "k", "alpha"),
    [(1, 16, 1, 0.1), (17, 48, 65, 0.2), (300, 208, 100, 0.1), (256, 512, 256, 0.0), (97, 64, 48, 1.0)],
)
def test_leaky_relu_matches_numpy(m, n, k, alpha):
    c, ref, ret, result = run_leaky(m, n, k, alpha)
    assert ret == 0 and result.findings == []
    assert np.max(np.abs(c - ref)) <= matmul_tolerance(ref, k, "fp16")
    if alpha == 0.0:
        assert (c >= 0).all() and (c == 0).mean() > 0.3  # ReLU really zeroed the negative half
    if 0 < alpha < 1:
        assert (c < 0).any()  # negatives scaled (checked against the reference above), not clipped


def test_each_block_runs_on_one_ai_core_aic_i_with_aiv_2i_and_2i_plus_1():
    _c, _ref, _ret, result = run_leaky(256, 512, 256, cores=4)
    t = result.trace
    blocks: dict[str, set[str]] = {}
    for i in np.flatnonzero(t.kind == Kind.BLOCK):
        lane = t.lanes[t.lane[i]]
        blocks.setdefault(t.names[t.name[i]], set()).add(lane.process)
    assert blocks, "no block spans in the trace"
    for cores in blocks.values():
        aic = [c for c in cores if c.startswith("AIC")]
        assert len(aic) == 1 and len(cores) == 3
        g = int(aic[0].split()[1])
        assert cores == {f"AIC {g}", f"AIV {2 * g}", f"AIV {2 * g + 1}"}


def test_vectors_wait_for_the_cube_and_the_cube_waits_for_the_vectors():
    profile = load_profile("ascend910b1")
    cross_ps = profile.compute.cross_flag_cycles * profile.ps_per_cycle
    _c, _ref, ret, result = run_leaky(512, 256, 256, cores=1)  # one group, several base blocks
    assert ret == 0
    fix = events(result, "AIC 0", "fixpipe")
    assert len(fix) >= 3
    for aiv in ("AIV 0", "AIV 1"):
        reads = events(result, aiv, "data_copy GM->UB")
        # the first read of the workspace starts only after the fixpipe wrote it and the flag crossed over
        assert reads[0][0] >= fix[0][1] + cross_ps
    # the third fixpipe reuses slot 0: it waits until both AIVs finished reading block 0
    reads_block0_end = []
    for aiv in ("AIV 0", "AIV 1"):
        waits = events(result, aiv, "cross_core_wait_flag")
        reads = events(result, aiv, "data_copy GM->UB")
        before_second_wait = [r for r in reads if r[0] < waits[1][0]]
        reads_block0_end.append(max(r[1] for r in before_second_wait))
    assert fix[2][0] >= max(reads_block0_end) + cross_ps


def test_leaving_out_the_vector_wait_is_a_cross_core_race():
    _c, _ref, ret, result = run_leaky(256, 256, 128, cores=1, skip_wait=True, skip_set=False)
    races = [f for f in result.findings if f.kind == "race"]
    assert ret == 0 and races
    msg = races[0].message
    assert "GM#" in msg and "fixpipe" in msg and "data_copy GM->UB" in msg
    assert "AIC 0 FIXP" in msg and ("AIV 0 MTE2" in msg or "AIV 1 MTE2" in msg)
    assert "matmul_leaky_relu.py" in msg


def test_a_missing_cross_core_set_is_a_diagnosed_deadlock():
    _c, _ref, ret, result = run_leaky(256, 256, 128, cores=1, skip_wait=False, skip_set=True)
    assert ret == ACL_ERROR_RT_AICORE_TIMEOUT
    dead = [f for f in result.findings if f.kind == "deadlock"]
    assert len(dead) == 1
    msg = dead[0].message
    assert "AIV 0: waits at cross_core_wait_flag(1)" in msg and "AIV 1: waits at cross_core_wait_flag(1)" in msg
    assert "AIC 0: waits at cross_core_wait_flag(3)" in msg
    assert "matmul_leaky_relu.py" in msg


@asc.jit(kernel_type=asc.KernelType.MIX_AIC_1_2)
def flag_misuse(z: asc.GlobalAddress, what: str):
    if what == "bad-id" and asc.ascend_is_aic():
        asc.cross_core_set_flag(11)
    if what == "mode-1":
        asc.cross_core_set_flag(0, mode=1)
    if what == "overflow" and asc.ascend_is_aic():
        for _ in range(16):
            asc.cross_core_set_flag(0)
    if what == "overflow" and asc.ascend_is_aiv():
        for _ in range(16):
            asc.cross_core_wait_flag(0)
    if what == "crash" and asc.get_subblockidx() == 1 and asc.ascend_is_aiv():
        raise ZeroDivisionError("division by zero in the epilogue")
    if what == "crash" and asc.ascend_is_aic():
        asc.cross_core_wait_flag(4)  # never satisfied: the crash on AIV 1 must not leave this hanging


@asc.jit
def vector_only_cross_flag(z: asc.GlobalAddress):
    asc.cross_core_set_flag(0)


@pytest.mark.parametrize(
    ("what", "code", "words"),
    [
        ("bad-id", ACL_ERROR_RT_AICORE_EXCEPTION, "flag_id must be 0..10, got 11"),
        ("mode-1", ACL_ERROR_RT_AICORE_EXCEPTION, "mode 1 is not modelled"),
        ("overflow", ACL_ERROR_RT_AICORE_EXCEPTION, "holds at most 15 sets"),
        ("crash", ACL_ERROR_RT_AICORE_EXCEPTION, "ZeroDivisionError: division by zero in the epilogue"),
    ],
)
def test_cross_core_flag_misuse_is_a_clear_kernel_error(what, code, words):
    ret, result, _sim, _args = launch(flag_misuse, 2, lambda s: asc.GlobalAddress(empty_device(s, 64)), what)
    assert ret == code
    assert any(words in f.message for f in result.findings), [f.message for f in result.findings]


def test_cross_core_flags_outside_a_mixed_kernel_are_rejected():
    ret, result, _sim, _args = launch(vector_only_cross_flag, 1, lambda s: asc.GlobalAddress(empty_device(s, 64)))
    assert ret == ACL_ERROR_RT_AICORE_EXCEPTION
    assert "launch it with kernel_type=asc.KernelType.MIX_AIC_1_2" in result.findings[0].message


def test_mixed_kernels_are_rejected_on_coupled_chips():
    sim, stream = device("ascend910a")
    ptr = empty_device(sim, 64)
    ret = sim.acl.rt.launch_kernel(flag_misuse, 1, stream, asc.GlobalAddress(ptr), "none")
    assert ret == ACL_ERROR_API_NOT_SUPPORT


def test_mixed_kernels_take_whole_ai_cores():
    cores = CoreArray("split", 4, 8)
    cores.free_aiv.remove(1)  # AIV 1 busy: AI core 0 is not whole
    kernel = type("K", (), {"core_type": "mix", "block_dim": 2})()
    task = type("T", (), {"payload": kernel})()
    cores.request(0, 0, task)
    grant, _task = cores.grant()
    assert grant.aic == (1, 2) and grant.aiv == (2, 3, 4, 5)


def test_mixed_runs_are_deterministic():
    a = run_scenario("matmul-leaky-relu", m=256, n=256, k=256).result.trace
    b = run_scenario("matmul-leaky-relu", m=256, n=256, k=256).result.trace
    for key in a.columns:
        np.testing.assert_array_equal(a.columns[key], b.columns[key])


def test_cli_reports_a_failed_device_run_in_one_line(monkeypatch, capsys):
    def broken(*args):
        raise ValueError("bad epilogue")

    monkeypatch.setattr(matmul_leaky_relu, "fn", broken)
    monkeypatch.setattr(matmul_leaky_relu, "fast_path", broken)  # the body either path runs
    with pytest.raises(ScenarioFailed):
        run_scenario("matmul-leaky-relu", m=64, n=64, k=64)
    assert main(["run", "matmul-leaky-relu", "--m", "64", "--n", "64", "--k", "64"]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert "ACL_ERROR_RT_AICORE_EXCEPTION (507015)" in err and "ValueError: bad epilogue" in err


def test_profiler_counts_ai_cores_and_names_cross_core_waits():
    from engine.analysis.export import flag_flows
    from engine.analysis.render import render_report
    from engine.scenarios.runner import analyze_run

    run = run_scenario("matmul-leaky-relu", m=1024, n=1024, k=512)
    report = analyze_run(run, measure_gains=False)
    k = report.metrics.kernels[0]
    assert k.core_type == "mix" and k.cores_used == k.blocks == run.summary()["tiling"]["usedCoreNum"]
    assert 0 < k.parallelism_utilization <= 1
    text = render_report(report)
    assert f"{k.blocks} blocks on {k.cores_used} of 24 AI cores (AIC + 2 AIV)" in text
    assert "waiting for a cross-core flag" in text
    t = run.result.trace
    cross = [(s, w) for s, w, label in flag_flows(t) if label.startswith("cross-core flag")]
    assert cross
    for s, w in cross:  # each arrow: a set on one core of an AI core released a wait on another core of it
        a, b = t.lanes[t.lane[s]].process, t.lanes[t.lane[w]].process
        assert a != b and {a.split()[0], b.split()[0]} == {"AIC", "AIV"}
        aic, aiv = (a, b) if a.startswith("AIC") else (b, a)
        assert int(aiv.split()[1]) // 2 == int(aic.split()[1])
        assert t.end[s] <= t.end[w]
