"""One Cube arithmetic (engine/aicore/cube.py), checked against a slow, obviously correct reference, and
the same bytes everywhere it is used: the instruction-level path, the fast path, the replay's tile
values, whatever BLAS's thread count.

The stated model: per ``mmad``, each entry's products summed exactly and rounded once to fp32 (nearest
even); L0C adds those partial sums in fp32, mmad after mmad; the first mmad stores its partial sum + 0.
"""

import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from app.present import Replay
from engine import Simulation, asc, load_profile
from engine.aicore import cube
from engine.aicore.matmul_tiling import auto_tiling, make_tiling
from engine.kernels.matmul import matmul_tiled
from engine.scenarios.runner import get_scenario
from engine.trace import Kind
from engine.trace.detail import GM
from tests.kernel_helpers import from_device, inputs, to_device

ROOT = Path(__file__).resolve().parent.parent
PROFILE = load_profile("ascend910b1")


def _nearest32(x: Fraction) -> np.float32:
    """``x`` rounded to the nearest fp32, ties to even: the nearest of three candidates, compared exactly."""
    guess = np.float32(float(x))
    candidates = [np.nextafter(guess, np.float32(-np.inf)), guess, np.nextafter(guess, np.float32(np.inf))]
    return min(candidates, key=lambda c: (abs(Fraction(float(c)) - x), int(c.view(np.uint32)) & 1))


def reference(a: np.ndarray, b: np.ndarray, k_step: int) -> np.ndarray:
    """The model with Python fractions, entry by entry: slow and exact."""
    m, k = a.shape
    n = b.shape[1]
    fa = [[Fraction(float(v)) for v in row] for row in a]
    fb = [[Fraction(float(v)) for v in row] for row in b.T]
    acc = np.zeros((m, n), np.float32)
    for k0 in range(0, k, k_step):
        ks = range(k0, min(k, k0 + k_step))
        for i in range(m):
            for j in range(n):
                part = _nearest32(sum((fa[i][t] * fb[j][t] for t in ks), Fraction(0)))
                acc[i, j] = part + np.float32(0) if k0 == 0 else acc[i, j] + part
    return acc


def wide(rng, shape, dtype=np.float16) -> np.ndarray:
    """Values over most of the dtype's exponent range, some zeros and (for fp16) subnormals: sums BLAS
    cannot be trusted to get exact in fp64."""
    x = rng.standard_normal(shape) * np.exp2(rng.uniform(-26, 14, shape))
    x[rng.random(shape) < 0.1] = 0
    return np.clip(x, -6e4, 6e4).astype(dtype)


CASES = [  # (m, n, k, k_step, data)
    (1, 1, 1, 16, "uniform"),
    (3, 5, 16, 16, "uniform"),
    (7, 6, 65, 32, "uniform"),  # a K tail
    (9, 4, 200, 64, "uniform"),
    (6, 7, 70, 16, "wide"),
    (5, 5, 130, 64, "wide"),
    (4, 6, 40, 16, "fp32"),
]


@pytest.mark.parametrize(("m", "n", "k", "k_step", "data"), CASES)
def test_matmul_is_the_stated_model_exactly(m, n, k, k_step, data):
    rng = np.random.default_rng(m * 100 + n * 10 + k)
    if data == "uniform":
        a, b = rng.uniform(-1, 1, (m, k)).astype(np.float16), rng.uniform(-1, 1, (k, n)).astype(np.float16)
    elif data == "wide":
        a, b = wide(rng, (m, k)), wide(rng, (k, n))
    else:
        a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    got = cube.matmul(a, b, k_step)
    np.testing.assert_array_equal(got.view(np.uint32), reference(a, b, k_step).view(np.uint32))


@pytest.mark.parametrize(("m", "n", "k", "k_step", "data"), [c for c in CASES if c[0] > 2])
def test_matmul_in_bands_of_rows_is_the_same_model(m, n, k, k_step, data, monkeypatch):
    """``matmul`` works a band of rows at a time (its partial sums stay in cache), and finds its operands' bounds
    a band at a time too; bands of two rows (of three, or of one K step, for the bounds) and a shorter last band
    give the reference's bytes."""
    monkeypatch.setattr(cube, "_TILE", 2 * n)
    monkeypatch.setattr(cube, "_MAGNITUDES", 3 * max(n, k))
    rng = np.random.default_rng(m + n + k)
    if data == "fp32":
        a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    else:
        a, b = wide(rng, (m, k)), wide(rng, (k, n))
    got = cube.matmul(a, b, k_step)
    np.testing.assert_array_equal(got.view(np.uint32), reference(a, b, k_step).view(np.uint32))


