"""Every matmul kernel computes C = A @ B like numpy, for awkward shapes and every tiling variant, and
exactly as the Cube's arithmetic (:func:`engine.aicore.cube.matmul`) says for its K step.

Tolerance against numpy (stated): fp32 accumulation in a different order than numpy's, k * 2^-22 for
entries of A and B in [-1, 1], plus half an ulp of the output type at the largest |C| (2^-11 relative
for fp16, 2^-24 for fp32). Against the Cube's arithmetic: none, byte for byte.
"""

from dataclasses import replace

import numpy as np
import pytest

from engine import asc, load_profile
from engine.aicore import cube
from engine.aicore.matmul_tiling import auto_tiling, make_tiling
from engine.kernels.matmul import gm_tensors, matmul_single_core, matmul_tiled, single_core_tiling
from engine.kernels.matmul_api import Matmul, matmul_api_kernel
from engine.scenarios.kernels import matmul_tolerance
from tests.kernel_helpers import device, empty_device, from_device, inputs, run_matmul, to_device

PROFILE = load_profile("ascend910b1")
SHAPES = [(1, 1, 1), (16, 16, 16), (17, 33, 65), (300, 200, 100), (129, 257, 65), (48, 80, 112)]


def check(c, a, b, out, k_step):
    ref = a.astype(np.float32) @ b.astype(np.float32)
    err = float(np.max(np.abs(c.astype(np.float32) - ref)))
    tol = matmul_tolerance(ref, a.shape[1], "fp16" if out == np.float16 else "fp32")
    assert err <= tol, f"max error {err} > tolerance {tol}"
    exact = cube.fixpipe(cube.matmul(a, b, k_step), out)
    np.testing.assert_array_equal(c.view(np.uint8), exact.view(np.uint8))
    return err


@pytest.mark.parametrize(("m", "n", "k"), SHAPES)
@pytest.mark.parametrize("out", [np.float16, np.float32])
def test_single_core(m, n, k, out):
    a, b = inputs(m, n, k)
    c, ret, result = run_matmul(matmul_single_core, a, b, single_core_tiling(m, n, k), out)
    assert ret == 0 and result.findings == []
    check(c, a, b, out, single_core_tiling(m, n, k).baseK)


@pytest.mark.parametrize(("m", "n", "k"), SHAPES)
@pytest.mark.parametrize("kernel", [matmul_tiled, matmul_api_kernel], ids=["tiled", "matmul_api"])
@pytest.mark.parametrize("buffer_num", [1, 2])
def test_tiled_auto(m, n, k, kernel, buffer_num):
    a, b = inputs(m, n, k, seed=m + n + k)
    tiling, _ = auto_tiling(PROFILE, m, n, k, buffer_num=buffer_num)
    c, ret, result = run_matmul(kernel, a, b, tiling, np.float16)
    assert ret == 0 and result.findings == []
    check(c, a, b, np.float16, tiling.baseK)


@pytest.mark.parametrize(
    ("base", "step", "split", "order"),
    [
        ((64, 64, 32), 1, (3, 2), 0),
        ((32, 48, 16), 3, (2, 3), 1),
        ((128, 128, 64), 2, (1, 1), 1),
        ((16, 16, 16), 1, (4, 4), 0),
    ],
)
@pytest.mark.parametrize("out", [np.float16, np.float32])
def test_tiled_fixed_splits_with_tails(base, step, split, order, out):
    m, n, k = 150, 170, 190  # not a multiple of any base size
    a, b = inputs(m, n, k, seed=7)
    tiling = make_tiling(m, n, k, 24, base, 2, step, *split, order)
    c, ret, result = run_matmul(matmul_tiled, a, b, tiling, out)
    assert ret == 0 and result.findings == []
    check(c, a, b, out, tiling.baseK)


@pytest.mark.parametrize(("step_ka", "step_kb"), [(1, 1), (3, 2), (2, 5)])
@pytest.mark.parametrize("b_trans", [False, True])
def test_tiled_k_steps_and_transposed_b(step_ka, step_kb, b_trans):
    """A and B move to L1 in K chunks of different depths (stepKa != stepKb), B stored [K, N] or [N, K]."""
    m, n, k = 70, 90, 330  # K is not a multiple of either chunk
    a, b = inputs(m, n, k, seed=5)
    tiling = replace(  # two L1 buffers each: depths count base blocks, 2 x the K step
        make_tiling(m, n, k, 24, (32, 48, 16), 2, 1, 2, 2, 0),
        stepKa=step_ka,
        stepKb=step_kb,
        depthA1=2 * step_ka,
        depthB1=2 * step_kb,
    )
    c, ret, result = run_matmul(matmul_tiled, a, b, tiling, np.float16, b_trans=b_trans)
    assert ret == 0 and result.findings == []
    check(c, a, b, np.float16, tiling.baseK)


def test_matmul_api_with_transposed_b():
    a, b = inputs(48, 80, 112, seed=6)
    tiling, _ = auto_tiling(PROFILE, 48, 80, 112)

    @asc.jit(kernel_type=asc.KernelType.AIC_ONLY)
    def kernel(a_ptr, b_ptr, c_ptr, t):
        a_gm, b_gm, c_gm = gm_tensors(a_ptr, b_ptr, c_ptr, t)
        mm = Matmul(asc.TPipe(), t)
        mm.set_tensor_a(a_gm)
        mm.set_tensor_b(b_gm, is_transpose_b=True)
        mm.iterate_all(c_gm)

    sim, stream = device()
    da, db = to_device(sim, a), to_device(sim, np.ascontiguousarray(b.T))
    dc = empty_device(sim, 48 * 80 * 2)
    args = [asc.GlobalAddress(p, asc.half) for p in (da, db, dc)]
    assert sim.acl.rt.launch_kernel(kernel, tiling.usedCoreNum, stream, *args, tiling) == 0
    assert sim.acl.rt.synchronize_stream(stream) == 0
    check(from_device(sim, dc, (48, 80), np.float16), a, b, np.float16, tiling.baseK)


@pytest.mark.slow
@pytest.mark.parametrize("out", [np.float16, np.float32])
def test_tiled_1000_cubed(out):
    a, b = inputs(1000, 1000, 1000, seed=3)
    tiling, _ = auto_tiling(PROFILE, 1000, 1000, 1000)
    c, ret, result = run_matmul(matmul_tiled, a, b, tiling, out)
    assert ret == 0 and result.findings == []
    check(c, a, b, out, tiling.baseK)


@pytest.mark.slow
def test_single_core_1000_cubed():
    a, b = inputs(1000, 1000, 1000, seed=4)
    c, ret, _ = run_matmul(matmul_single_core, a, b, single_core_tiling(1000, 1000, 1000, (128, 128, 64)), np.float16)
    assert ret == 0
    check(c, a, b, np.float16, 64)


def test_coupled_profile_runs_without_a_fix_pipe():
    """910A has no FIX pipe: the L0C copy-out runs on the vector pipe instead, same numbers."""
    a, b = inputs(64, 48, 32)
    profile = load_profile("ascend910a")
    tiling, _ = auto_tiling(profile, 64, 48, 32)
    c, ret, result = run_matmul(matmul_tiled, a, b, tiling, np.float16, profile="ascend910a")
    assert ret == 0 and result.findings == []
    check(c, a, b, np.float16, tiling.baseK)
    lanes = {lane.thread for lane in result.trace.lanes if lane.process.startswith("AIC")}
    assert "FIXP" not in lanes and "VECTOR" in lanes
