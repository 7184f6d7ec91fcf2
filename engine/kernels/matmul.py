"""Matmul kernels on the Cube unit: C[M, N] = A[M, K] @ B[K, N], fp16 in, fp32 accumulate.

The data path of every version: GM -(MTE2)-> L1 -(MTE1)-> L0A / L0B -(M: mmad)-> L0C -(FIX: fixpipe)-> GM,
in the Cube's layouts: ND in GM, NZ in L1, ZZ in L0A, ZN in L0B, NZ in L0C, ND again in GM.

* :func:`matmul_single_core` — one core, one queue slot per stage: the plain pipeline.
* :func:`matmul_tiled` — many cores driven by a ``TCubeTiling``, written with basic instructions
  (like ADK's ``matmul_basic_api_high_performance``): each block computes its
  ``singleCoreM x singleCoreN`` region, base block by base block in ``iterateOrder``; K streams
  through L1 in chunks of ``stepKa`` (A) and ``stepKb`` (B) slices and through L0 one slice per
  ``mmad``, double-buffered when the tiling asks for it, so MTE2, MTE1 and the Cube work at the
  same time. B may be stored transposed ([N, K]), as the Matmul API's ``isTransposeB`` allows.

Tails (M, N or K not multiples of the base sizes) are handled by computing the actual sizes of the
last blocks: the layouts pad them to whole 16 x 16 fractals, as the Cube does.

``matmul_tiled`` names its fast path where it is declared: :func:`stamped_matmul_tiled`, the same
program recorded once per base-block signature and stamped after (:mod:`engine.kernels.matmul_fast`).
"""

from __future__ import annotations

from collections.abc import Callable
from math import lcm

from engine import asc
from engine.aicore import cube
from engine.aicore.matmul_tiling import TCubeTiling
from engine.aicore.running import current
from engine.kernels import matmul_fast


class CubeQueues:
    """The queues of one core's matmul pipeline, sized by a tiling."""

    def __init__(self, pipe: asc.TPipe, t: TCubeTiling) -> None:
        # depthA1 / depthB1 count base blocks (ADK's units); a slot holds one chunk of stepKa / stepKb of them
        self.a1 = asc.TQue(asc.TPosition.A1, t.l1_slots_a)
        self.b1 = asc.TQue(asc.TPosition.B1, t.l1_slots_b)
        self.a2 = asc.TQue(asc.TPosition.A2, t.dbL0A)
        self.b2 = asc.TQue(asc.TPosition.B2, t.dbL0B)
        self.co1 = asc.TQue(asc.TPosition.CO1, t.dbL0C)
        half = asc.half.sizeof()
        pipe.init_buffer(que=self.a1, num=t.l1_slots_a, len=t.baseM * t.baseK * t.stepKa * half)
        pipe.init_buffer(que=self.b1, num=t.l1_slots_b, len=t.baseK * t.stepKb * t.baseN * half)
        pipe.init_buffer(que=self.a2, num=t.dbL0A, len=t.baseM * t.baseK * half)
        pipe.init_buffer(que=self.b2, num=t.dbL0B, len=t.baseK * t.baseN * half)
        pipe.init_buffer(que=self.co1, num=t.dbL0C, len=t.baseM * t.baseN * asc.float32.sizeof())


