"""The Cube's data layouts: ND in GM, NZ in L1, ZZ in L0A, ZN in L0B, NZ in L0C, ND again through the fixpipe.

* the layout functions are the ADK documentation's definitions ("关键分形格式详解": the pad / reshape /
  transpose formulas of Nz, Zz and Zn, and its ND -> Nz example of a 20 x 28 matrix);
* the buffers really hold the fractal arrangement after each instruction (the engine's bytes);
* a wrong layout is an AI-core error naming the expected and the given format, in English and Chinese:
  ND into Mmad, NZ or ZZ where Mmad wants ZZ or ZN, a missing NZ -> ND conversion, a fixpipe walking L0C
  with the wrong stride, GEMV's m = 1, and parameter fields out of range or not modelled;
* a kernel written as ADK's introductory matmul sample (one ``LoadData2DParams`` per row of fractals) is
  exact against numpy and against the Cube's arithmetic on shapes that are not multiples of 16.
"""

from __future__ import annotations

import numpy as np
import pytest

from engine import asc
from engine.aicore import cube, layout
from engine.aicore.layout import Format
from tests.kernel_helpers import device, empty_device, from_device, to_device
from tests.zh_text import assert_chinese

UP = layout.up


# -- the definitions ----------------------------------------------------------------------------------------------
def test_nd2nz_is_the_documented_example():
    """ADK: a (20, 28) fp16 tensor padded to (32, 32), reshaped (M1, M0, N1, N0), transposed (N1, M1, M0, N0)."""
    a = np.arange(20 * 28, dtype=np.float16).reshape(20, 28)
    doc = np.pad(a, [[0, 12], [0, 4]]).reshape(2, 16, 2, 16).transpose(2, 0, 1, 3)
    ours = layout.nd2nz(a, 16, 32)  # one row per column of fractals
    np.testing.assert_array_equal(ours.reshape(-1), doc.reshape(-1))
    assert ours[1, :16].tolist() == list(range(16, 28)) + [0] * 4  # the second column of fractals starts at 16


def test_zz_and_zn_are_the_documented_formulas():
    """Zz: (M, K) -> (M1, M0, K1, K0) -> (M1, K1, M0, K0); Zn: (K, N) -> (K1, K0, N1, N0) -> (K1, N1, N0, K0)."""
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (48, 32)).astype(np.float16)
    zz = a.reshape(3, 16, 2, 16).transpose(0, 2, 1, 3).reshape(-1)
    np.testing.assert_array_equal(layout.zz_matrix(zz, 3, 2, 16), a)
    b = rng.uniform(-1, 1, (32, 64)).astype(np.float16)
    zn = b.reshape(2, 16, 4, 16).transpose(0, 2, 3, 1).reshape(-1)
    np.testing.assert_array_equal(layout.zn_matrix(zn, 2, 4, 16), b)
    # LoadData3DParamsV2 turns NZ into exactly these; LoadData2DParams with a transpose turns NZ into ZN
    nz = layout.nd2nz(b, 16, 32)
    np.testing.assert_array_equal(layout.load3d(nz, 32, 64, 16, "ZN").reshape(-1), zn)
    a_nz = layout.nd2nz(a, 16, 48)
    np.testing.assert_array_equal(layout.load3d(a_nz, 48, 32, 16, "ZZ").reshape(-1), zz)


def test_formats_read_from_tags():
    nz = layout.nd2nz_tags(7, 3, 2)  # a 48 x 32 tile copied ND -> NZ
    assert layout.classify(nz, 3, 2) == (Format.NZ,)
    zz = nz[[0, 3, 1, 4, 2, 5]]  # row by row
    assert Format.ZZ in layout.classify(zz, 3, 2)
    zn = zz.copy()
    zn[:, layout.T] = 1
    assert layout.classify(zn, 3, 2)[0] == Format.ZN
    # NZ of B^T (N x K) is ZN of B: the transposed reading finds it
    bt = layout.nd2nz_tags(9, 4, 2)  # B^T: 64 x 32, so B is 32 x 64 = 2 x 4 fractals
    assert Format.ZN in layout.classify(bt, 2, 4)
    assert layout.classify(layout.tags(6, layout.ND), 3, 2) == (Format.ND,)
    assert layout.classify(layout.tags(6), 3, 2) == (Format.EMPTY,)