def straddling(rng, shape, axis) -> np.ndarray:
    """fp16 rows (``axis`` 1) or columns (0) each with a few big entries and the rest 2^d smaller, d from 8
    to 30: the sums' spreads straddle fp64's 53 bits, where the test for BLAS being exact must be right."""
    x = rng.uniform(0.5, 1, shape) * rng.choice([-1, 1], shape)
    lines = shape[1 - axis]
    drop = np.exp2(-rng.integers(8, 31, lines)).reshape((-1, 1) if axis == 1 else (1, -1))
    small = rng.random(shape) < 0.8
    x = np.where(small, x * drop, x) * np.exp2(rng.integers(-2, 12, lines)).reshape(drop.shape)
    return x.astype(np.float16)


@pytest.mark.parametrize("seed", range(6))
def test_sums_near_the_limit_of_fp64_are_still_exact(seed):
    rng = np.random.default_rng(seed)
    a, b = straddling(rng, (12, 64), 1), straddling(rng, (64, 12), 0)
    np.testing.assert_array_equal(cube.matmul(a, b, 64).view(np.uint32), reference(a, b, 64).view(np.uint32))
    ka, kb = cube._operand(a, 1, 64), cube._operand(b, 0, 64)
    rows, _ = cube._inexact(ka.peak[:, 0], ka.mass[:, 0], kb.peak[0], kb.mass[0])
    assert 0 < len(rows) < a.shape[0] * b.shape[1], "both sides of the limit are tried"


def test_an_entry_does_not_depend_on_the_rest_of_the_matrix():
    """The fast path computes a launch at once, the instruction-level path a base block at a time."""
    rng = np.random.default_rng(4)
    a, b = wide(rng, (90, 300)), wide(rng, (300, 70))
    whole = cube.matmul(a, b, 64)
    np.testing.assert_array_equal(whole[17:40, 5:66], cube.matmul(a[17:40], b[:, 5:66], 64))
    acc = np.full((100, 100), 7, np.float32)[10:33, 3:64]  # a strided L0C view, written in place
    for k0 in range(0, 300, 64):
        cube.mmad(acc, a[17:40, k0 : k0 + 64], b[k0 : k0 + 64, 5:66], k0 == 0)
    np.testing.assert_array_equal(acc, whole[17:40, 5:66])


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("sign", [1, -1])
def test_a_sum_just_past_an_fp32_halfway_point_rounds_away(dtype, sign):
    """2^30 + 2^6 + 2^-48: its fp64 rounding, 2^30 + 2^6, is halfway between two fp32 numbers and would
    round down to 2^30; the exact sum rounds up to 2^30 + 2^7."""
    a = np.array([[32768, 8, 2.0**-24]], dtype)
    b = np.array([[sign * 32768], [sign * 8], [sign * 2.0**-24]], dtype)
    assert cube.matmul(a, b, 16)[0, 0] == sign * (2.0**30 + 2.0**7)
    assert cube.matmul(a[:, :2], b[:2], 16)[0, 0] == sign * 2.0**30  # exactly halfway: to even


def test_no_negative_zero_and_nonfinite_inputs_are_deterministic():
    a = np.array([[-0.0, 0.0], [np.inf, 1.0], [np.nan, 1.0]], np.float16)
    b = np.array([[1.0, 0.0], [-0.0, 1.0]], np.float16)
    c = cube.matmul(a, b, 16)
    assert c[0].view(np.uint32).tolist() == [0, 0]  # +0, never -0
    assert c[1, 0] == np.inf and np.isnan(c[1, 1])  # inf * 0 is NaN
    assert (c[2].view(np.uint32) == np.float32("nan").view(np.uint32)).all()


def test_fixpipe_rounds_to_nearest_even():
    x = np.array([1 + 2**-11, 1 + 3 * 2**-11, 70000.0], np.float32)
    assert cube.fixpipe(x, np.float16).tolist() == [1.0, 1 + 2**-9, np.inf]