def compute_base_block(
    q: CubeQueues,
    t: TCubeTiling,
    a_gm,
    b_gm,
    m0: int,
    n0: int,
    rows: int,
    cols: int,
    b_trans: bool = False,
    api: tuple[int, int] | None = None,
    spans: Callable | None = None,
):
    """Accumulate C[m0:m0+rows, n0:n0+cols] over all of K into a fresh L0C tensor; return it (enqueued).

    The data takes the Cube's real layouts, as ADK's ``matmul_basic_api_high_performance`` moves it on the
    910B: A moves GM -> L1 in chunks of ``stepKa`` K slices, B in chunks of ``stepKb`` (one ``data_copy``
    each, the Matmul API's "big package"), converted from ND to NZ on the way (``Nd2NzParams``); each chunk
    is freed after its last slice. One ``load_data`` per operand and K slice (``LoadData3DParamsV2``) turns
    A's NZ into ZZ in L0A and B's into ZN in L0B; ``mmad`` leaves C as NZ in L0C. With ``b_trans`` B is
    stored transposed in GM ([N, K], the ADK's ``isTransposeB``): its L1 chunk is NZ of B^T, which is
    already ZN of B fractal by fractal, so one ``LoadData2DParams`` call moves the slice as it is. A block
    of one row computes 16 (``m`` 1 would be GEMV, which reads L0A as ND), as CANN's Matmul API does.
    ``api``: the Matmul API drives the loop, and its own iteration logic costs the scalar unit ``api[0]``
    cycles per K step plus ``api[1]`` per GM -> L1 copy it sets up (:func:`api_cycles`), one
    ``scalar_work`` instruction per K step.

    K goes in spans where both operands start a chunk (:func:`k_spans`); ``spans(k0, k1, issue)``, when given,
    issues each one (a fast path stamps the spans it has met), else each is issued as it comes.
    """
    c = q.co1.alloc_tensor(asc.float32)
    for k0, k1 in k_spans(t):
        if spans is None:
            _k_span(q, t, a_gm, b_gm, c, m0, n0, rows, cols, b_trans, api, k0, k1)
        else:
            spans(k0, k1, lambda k0=k0, k1=k1: _k_span(q, t, a_gm, b_gm, c, m0, n0, rows, cols, b_trans, api, k0, k1))
    q.co1.enque(c)
    return c


def k_spans(t: TCubeTiling) -> list[tuple[int, int]]:
    """``[k0, k1)`` of K in spans of ``lcm(stepKa, stepKb)`` base K steps: both operands start a chunk at each
    span's start, so a span issues the same instructions wherever it starts, but for its GM addresses, and
    nothing carries over from one span to the next but L0C."""
    span = lcm(t.baseK * t.stepKa, t.baseK * t.stepKb)
    return [(k0, min(k0 + span, t.Ka)) for k0 in range(0, t.Ka, span)]