# -- one Cube kernel, right or with one mistake ------------------------------------------------------------------
MISTAKES = (
    "none",
    "nd_in_l1",
    "nz_in_l0a",
    "zz_in_l0b",
    "nd_into_mmad",
    "missing_nz2nd",
    "wrong_src_stride",
    "src_stride_odd",
    "gemv",
    "repeat_zero",
    "c0_stride_short",
    "quant",
)


@asc.jit(kernel_type=asc.KernelType.AIC_ONLY)
def one_block(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, m: int, n: int, k: int, mistake: str):
    """C = A @ B for one block no larger than 64 x 64 x 64, L1 -> L0 as ADK's matmul_basic_api sample."""
    a_gm, b_gm, c_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a, m * k)
    b_gm.set_global_buffer(b, k * n)
    c_gm.set_global_buffer(c, m * n)
    pipe = asc.TPipe()
    bufs = [asc.TBuf(pos) for pos in (asc.TPosition.A1, asc.TPosition.B1, asc.TPosition.A2, asc.TPosition.B2)]
    for buf in bufs:
        pipe.init_buffer(buf=buf, num=64 * 64 * 2)
    out = asc.TBuf(asc.TPosition.CO1)
    pipe.init_buffer(buf=out, num=64 * 64 * 4)
    a1, b1, a2, b2 = (buf.get(asc.half) for buf in bufs)
    co1 = out.get(asc.float32)
    m16, n16, k16 = UP(m, 16), UP(n, 16), UP(k, 16)
    if mistake == "nd_in_l1":  # a row-major tile in L1
        asc.data_copy(a1.reshape(64, 64).tile(0, 0, m, k), a_gm.tile(0, 0, m, k, k))
    else:
        stride = m - 1 if mistake == "c0_stride_short" else m16
        asc.data_copy(a1, a_gm, asc.Nd2NzParams(1, m, k, 0, k, stride, 1, 0))
    asc.data_copy(b1, b_gm, asc.Nd2NzParams(1, k, n, 0, n, k16, 1, 0))
    ev = asc.HardEvent
    asc.set_flag(ev.MTE2_MTE1, 0)
    asc.wait_flag(ev.MTE2_MTE1, 0)
    if mistake == "nz_in_l0a":  # the L1 order kept: columns of fractals
        asc.load_data(a2, a1, asc.LoadData2DParams(0, m16 * k16 // 256, 1))
    elif mistake == "nd_into_mmad":  # GM -> L0A as rows
        asc.data_copy(a2.reshape(64, 64).tile(0, 0, m, k), a_gm.tile(0, 0, m, k, k))
    else:
        for i in range(m16 // 16):
            repeat = 0 if mistake == "repeat_zero" else k16 // 16
            asc.load_data(a2[i * k16 * 16 :], a1[i * 256 :], asc.LoadData2DParams(0, repeat, m16 // 16))
    for i in range(k16 // 16):  # B: each row of fractals, each fractal transposed (NZ -> ZN)
        params = asc.LoadData2DParams(0, n16 // 16, k16 // 16, if_transpose=mistake != "zz_in_l0b")
        asc.load_data(b2[i * n16 * 16 :], b1[i * 256 :], params)
    asc.set_flag(ev.MTE1_M, 0)
    asc.wait_flag(ev.MTE1_M, 0)
    mm = 1 if mistake == "gemv" else (16 if m == 1 else m)
    asc.mmad(co1, a2, b2, asc.MmadParams(mm, n, k))
    asc.set_flag(ev.M_FIX, 0)
    asc.wait_flag(ev.M_FIX, 0)
    config = asc.FixpipeConfig.cfg_nz() if mistake == "missing_nz2nd" else asc.FixpipeConfig.cfg_row_major()
    src_stride = {"wrong_src_stride": m16 - 16, "src_stride_odd": m}.get(mistake, m16)
    quant = asc.QuantModes.F322F16 if mistake == "quant" else asc.QuantModes.NoQuant
    asc.fixpipe(c_gm, co1, asc.FixpipeParamsV220(n, m, src_stride, n, quant), config)


def run_block(m: int, n: int, k: int, mistake: str = "none", seed: int = 0, probe=None):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    sim, stream = device()
    if probe is not None:
        sim.instruction_probe = probe
    da, db, dc = to_device(sim, a), to_device(sim, b), empty_device(sim, m * n * 4)
    args = (asc.GlobalAddress(da, asc.half), asc.GlobalAddress(db, asc.half), asc.GlobalAddress(dc, asc.float32))
    assert sim.acl.rt.launch_kernel(one_block, 1, stream, *args, m, n, k, mistake) == 0
    ret = sim.acl.rt.synchronize_stream(stream)
    c = from_device(sim, dc, (m, n), np.float32)
    return a, b, c, ret, sim.finish()


def kernel_error(result):
    errors = [f for f in result.findings if f.kind == "kernel-error"]
    assert len(errors) == 1, result.findings
    assert_chinese(errors[0].message_zh)
    return errors[0]


@pytest.mark.parametrize(("m", "n", "k"), [(64, 64, 64), (40, 56, 24), (17, 33, 50), (1, 16, 16), (3, 5, 7)])
def test_the_basic_sample_is_exact_on_odd_shapes(m, n, k):
    a, b, c, ret, result = run_block(m, n, k, seed=m * n + k)
    assert ret == 0 and result.findings == []
    np.testing.assert_array_equal(c.view(np.uint32), cube.matmul(a, b, k).view(np.uint32))
    ref = a.astype(np.float32) @ b.astype(np.float32)
    assert np.max(np.abs(c - ref)) <= k * 2.0**-22 + 2.0**-24 * np.max(np.abs(ref))


def test_the_trace_says_how_each_move_rearranged_the_data():
    """The details of a 40 x 24 x 20 block: two ND -> NZ copies, a row of A's fractals per L0A load, a
    transposed row of B's per L0B load."""
    m, n, k = 40, 24, 20
    _a, _b, _c, ret, result = run_block(m, n, k)
    assert ret == 0
    t = result.trace
    copies = [t.detail_of(int(i)) for i in range(len(t)) if t.names[int(t.name[i])] == "data_copy GM->L1 ND2NZ"]
    assert [(d.params.n, d.params.d, d.params.rows, d.params.c0_stride) for d in copies] == [
        (40, 20, 48, 48),
        (20, 24, 32, 32),
    ]
    assert copies[0].dst.rows == 2 and copies[0].dst.row_bytes == 48 * 32  # two columns of fractals
    loads = [t.detail_of(int(i)) for i in range(len(t)) if t.names[int(t.name[i])] == "load_data L1->L0A"]
    assert len(loads) == 3 and all(d.params.repeat == 2 and not d.params.transpose for d in loads)
    b_loads = [t.detail_of(int(i)) for i in range(len(t)) if t.names[int(t.name[i])] == "load_data L1->L0B"]
    assert len(b_loads) == 2 and all(d.params.transpose for d in b_loads)


def test_the_engines_bytes_are_the_layouts():
    """A probe reads L1, L0A, L0B and L0C after the instructions: NZ, ZZ, ZN and NZ of A, B and A @ B."""
    from engine.aicore.tensor import Buffer

    snaps = {}

    def probe(ctx):
        snaps[len(ctx.program)] = {
            buf: ctx.buffer_bytes(buf).copy() for buf in (Buffer.L1, Buffer.L0A, Buffer.L0B, Buffer.L0C)
        }

    m, n, k = 40, 24, 20
    a, b, c, ret, _result = run_block(m, n, k, probe=probe)
    assert ret == 0
    last = snaps[max(snaps)]  # taken when the fixpipe was issued: everything before it has landed in the buffers
    l1 = last[Buffer.L1].view(np.float16)
    np.testing.assert_array_equal(l1[: 2 * 48 * 16], layout.nd2nz(a, 16, 48).reshape(-1))
    a2 = last[Buffer.L0A].view(np.float16)[: 3 * 2 * 256]
    padded_a = np.zeros((48, 32), np.float16)
    padded_a[:m, :k] = a
    np.testing.assert_array_equal(a2, padded_a.reshape(3, 16, 2, 16).transpose(0, 2, 1, 3).reshape(-1))
    b2 = last[Buffer.L0B].view(np.float16)[: 2 * 2 * 256]
    padded_b = np.zeros((32, 32), np.float16)
    padded_b[:k, :n] = b
    np.testing.assert_array_equal(b2, padded_b.reshape(2, 16, 2, 16).transpose(0, 2, 3, 1).reshape(-1))
    c0 = last[Buffer.L0C].view(np.float32)[: 3 * 2 * 256]
    full = np.zeros((48, 32), np.float32)
    full[:m, :n] = c
    got = c0.reshape(2, 48, 16).transpose(1, 0, 2).reshape(48, 32)
    np.testing.assert_array_equal(got[:m, :n], full[:m, :n])


@pytest.mark.parametrize(
    ("mistake", "needles", "needles_zh"),
    [
        ("nd_in_l1", ["fm (L0A) must hold ZZ", "it holds ND"], ["左矩阵 A（L0A）必须是 ZZ", "实际是 ND"]),
        ("nd_into_mmad", ["fm (L0A) must hold ZZ", "it holds ND"], ["必须是 ZZ", "实际是 ND"]),
        ("nz_in_l0a", ["fm (L0A) must hold ZZ", "it holds NZ"], ["必须是 ZZ", "实际是 NZ"]),
        ("zz_in_l0b", ["filter (L0B) must hold ZN", "it holds ZZ"], ["右矩阵 B（L0B）必须是 ZN", "实际是 ZZ"]),
        ("missing_nz2nd", ["GM holds ND", "cfg_nz()", "NZ -> ND"], ["NZ -> ND"]),
        ("wrong_src_stride", ["src_stride = 32 does not walk the NZ result", "48 rows apart"], ["48"]),
        ("src_stride_odd", ["src_stride = 40", "must be a multiple of 16"], ["16 的倍数"]),
        ("gemv", ["m = 1", "GEMV", "ND"], ["GEMV"]),
        ("repeat_zero", ["LoadData2DParams.repeat_times must be an integer in [1, 255], got 0"], ["repeat_times"]),
        ("c0_stride_short", ["dst_nz_c0_stride = 39", "less than n_value = 40"], ["dst_nz_c0_stride = 39"]),
        ("quant", ["quant_pre = F322F16", "float32", "NoQuant"], ["NoQuant"]),
    ],
)
def test_a_wrong_layout_is_an_error_naming_expected_and_given(mistake, needles, needles_zh):
    _a, _b, _c, ret, result = run_block(40, 24, 20, mistake)
    assert ret == 507015  # ACL_ERROR_RT_AICORE_EXCEPTION
    err = kernel_error(result)
    for needle in needles:
        assert needle in err.message, err.message
    for needle in needles_zh:
        assert needle in err.message_zh, err.message_zh


def test_every_mistake_is_tested():
    names = {p[0] for p in test_a_wrong_layout_is_an_error_naming_expected_and_given.pytestmark[0].args[1]}
    assert names == set(MISTAKES) - {"none"}