# -- the same bytes on every path ------------------------------------------------------------------
def run_matmul(fast: bool, m: int, n: int, k: int, tiling, out=np.float16):
    """matmul_tiled on one simulation, the tensors named: (C, finished run)."""
    sim = Simulation("ascend910b1", fast=fast)
    sim.acl.init()
    sim.acl.rt.set_device(0)
    stream, _ = sim.acl.rt.create_stream()
    a, b = inputs(m, n, k, seed=m + n + k)
    da, db = to_device(sim, a), to_device(sim, b)
    dc, _ = sim.acl.rt.malloc(m * n * np.dtype(out).itemsize, 0)
    for ptr, name, shape, dtype in ((da, "A", (m, k), "float16"), (db, "B", (k, n), "float16")):
        sim.name_tensor(ptr, name, shape, dtype)
    sim.name_tensor(dc, "C", (m, n), np.dtype(out).name)
    out_t = asc.half if out == np.float16 else asc.float32
    args = (asc.GlobalAddress(da), asc.GlobalAddress(db), asc.GlobalAddress(dc, out_t), tiling)
    sim.acl.rt.launch_kernel(matmul_tiled, tiling.usedCoreNum, stream, *args)
    assert sim.acl.rt.synchronize_stream(stream) == 0
    return from_device(sim, dc, (m, n), out), sim.finish(), (a, b)


def replayed_c(result, a, b, shape, out) -> np.ndarray:
    """C as the replay's tile values of the instructions that wrote it say it is (the UI's numbers)."""
    replay = Replay(result, inputs={"A": a, "B": b})
    t = result.trace
    owner = next(ident for ident, g in result.gm.items() if g.name == "C")
    c = np.full(shape, np.nan, out)
    raw = c.view(np.uint8).reshape(-1)
    for row in np.flatnonzero(t.kind == Kind.MOVE).tolist():
        d = t.detail_of(row)
        if d.dst is None or d.dst.buf != GM or d.dst.owner != owner:
            continue
        core = int(replay.index.core_of_lane[t.lane[row]])
        values = np.ascontiguousarray(replay.tiles.values(core, row)).view(np.uint8).reshape(d.dst.rows, -1)
        for r in range(d.dst.rows):
            start = d.dst.start + r * d.dst.stride
            raw[start : start + d.dst.row_bytes] = values[r, : d.dst.row_bytes]
    return c


SHAPES = [
    ((300, 200, 100), None, np.float16),
    ((257, 129, 300), None, np.float32),
    ((150, 170, 190), make_tiling(150, 170, 190, 24, (32, 48, 16), 2, 3, 2, 3, 1), np.float16),
    ((96, 64, 48), make_tiling(96, 64, 48, 4, (32, 32, 16), 2, 1, 2, 2, 0), np.float32),
]


@pytest.mark.parametrize(("shape", "tiling", "out"), SHAPES)
def test_plain_path_fast_path_and_replay_give_the_same_bytes(shape, tiling, out):
    m, n, k = shape
    tiling = tiling or auto_tiling(PROFILE, m, n, k, out_bytes=np.dtype(out).itemsize)[0]
    c_plain, _, (a, b) = run_matmul(False, m, n, k, tiling, out)
    c_fast, fast, _ = run_matmul(True, m, n, k, tiling, out)
    np.testing.assert_array_equal(c_fast.view(np.uint8), c_plain.view(np.uint8))
    expected = cube.fixpipe(cube.matmul(a, b, tiling.baseK), out)
    np.testing.assert_array_equal(c_fast.view(np.uint8), expected.view(np.uint8))
    np.testing.assert_array_equal(replayed_c(fast, a, b, (m, n), out), c_fast)


def test_the_replay_shows_the_bytes_the_leaky_relu_fast_path_left_in_c():
    """The mixed kernel's C comes from the vector cores' epilogue over the workspace the fixpipe filled."""
    scenario = get_scenario("matmul-leaky-relu")
    sim = Simulation("ascend910b1", fast=True)
    values = scenario.validate(sim.profile, {"m": 300, "n": 208, "k": 100, "cores": 3})
    kept = {}

    def probe(seq, plan, when):  # C's copy back to the host: the kernel has finished
        if when == "before" and plan.direction == "D2H":
            kept["C"] = np.frombuffer(bytes(sim.devmem.view(plan.source[1])), np.float16).reshape(300, 208)

    sim.copy_probe = probe
    assert scenario.run(sim, **values).correct
    inputs = scenario.inputs(values)
    np.testing.assert_array_equal(replayed_c(sim.finish(), inputs["A"], inputs["B"], (300, 208), np.float16), kept["C"])