def _k_span(q, t: TCubeTiling, a_gm, b_gm, c, m0: int, n0: int, rows: int, cols: int, b_trans, api, k0, k1) -> None:
    """The K steps ``[k0, k1)`` of a base block into ``c`` (see :func:`compute_base_block`)."""
    k_total = t.Ka
    chunk_a, chunk_b = t.baseK * t.stepKa, t.baseK * t.stepKb
    m16, n16 = up(rows, FRACTAL), up(cols, FRACTAL)
    a1 = b1 = None
    a_start = b_start = a_len = b_len = 0
    for ks in range(k0, k1, t.baseK):
        new_a, new_b = ks % chunk_a == 0, ks % chunk_b == 0
        if api is not None:
            asc.scalar_work(api[0] + api[1] * (new_a + new_b), API_K_STEP)
        if new_a:
            a_start, a_len = ks, min(chunk_a, k_total - ks)
            a1 = q.a1.alloc_tensor(asc.half)
            asc.data_copy(a1, a_gm[m0 * k_total + ks :], nd2nz(rows, a_len, k_total))
            q.a1.enque(a1)
        if new_b:
            b_start, b_len = ks, min(chunk_b, k_total - ks)
            b1 = q.b1.alloc_tensor(asc.half)
            if b_trans:
                asc.data_copy(b1, b_gm[n0 * k_total + ks :], nd2nz(cols, b_len, k_total))
            else:
                asc.data_copy(b1, b_gm[ks * t.N + n0 :], nd2nz(b_len, cols, t.N))
            q.b1.enque(b1)
        if new_a:
            a1 = q.a1.deque()
        if new_b:
            b1 = q.b1.deque()
        k_act = min(t.baseK, k_total - ks)
        k16 = up(k_act, FRACTAL)
        a2 = q.a2.alloc_tensor(asc.half)
        asc.load_data(a2, a1, window(m16, up(a_len, FRACTAL), 0, ks - a_start, m16, k16))
        q.a2.enque(a2)
        b2 = q.b2.alloc_tensor(asc.half)
        if b_trans:  # NZ of B^T: the slice's k16 / 16 columns of n16 / 16 fractals each, one after another
            first = (ks - b_start) // FRACTAL * (n16 // FRACTAL)
            asc.load_data(b2, b1, asc.LoadData2DParams(first, k16 * n16 // FRACTAL**2, 1))
        else:
            asc.load_data(b2, b1, window(up(b_len, FRACTAL), n16, ks - b_start, 0, k16, n16))
        q.b2.enque(b2)
        a2 = q.a2.deque()
        b2 = q.b2.deque()
        m = FRACTAL if rows == 1 else rows
        asc.mmad(c, a2, b2, asc.MmadParams(m, cols, k_act, cmatrix_init_val=ks == 0))
        q.a2.free_tensor(a2)
        q.b2.free_tensor(b2)
        last = ks + t.baseK >= k_total
        if last or (ks + t.baseK) % chunk_a == 0:
            q.a1.free_tensor(a1)
        if last or (ks + t.baseK) % chunk_b == 0:
            q.b1.free_tensor(b1)


FRACTAL = 16  # rows (and fp16 columns) of one fractal


def up(x: int, multiple: int) -> int:
    return -(-x // multiple) * multiple


def nd2nz(rows: int, cols: int, width: int) -> asc.Nd2NzParams:
    """GM -> L1 of a ``rows x cols`` fp16 tile of a row-major matrix ``width`` elements wide, as NZ with its
    columns of fractals ``rows`` rounded up to 16 apart (ADK's ``Nd2NzParams{1, rows, cols, 0, width, ...}``)."""
    return asc.Nd2NzParams(1, rows, cols, 0, width, up(rows, FRACTAL), 1, 0)


def window(height: int, width: int, m_start: int, k_start: int, rows: int, cols: int) -> asc.LoadData3DParamsV2:
    """L1 -> L0 of the ``rows x cols`` window at (``m_start``, ``k_start``) of an NZ matrix of ``height`` rows
    (its columns of fractals apart) and ``width`` columns (ADK's ``LoadData3DParamsV2`` with a 1 x 1 filter)."""
    return asc.LoadData3DParamsV2(
        l1_h=1,
        l1_w=height,
        channel_size=width,
        k_extension=cols,
        m_extension=rows,
        k_start_pt=k_start,
        m_start_pt=m_start,
    )


API_K_STEP = "Matmul API: K step"  # the name of the Matmul API's scalar work per K step in traces


def api_cycles() -> tuple[int, int]:
    """The Matmul API's own scalar work on the running core: cycles per K step and per GM -> L1 copy
    (the profile's ``[scalar]`` ``matmul_api_k_step`` and ``matmul_api_copy``)."""
    s = current().sim.profile.scalar
    return s.matmul_api_k_step, s.matmul_api_copy


def write_base_block(q: CubeQueues, c_gm, n_total: int, m0: int, n0: int, rows: int, cols: int) -> None:
    """Move a finished L0C block to C in GM: NZ -> ND and fp32 -> C's dtype on the way (the fixpipe)."""
    c = q.co1.deque()
    asc.fixpipe(c_gm[m0 * n_total + n0 :], c, fixpipe_params(rows, cols, n_total, c_gm.dtype))
    q.co1.free_tensor(c)


def fixpipe_params(rows: int, cols: int, width: int, dtype) -> asc.FixpipeParamsV220:
    """L0C -> GM of a ``rows x cols`` block (its NZ columns ``rows`` rounded up to 16 apart) into a row-major
    matrix ``width`` elements wide, converting to ``dtype`` (ADK's ``FixpipeParamsV220{n, m, m16, N, ...}``)."""
    quant = asc.QuantModes.F322F16 if dtype == asc.float16 else asc.QuantModes.NoQuant
    return asc.FixpipeParamsV220(cols, rows, up(rows, FRACTAL), width, quant)


def base_blocks(t: TCubeTiling, m0: int, n0: int, rows: int, cols: int):
    """The base blocks of a core region, ``(m, n, rows, cols)``, in the tiling's iterate order."""
    ms = [(m, min(t.baseM, m0 + rows - m)) for m in range(m0, m0 + rows, t.baseM)]
    ns = [(n, min(t.baseN, n0 + cols - n)) for n in range(n0, n0 + cols, t.baseN)]
    if t.iterateOrder == 0:  # M first: down a column of C, then the next column
        return [(m, n, mr, nc) for n, nc in ns for m, mr in ms]
    return [(m, n, mr, nc) for m, mr in ms for n, nc in ns]


def gm_tensors(a, b, c, t: TCubeTiling):
    a_gm, b_gm, c_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a, t.M * t.Ka)
    b_gm.set_global_buffer(b, t.Kb * t.N)
    c_gm.set_global_buffer(c, t.M * t.N)
    return a_gm, b_gm, c_gm


def stamped_matmul_tiled(
    a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, tiling: TCubeTiling, b_trans: bool = False
):
    """:func:`matmul_tiled`'s fast path: the same program, each base block's signature recorded once and
    stamped after; C's numbers from the launch's product (:mod:`engine.kernels.matmul_fast`)."""
    if not matmul_fast.separate(a, b, c):  # stamped copies cannot shift shared allocations apart
        return matmul_tiled.fn(a, b, c, tiling, b_trans)
    return stamped_blocks("matmul_tiled", a, b, c, tiling, b_trans, None)


def stamped_blocks(name: str, a, b, c, tiling: TCubeTiling, b_trans: bool, api: tuple[int, int] | None) -> None:
    """A core's base blocks as :func:`compute_base_block` and :func:`write_base_block` issue them, each
    signature recorded once and stamped after (the fast paths of :func:`matmul_tiled` and of the Matmul
    API's kernel, :mod:`engine.kernels.matmul_api`)."""
    t = tiling
    m0, n0, rows, cols = t.core_region(asc.get_block_idx())
    if rows == 0 or cols == 0:
        return
    a_gm, b_gm, c_gm = gm_tensors(a, b, c, t)
    q = CubeQueues(asc.TPipe(), t)
    out = c.dtype.sizeof()
    strides = [(a_gm, (0, t.Ka * 2, 0)), (b_gm, (0, 0, t.Ka * 2 if b_trans else 2)), (c_gm, (0, t.N * out, out))]

    queues = (q.a1, q.b1, q.a2, q.b2, q.co1)
    # K spans stamped too (a K loop of 128 steps issues a few distinct spans): per row, column and element of K
    k_strides = [(a_gm, (t.Ka * 2, 0, 2)), (b_gm, (0, t.Ka * 2, 2) if b_trans else (0, 2, t.N * 2))]
    spans = matmul_fast.span_stamper(name, queues, k_strides, (b_trans, api))

    def step(_i: int, blk: tuple) -> None:
        compute_base_block(q, t, a_gm, b_gm, *blk, b_trans, api, spans(blk))
        write_base_block(q, c_gm, t.N, *blk)

    matmul_fast.stamp_blocks(name, base_blocks(t, m0, n0, rows, cols), queues, strides, step)

    def write(values, matrix) -> None:  # what the fixpipes of this region leave in C
        c_values = matrix(c_gm, t.M, t.N)
        c_values[m0 : m0 + rows, n0 : n0 + cols] = cube.fixpipe(values, c_values.dtype)

    matmul_fast.with_region(a_gm, b_gm, t, (m0, n0, rows, cols), write, b_trans)


@asc.jit(kernel_type=asc.KernelType.AIC_ONLY, fast_path=stamped_matmul_tiled)
def matmul_tiled(
    a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, tiling: TCubeTiling, b_trans: bool = False
):
    """``b_trans``: B is stored as [N, K] (the Matmul API's ``isTransposeB``)."""
    m0, n0, rows, cols = tiling.core_region(asc.get_block_idx())
    if rows == 0 or cols == 0:
        return
    a_gm, b_gm, c_gm = gm_tensors(a, b, c, tiling)
    pipe = asc.TPipe()
    q = CubeQueues(pipe, tiling)
    for bm, bn, mr, nc in base_blocks(tiling, m0, n0, rows, cols):
        compute_base_block(q, tiling, a_gm, b_gm, bm, bn, mr, nc, b_trans)
        write_base_block(q, c_gm, tiling.N, bm, bn, mr, nc)


@asc.jit(kernel_type=asc.KernelType.AIC_ONLY)
def matmul_single_core(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, tiling: TCubeTiling):
    """One core, one buffer per stage, and the hardware flags written out by hand (no TQue).

    Each arrow of GM -> L1 -> L0A/L0B -> Cube -> L0C -> GM is a set_flag on the producing pipe and a
    wait_flag on the consuming one; the reverse flags say a buffer may be overwritten. Nothing overlaps:
    it is the baseline the double-buffered kernels improve on. L1 -> L0 is written as ADK's introductory
    ``matmul_basic_api`` sample writes it: one ``LoadData2DParams`` call per row of fractals.
    """
    t = tiling
    a_gm, b_gm, c_gm = gm_tensors(a, b, c, t)
    pipe = asc.TPipe()
    l1_a, l1_b = asc.TBuf(asc.TPosition.A1), asc.TBuf(asc.TPosition.B1)
    l0_a, l0_b, l0_c = asc.TBuf(asc.TPosition.A2), asc.TBuf(asc.TPosition.B2), asc.TBuf(asc.TPosition.CO1)
    half = asc.half.sizeof()
    pipe.init_buffer(buf=l1_a, num=t.baseM * t.baseK * half)
    pipe.init_buffer(buf=l1_b, num=t.baseK * t.baseN * half)
    pipe.init_buffer(buf=l0_a, num=t.baseM * t.baseK * half)
    pipe.init_buffer(buf=l0_b, num=t.baseK * t.baseN * half)
    pipe.init_buffer(buf=l0_c, num=t.baseM * t.baseN * asc.float32.sizeof())
    a1, b1 = l1_a.get(asc.half), l1_b.get(asc.half)
    a2, b2, c0 = l0_a.get(asc.half), l0_b.get(asc.half), l0_c.get(asc.float32)
    ev = asc.HardEvent
    for m0, n0, rows, cols in base_blocks(t, 0, 0, t.M, t.N):
        m16, n16 = up(rows, FRACTAL), up(cols, FRACTAL)
        for k0 in range(0, t.Ka, t.baseK):
            k_act = min(t.baseK, t.Ka - k0)
            k16 = up(k_act, FRACTAL)
            asc.data_copy(a1, a_gm[m0 * t.Ka + k0 :], nd2nz(rows, k_act, t.Ka))  # ND -> NZ
            asc.data_copy(b1, b_gm[k0 * t.N + n0 :], nd2nz(k_act, cols, t.N))
            asc.set_flag(ev.MTE2_MTE1, 0)
            asc.wait_flag(ev.MTE2_MTE1, 0)  # L1 holds the tiles
            for i in range(m16 // FRACTAL):  # NZ -> ZZ: each row of A's fractals, one column of fractals apart
                params = asc.LoadData2DParams(0, k16 // FRACTAL, m16 // FRACTAL)
                asc.load_data(a2[i * k16 * FRACTAL :], a1[i * FRACTAL * FRACTAL :], params)
            for i in range(k16 // FRACTAL):  # NZ -> ZN: each row of B's fractals, each fractal transposed
                params = asc.LoadData2DParams(0, n16 // FRACTAL, k16 // FRACTAL, if_transpose=True)
                asc.load_data(b2[i * n16 * FRACTAL :], b1[i * FRACTAL * FRACTAL :], params)
            asc.set_flag(ev.MTE1_M, 0)
            asc.wait_flag(ev.MTE1_M, 0)  # L0A/L0B hold the operands
            asc.set_flag(ev.MTE1_MTE2, 0)
            asc.wait_flag(ev.MTE1_MTE2, 0)  # L1 may be overwritten by the next copy
            m = FRACTAL if rows == 1 else rows
            asc.mmad(c0, a2, b2, asc.MmadParams(m, cols, k_act, cmatrix_init_val=(k0 == 0)))
            asc.set_flag(ev.M_MTE1, 0)
            asc.wait_flag(ev.M_MTE1, 0)  # L0A/L0B may be overwritten by the next load
        asc.set_flag(ev.M_FIX, 0)
        asc.wait_flag(ev.M_FIX, 0)  # L0C holds the finished block
        asc.fixpipe(c_gm[m0 * t.N + n0 :], c0, fixpipe_params(rows, cols, t.N, c_gm.dtype))
        asc.set_flag(ev.FIX_M, 0)
        asc.wait_flag(ev.FIX_M, 0)  # L0C may be overwritten by the next block


def single_core_tiling(m: int, n: int, k: int, base: tuple[int, int, int] = (64, 64, 64)) -> TCubeTiling:
    """The tiling :func:`matmul_single_core` runs with: one core, one slot per stage."""
    bm, bn, bk = base
    return TCubeTiling(
        usedCoreNum=1,
        M=m,
        N=n,
        Ka=k,
        Kb=k,
        singleCoreM=m,
        singleCoreN=n,
        singleCoreK=k,
        baseM=bm,
        baseN=bn,
        baseK=bk,
        depthA1=1,
        depthB1=1,
        stepM=1,
        stepN=1,
        stepKa=1,
        stepKb=1,
        isBias=0,
        iterateOrder=1,
        dbL0A=1,
        dbL0B=1,
        dbL0C=1,
    )