def op_matmul_c(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C of the library matmul (``acl.op.matmul``, fp16 out) on A and B, as the host copies it back."""
    from engine.host.acl_codes import ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE

    sim = Simulation("ascend910b1")
    acl = sim.acl
    acl.init()
    acl.rt.set_device(0)
    (m, k), n = a.shape, b.shape[1]
    ptrs = {}
    for name, nbytes in (("a", a.nbytes), ("b", b.nbytes), ("c", m * n * 2)):
        ptrs[name] = acl.rt.malloc(nbytes, ACL_MEM_MALLOC_HUGE_FIRST)[0]
    for name, x in (("a", a), ("b", b)):
        assert acl.rt.memcpy(ptrs[name], x.nbytes, x, x.nbytes, ACL_MEMCPY_HOST_TO_DEVICE) == 0
    stream = acl.rt.create_stream()[0]
    assert acl.op.matmul(ptrs["a"], ptrs["b"], ptrs["c"], m, n, k, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    out = np.zeros((m, n), np.float16)
    assert acl.rt.memcpy(out, out.nbytes, ptrs["c"], out.nbytes, ACL_MEMCPY_DEVICE_TO_HOST) == 0
    return out


def test_the_library_matmul_is_the_cubes_arithmetic():
    rng = np.random.default_rng(5)
    a, b = wide(rng, (200, 300)), wide(rng, (300, 130))
    expected = cube.fixpipe(cube.matmul(a, b, 64), np.float16)
    np.testing.assert_array_equal(op_matmul_c(a, b), expected)


_THREADED = """
import hashlib, json, sys
import numpy as np
sys.path.insert(0, {root!r})
from engine.aicore import cube
from engine.aicore.matmul_tiling import auto_tiling
from engine import load_profile
from tests.test_cube_arithmetic import op_matmul_c, run_matmul, replayed_c, wide

digest = lambda x: hashlib.sha256(np.ascontiguousarray(x).view(np.uint8)).hexdigest()
rng = np.random.default_rng(2)
out = {{"cube": digest(cube.matmul(wide(rng, (256, 700)), wide(rng, (700, 192)), 64))}}
tiling = auto_tiling(load_profile("ascend910b1"), 256, 160, 320)[0]
for fast in (False, True):
    c, result, (a, b) = run_matmul(fast, 256, 160, 320, tiling)
    out["fast" if fast else "plain"] = digest(c)
out["replay"] = digest(replayed_c(result, a, b, (256, 160), np.float16))
out["library"] = digest(op_matmul_c(rng.standard_normal((512, 512)).astype(np.float16),
                                    rng.standard_normal((512, 512)).astype(np.float16)))
print(json.dumps(out))
"""


def test_the_same_bytes_with_one_or_two_blas_threads():
    """In child processes, as a BLAS thread count can only be chosen before numpy loads."""
    found = []
    for threads in ("1", "2"):
        env = {**os.environ, "OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}
        child = subprocess.run(
            [sys.executable, "-c", _THREADED.format(root=str(ROOT))],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
            check=True,
        )
        found.append(json.loads(child.stdout))
    assert found[0] == found[1]
    assert found[0]["plain"] == found[0]["fast"] == found[0]["replay"]


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("k_step", [1, 7, 16, 64])
def test_fp16_bounds_found_band_by_band_are_the_whole_operands(axis, k_step, monkeypatch):
    """An fp16 operand's largest magnitude and sum of magnitudes per K step, found through a small buffer a band
    at a time (bands of one K step, a ragged last step, inf, NaN and all-zero lines), are those of the whole
    array at once: fp16 sums are exact in fp64."""
    rng = np.random.default_rng(k_step + axis)
    x = wide(rng, (150, 97) if axis == 1 else (97, 150))
    x.flat[::13], x.flat[::29] = np.inf, np.nan
    x[3, :] = 0
    x[:, 5] = 0
    values = x.astype(np.float64)
    magnitudes = np.abs(values)
    whole = cube._per_step(np.maximum, magnitudes, axis, k_step), cube._per_step(np.add, magnitudes, axis, k_step)
    monkeypatch.setattr(cube, "_MAGNITUDES", 150)
    banded = cube._magnitudes_per_step(values, axis, k_step)
    for got, want in zip(banded, whole, strict=True):
        np.testing.assert_array_equal(got, want)
