"""The Cube's instructions, with its real data layouts (:mod:`engine.aicore.layout`).

* :func:`copy_nd2nz` — ``DataCopy(l1, gm, Nd2NzParams)``: GM (ND) -> L1 (NZ), on MTE2 (reached through
  :func:`engine.aicore.instructions.data_copy`);
* :func:`load_data` — ``LoadData``: L1 -> L0A / L0B on MTE1, with ``LoadData2DParams`` (whole fractals, one row
  of them per call for NZ -> ZZ, transposed for NZ -> ZN) or ``LoadData3DParamsV2`` (NZ -> ZZ into L0A, NZ ->
  ZN into L0B, a whole operand in one call, as CANN's high-performance matmul samples do on the 910B);
* :func:`mmad` — ``Mmad``: L0C (NZ) = or += L0A (ZZ) @ L0B (ZN), on the Cube;
* ``fixpipe`` (:mod:`.cube_fixpipe`) — ``Fixpipe``: L0C (NZ) -> GM as ND (NZ2ND) or -> L1, converting fp32.

Every instruction moves the data as the hardware arranges it, so L1 and L0 really hold fractals, and moves
its *tags* (where each fractal came from) with it; ``mmad`` and ``fixpipe`` read the tags and refuse an
operand in the wrong format with an error naming the expected and the given one (the hardware would
compute garbage instead). Costs: a copy by the bytes it reads from GM, a load by the whole fractals it
moves, ``mmad`` one 16x16x16 fractal product per cycle, ``fixpipe`` by the bytes it writes.
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np

from ..trace import Kind
from ..trace.detail import Instr, Load2D, Load3D, Nd2Nz, Rect
from . import cube, layout
from .cube_params import (
    LoadData2DParams,
    LoadData3DParamsV2,
    MmadParams,
    Nd2NzParams,
    check_field,
    check_struct,
    not_modelled,
)
from .layout import DESCRIBED, FRACTAL_ROWS, L0C_UNIT, UNIT, Format
from .operands import fail, rect, tile_array
from .pipes import Pipe
from .program import GM_READ, LOCAL
from .running import current
from .tensor import Buffer, GlobalTensor, LocalTensor, Tile, float16, float32

UNIT_OF = MappingProxyType({Buffer.L1: UNIT, Buffer.L0A: UNIT, Buffer.L0B: UNIT, Buffer.L0C: L0C_UNIT})


# -- shared -----------------------------------------------------------------------------------------------------
def view(ctx, r: Rect, dtype) -> np.ndarray:
    """A writable ``rows x cols`` view of the bytes of ``r`` (on chip or in GM) as ``dtype``."""
    if r.buf == Buffer.GM.value:
        raise ValueError("GM rectangles are read and written through tiles")
    raw = ctx.buffer_bytes(Buffer(r.buf))[r.start : r.end]
    rows = np.lib.stride_tricks.as_strided(raw, (r.rows, r.row_bytes), (r.stride, 1), writeable=True)
    return rows.view(dtype)


def tags_of(ctx, buf: Buffer) -> np.ndarray:
    return ctx.tags.of(buf.value, ctx.capacity(buf), UNIT_OF[buf])


def local_tensor(op: str, t, buffers: tuple[Buffer, ...], what: str, what_zh: str) -> LocalTensor:
    if not isinstance(t, LocalTensor) or t.buffer not in buffers:
        names = " / ".join(b.name for b in buffers)
        fail(f"{op}: {what} must be an {names} LocalTensor", f"{op}: {what_zh}必须是 {names} 上的 LocalTensor")
    return t


def aligned(op: str, t: LocalTensor, multiple: int, what: tuple[str, str]) -> None:
    """``t``'s address must be a multiple of ``multiple`` bytes; ``what``: the operand, English and Chinese."""
    if t.offset % multiple:
        fail(
            f"{op}: the {what[0]} address {t.buffer.name} +{t.offset} B is not {multiple}-byte aligned",
            f"{op}: {what[1]}地址 {t.buffer.name} +{t.offset} B 没有按 {multiple} 字节对齐",
        )


def room(op: str, t: LocalTensor, end: int, what: tuple[str, str]) -> None:
    """``t`` must hold ``end`` bytes from its start; ``what``: what needs them, English and Chinese."""
    if end > t.nbytes:
        fail(
            f"{op}: the {what[0]} needs {end} B from {t.buffer.name} +{t.offset} B, the tensor has {t.nbytes} B",
            f"{op}: {what[1]}需要从 {t.buffer.name} +{t.offset} B 起的 {end} B，而张量只有 {t.nbytes} B",
        )


def fractal_units(byte_offsets: np.ndarray, unit: int) -> np.ndarray | None:
    """Unit indices of fractals starting at ``byte_offsets``, or None when one is not on a unit boundary."""
    if (byte_offsets % unit).any():
        return None
    return byte_offsets // unit


def tag_nd(ctx, buf: Buffer, r: Rect) -> None:
    """A plain copy wrote ``r``: every unit it touches holds ND data now."""
    unit = UNIT_OF.get(buf)
    if unit is None:
        return
    first, last = r.start // unit, (r.end - 1) // unit
    tags_of(ctx, buf)[first : last + 1] = (layout.ND, 0, 0, 0)


def tag_plain_write(ctx, dst: LocalTensor, r: Rect) -> None:
    """What a row-major copy into L1 or L0 does to the tags (called by ``data_copy``)."""
    tag_nd(ctx, dst.buffer, r)


def _describe(fmt: Format) -> tuple[str, str]:
    return DESCRIBED[fmt]


# -- GM -> L1, ND -> NZ -----------------------------------------------------------------------------------------
def copy_nd2nz(dst, src, p: Nd2NzParams) -> None:
    """``DataCopy(dst, src, Nd2NzParams)``: ``p.n_value`` rows of ``p.d_value`` elements from ``src`` (rows
    ``p.src_d_value`` apart) into L1 as NZ, columns of fractals ``p.dst_nz_c0_stride`` 32-byte rows apart."""
    ctx = current()
    launch = ctx.launch
    op, s = "data_copy", "Nd2NzParams"
    if check_field(op, s, "nd_num", p.nd_num, 0, 4095) not in (0, 1):
        not_modelled(op, s, "nd_num", p.nd_num, ("0 and 1", " 0 和 1"))
    n = check_field(op, s, "n_value", p.n_value, 0, 16384)
    d = check_field(op, s, "d_value", p.d_value, 0, 65535)
    check_field(op, s, "src_nd_matrix_stride", p.src_nd_matrix_stride, 0, 65535)
    row = check_field(op, s, "src_d_value", p.src_d_value, 1, 65535)
    stride = check_field(op, s, "dst_nz_c0_stride", p.dst_nz_c0_stride, 1, 16384)
    if check_field(op, s, "dst_nz_n_stride", p.dst_nz_n_stride, 1, 16384) != 1:
        not_modelled(
            op,
            s,
            "dst_nz_n_stride",
            p.dst_nz_n_stride,
            ("1: the rows of a column of fractals one after another", " 1：一列分形中的行首尾相接"),
        )
    check_field(op, s, "dst_nz_matrix_stride", p.dst_nz_matrix_stride, 0, 16384)
    if not p.nd_num or not n or not d:
        return  # documented: ndNum, nValue or dValue 0 is a NOP
    if isinstance(src, Tile) or not isinstance(src, GlobalTensor):
        fail(
            f"{op} with Nd2NzParams reads a GlobalTensor positioned at the tile's first element "
            f"(gm[r0 * k + c0:]), got {type(src).__name__}",
            f"{op} 使用 Nd2NzParams 时源操作数是定位到分块首元素的 GlobalTensor（gm[r0 * k + c0:]），"
            f"实际为 {type(src).__name__}",
        )
    dst = local_tensor(
        op,
        dst,
        (Buffer.L1,),
        "with Nd2NzParams the destination (ND -> NZ happens on the way GM -> L1)",
        "使用 Nd2NzParams 时目的操作数（ND -> NZ 在 GM -> L1 的途中完成）",
    )
    if dst.dtype.sizeof() != src.dtype.sizeof():
        fail(
            f"{op} GM -> L1: element sizes differ ({src.dtype!r} vs {dst.dtype!r})",
            f"{op} GM -> L1: 元素大小不同（{src.dtype!r} 与 {dst.dtype!r}）",
        )
    aligned(op, dst, 32, ("L1 destination", "L1 目的操作数"))
    if stride < n:
        fail(
            f"{op}: Nd2NzParams.dst_nz_c0_stride = {stride} (rows from one column of fractals to the next) is less "
            f"than n_value = {n}: the columns would overlap",
            f"{op}: Nd2NzParams.dst_nz_c0_stride = {stride}（相邻两列分形之间的行数）小于 n_value = {n}："
            "各列会相互重叠",
        )
    size = dst.dtype.sizeof()
    c0_ = layout.c0(size)
    rows, cols = min(layout.up(n, FRACTAL_ROWS), stride), layout.count(d, c0_)
    room(op, dst, (cols - 1) * stride * 32 + rows * 32, ("NZ tile", "NZ 分块"))
    ctx.gm_check(src, 0, (n - 1) * row + d, False)
    lo = src.byte_offset
    gm = rect(src, lo, n, d * size, row * size)
    local = rect(dst, dst.offset, cols, rows * 32, stride * 32)
    key = launch.tile_key(src.alloc, lo, n, d * size, row * size)
    ctx.emit(
        Pipe.MTE2,
        GM_READ,
        launch.mte_startup_ps,
        launch.rate["gm_to_l1"],
        key,
        n * d * size,
        "data_copy GM->L1 ND2NZ",
        Kind.MOVE,
        Instr(op, local, (gm,), 0, Nd2Nz(n, d, rows, stride)),
    )
    starts = dst.offset + np.arange(cols)[:, None] * stride * 32 + np.arange(0, rows, FRACTAL_ROWS)[None, :] * 32
    units = fractal_units(starts.reshape(-1), UNIT) if rows % FRACTAL_ROWS == 0 else None
    if units is None:
        tag_nd(ctx, Buffer.L1, local)
    else:
        tags_of(ctx, Buffer.L1)[units] = layout.nd2nz_tags(ctx.tags.new_source(), rows // FRACTAL_ROWS, cols)
    if ctx.numerics:
        values = tile_array(ctx, Tile(src, 0, n, d, row))
        view(ctx, local, dst.dtype.np)[:] = layout.nd2nz(values, c0_, rows)


# -- L1 -> L0A / L0B ------------------------------------------------------------------------------------------
def load_data(dst, src, params) -> None:
    """``LoadData(dst, src, params)``: L1 (``src``, A1/B1) -> L0A (A2) or L0B (B2) on MTE1, with
    ``LoadData2DParams`` or ``LoadData3DParamsV2``."""
    ctx = current()
    op = "load_data"
    src = local_tensor(op, src, (Buffer.L1,), "the source (an A1/B1 tensor in L1)", "源操作数（L1 上的 A1/B1 张量）")
    dst = local_tensor(op, dst, (Buffer.L0A, Buffer.L0B), "the destination (A2 or B2)", "目的操作数（A2 或 B2）")
    if src.dtype != dst.dtype:
        fail(
            f"{op}: source and destination dtypes differ ({src.dtype!r} vs {dst.dtype!r})",
            f"{op}: 源与目的数据类型不同（{src.dtype!r} 与 {dst.dtype!r}）",
        )
    aligned(op, dst, ctx.launch.granularity(dst.buffer), ("destination", "目的操作数"))
    aligned(op, src, 32, ("source", "源操作数"))
    if isinstance(params, LoadData3DParamsV2):
        _load3d(ctx, dst, src, params)
    else:
        check_struct(op, params, LoadData2DParams)
        _load2d(ctx, dst, src, params)


def _emit_load(ctx, dst: LocalTensor, nbytes: int, detail: Instr) -> None:
    launch = ctx.launch
    path = "l1_to_l0a" if dst.buffer == Buffer.L0A else "l1_to_l0b"
    cost = launch.mte_startup_ps + round(nbytes / launch.rate[path])
    ctx.emit(Pipe.MTE1, LOCAL, cost, 0.0, -1, nbytes, f"load_data L1->{dst.buffer.name}", Kind.MOVE, detail)


def _load2d(ctx, dst: LocalTensor, src: LocalTensor, p: LoadData2DParams) -> None:
    op, s = "load_data", "LoadData2DParams"
    start = check_field(op, s, "start_index", p.start_index, 0, 65535)
    repeat = check_field(op, s, "repeat_times", p.repeat_times, 1, 255)
    step = check_field(op, s, "src_stride", p.src_stride, 0, 65535)
    check_field(op, s, "sid", p.sid, 0, 0)
    gap = check_field(op, s, "dst_gap", p.dst_gap, 0, 65535)
    if check_field(op, s, "addr_mode", p.addr_mode, 0, 1):
        not_modelled(op, s, "addr_mode", p.addr_mode, ("0 (addresses increasing)", " 0（地址递增）"))
    transpose = bool(p.if_transpose)
    size = src.dtype.sizeof()
    if transpose and size != 2:
        not_modelled(op, s, "if_transpose", True, ("transposes of 16-bit fractals", " 16 位分形的转置"))
    first = start * UNIT
    room(op, src, first + ((repeat - 1) * step + 1) * UNIT, ("last source fractal", "最后一个源分形"))
    room(op, dst, ((repeat - 1) * (1 + gap) + 1) * UNIT, ("last destination fractal", "最后一个目的分形"))
    if step == 1 or repeat == 1:
        src_r = rect(src, src.offset + first, 1, repeat * UNIT, repeat * UNIT)
    else:
        src_r = rect(src, src.offset + first, repeat, UNIT, step * UNIT)
    if gap == 0:
        dst_r = rect(dst, dst.offset, 1, repeat * UNIT, repeat * UNIT)
    else:
        dst_r = rect(dst, dst.offset, repeat, UNIT, (1 + gap) * UNIT)
    _emit_load(ctx, dst, repeat * UNIT, Instr(op, dst_r, (src_r,), 0, Load2D(repeat, transpose)))
    i = np.arange(repeat)
    src_units = fractal_units(src.offset + first + i * step * UNIT, UNIT)
    dst_units = dst.offset // UNIT + i * (1 + gap)
    moved = layout.tags(repeat, layout.ND) if src_units is None else tags_of(ctx, Buffer.L1)[src_units].copy()
    if transpose:
        moved[moved[:, layout.SRC] >= 0, layout.T] ^= 1
    tags_of(ctx, dst.buffer)[dst_units] = moved
    if ctx.numerics:
        c0_ = layout.c0(size)
        values = view(ctx, src_r, src.dtype.np)
        out = layout.load2d(values, repeat, (FRACTAL_ROWS, c0_), transpose)
        target = view(ctx, dst_r, dst.dtype.np)
        target[:] = out.reshape(target.shape)


def _load3d(ctx, dst: LocalTensor, src: LocalTensor, p: LoadData3DParamsV2) -> None:
    op, s = "load_data", "LoadData3DParamsV2"
    for field, want in (
        ("l1_h", 1), ("stride_w", 1), ("stride_h", 1), ("filter_w", 1), ("filter_h", 1),
        ("dilation_filter_w", 1), ("dilation_filter_h", 1), ("filter_size_w", False), ("filter_size_h", False),
        ("f_matrix_ctrl", False),
    ):  # fmt: skip
        if getattr(p, field) != want:
            not_modelled(
                op,
                s,
                field,
                getattr(p, field),
                (
                    f"{want} (the matmul use: a 1 x 1 filter over one row)",
                    f" {want}（矩阵乘的用法：1 x 1 卷积核，只有一行）",
                ),
            )
    if tuple(p.pad_list) != (0, 0, 0, 0):
        not_modelled(op, s, "pad_list", p.pad_list, ("(0, 0, 0, 0)", " (0, 0, 0, 0)"))
    width = check_field(op, s, "l1_w", p.l1_w, 0, 32767)
    channels = check_field(op, s, "channel_size", p.channel_size, 0, 65535)
    cols = check_field(op, s, "k_extension", p.k_extension, 0, 65535)
    rows = check_field(op, s, "m_extension", p.m_extension, 0, 65535)
    k0 = check_field(op, s, "k_start_pt", p.k_start_pt, 0, 65535)
    m0 = check_field(op, s, "m_start_pt", p.m_start_pt, 0, 32767)
    if not width or not channels or not cols or not rows:
        return  # documented: any of these 0 is a NOP
    if src.dtype.sizeof() != 2:
        not_modelled(op, s, "the dtype", src.dtype.name, ("16-bit data (half)", " 16 位数据（half）"))
    for field, value in (("channel_size", channels), ("k_extension", cols), ("m_extension", rows),
                         ("k_start_pt", k0), ("m_start_pt", m0), ("l1_w", width)):  # fmt: skip
        if value % FRACTAL_ROWS:
            not_modelled(op, s, field, value, ("multiples of 16: whole fractals", " 16 的倍数：完整的分形"))
    for field, value, limit, name in (("m_start_pt + m_extension", m0 + rows, width, "l1_w"),
                                      ("k_start_pt + k_extension", k0 + cols, channels, "channel_size")):  # fmt: skip
        if value > limit:
            fail(
                f"{op}: {s}.{field} = {value} passes {name} = {limit}: the window leaves the matrix in L1",
                f"{op}: {s}.{field} = {value} 超过了 {name} = {limit}：窗口超出了 L1 中的矩阵",
            )
    order = "ZN" if dst.buffer == Buffer.L0B else ("ZZ_T" if p.en_transpose else "ZZ")
    r1, k1 = rows // FRACTAL_ROWS, cols // FRACTAL_ROWS
    first = (k0 // FRACTAL_ROWS) * width * 32 + m0 * 32
    room(op, src, first + (k1 - 1) * width * 32 + rows * 32, ("window", "窗口"))
    room(op, dst, r1 * k1 * UNIT, ("destination fractals", "目的分形"))
    src_r = rect(src, src.offset + first, k1, rows * 32, width * 32)
    dst_r = rect(dst, dst.offset, 1, r1 * k1 * UNIT, r1 * k1 * UNIT)
    nbytes = rows * cols * src.dtype.sizeof()
    _emit_load(ctx, dst, nbytes, Instr(op, dst_r, (src_r,), 0, Load3D(rows, cols, order)))
    starts = src.offset + first + np.arange(k1)[:, None] * width * 32 + np.arange(r1)[None, :] * UNIT
    units = fractal_units(starts.reshape(-1), UNIT)
    window = layout.tags(r1 * k1, layout.ND) if units is None else tags_of(ctx, Buffer.L1)[units]
    moved = layout.load3d_tags(window, r1, k1, order)
    moved[moved[:, layout.SRC] < 0, layout.T] = 0
    tags_of(ctx, dst.buffer)[dst.offset // UNIT + np.arange(r1 * k1)] = moved
    if ctx.numerics:
        out = layout.load3d(view(ctx, src_r, src.dtype.np), rows, cols, FRACTAL_ROWS, order)
        view(ctx, dst_r, dst.dtype.np)[:] = out


# -- the Cube ---------------------------------------------------------------------------------------------------
def _expect(ctx, op: str, t: LocalTensor, what: tuple[str, str], r1: int, c1: int, want: Format, hint) -> None:
    """The ``r1 x c1`` fractals of ``t`` must be ``want``, or the error naming the expected and given formats."""
    found = layout.classify(tags_of(ctx, t.buffer)[t.offset // UNIT + np.arange(r1 * c1)], r1, c1)
    if want in found:
        return
    given = found[0]
    (w_en, w_zh), (g_en, g_zh) = _describe(want), _describe(given)
    fail(
        f"{op}: {what[0]} ({t.buffer.name}) must hold {w_en}; it holds {g_en}. {hint[0]}",
        f"{op}: {what[1]}（{t.buffer.name}）必须是 {w_zh}；实际是 {g_zh}。{hint[1]}",
    )


_HINT_A = (
    "Copy A into L1 with data_copy(..., Nd2NzParams) (NZ) and load it into L0A with load_data: one "
    "LoadData2DParams call per row of fractals, or LoadData3DParamsV2.",
    "先用 data_copy(..., Nd2NzParams) 把 A 以 NZ 搬入 L1，再用 load_data 载入 L0A：每行分形一次 LoadData2DParams，"
    "或用 LoadData3DParamsV2。",
)
_HINT_B = (
    "Copy B into L1 with data_copy(..., Nd2NzParams) (NZ) and load it into L0B transposing each fractal "
    "(LoadData2DParams.if_transpose, or LoadData3DParamsV2).",
    "先用 data_copy(..., Nd2NzParams) 把 B 以 NZ 搬入 L1，再用 load_data 载入 L0B 并转置每个分形"
    "（LoadData2DParams.if_transpose，或 LoadData3DParamsV2）。",
)


def mmad(dst, fm, filter, params: MmadParams) -> None:
    """``Mmad(dst, fm, filter, params)``: ``dst`` (L0C, NZ, fp32) = or += ``fm`` (L0A, ZZ, m x k) @ ``filter``
    (L0B, ZN, k x n), fp16 x fp16 -> fp32 (:mod:`.cube`); one 16x16x16 fractal product per cycle."""
    ctx = current()
    launch = ctx.launch
    op, s = "mmad", "MmadParams"
    check_struct(op, params, MmadParams)
    m = check_field(op, s, "m", params.m, 0, 4095)
    n = check_field(op, s, "n", params.n, 0, 4095)
    k = check_field(op, s, "k", params.k, 0, 4095)
    if check_field(op, s, "unit_flag", params.unit_flag, 0, 3):
        not_modelled(op, s, "unit_flag", params.unit_flag, ("0", " 0"))
    if params.cmatrix_source:
        not_modelled(
            op,
            s,
            "cmatrix_source",
            True,
            ("False: C starts from L0C, not the bias table", " False：C 的初值取自 L0C，而不是偏置表"),
        )
    dst = local_tensor(op, dst, (Buffer.L0C,), "dst (CO1)", "结果矩阵（CO1）")
    fm = local_tensor(op, fm, (Buffer.L0A,), "fm (A2)", "左矩阵（A2）")
    filter = local_tensor(op, filter, (Buffer.L0B,), "filter (B2)", "右矩阵（B2）")
    if not m or not n or not k:
        return  # documented: m, n or k 0 and the instruction does not run
    if m == 1:
        fail(
            "mmad: m = 1 switches the Cube to GEMV mode, which reads L0A as ND (1 x k in a row), not ZZ; the "
            "simulator does not model GEMV: compute m = 16 and keep row 0, as CANN's Matmul API does",
            "mmad: m = 1 会让 Cube 进入 GEMV 模式，此时按 ND（1 x k 连续）而不是 ZZ 读取 L0A；模拟器没有模拟 GEMV："
            "请按 m = 16 计算并只取第 0 行，CANN 的矩阵乘高阶 API 就是这样做的",
        )
    if dst.dtype != float32:
        fail("mmad accumulates in fp32: the L0C tensor must be float32", "mmad 以 fp32 累加：L0C 张量必须是 float32")
    if fm.dtype not in (float16, float32) or filter.dtype != fm.dtype:
        fail(
            f"mmad multiplies fp16 (or fp32) operands of one dtype, got {fm.dtype!r} and {filter.dtype!r}",
            f"mmad 要求两个操作数同为 fp16（或 fp32），实际为 {fm.dtype!r} 和 {filter.dtype!r}",
        )
    aligned(op, fm, UNIT, ("fm", "左矩阵"))
    aligned(op, filter, UNIT, ("filter", "右矩阵"))
    aligned(op, dst, L0C_UNIT, ("dst", "结果矩阵"))
    c0_ = layout.c0(fm.dtype.sizeof())
    m1, n1, k1 = layout.count(m, FRACTAL_ROWS), layout.count(n, FRACTAL_ROWS), layout.count(k, c0_)
    room(op, fm, m1 * k1 * UNIT, (f"{m} x {k} operand's fractals", f"{m} x {k} 操作数的分形"))
    room(op, filter, k1 * n1 * UNIT, (f"{k} x {n} operand's fractals", f"{k} x {n} 操作数的分形"))
    room(op, dst, m1 * n1 * L0C_UNIT, (f"{m} x {n} result's fractals", f"{m} x {n} 结果的分形"))
    _expect(ctx, op, fm, ("fm", "左矩阵 A"), m1, k1, Format.ZZ, _HINT_A)
    _expect(ctx, op, filter, ("filter", "右矩阵 B"), k1, n1, Format.ZN, _HINT_B)
    fractal = launch.cube
    fractals = layout.count(m, fractal[0]) * layout.count(n, fractal[1]) * layout.count(k, fractal[2])
    if fm.dtype == float32:
        fractals *= launch.fp32_divisor
    init = bool(params.cmatrix_init_val)
    c_r = rect(dst, dst.offset, 1, m1 * n1 * L0C_UNIT, m1 * n1 * L0C_UNIT)
    srcs = (
        rect(fm, fm.offset, 1, m1 * k1 * UNIT, m1 * k1 * UNIT),
        rect(filter, filter.offset, 1, k1 * n1 * UNIT, k1 * n1 * UNIT),
    )
    if not init:
        srcs = (*srcs, c_r)
    cost = launch.ps(launch.cube_startup + fractals)
    ctx.emit(
        Pipe.M, LOCAL, cost, 0.0, -1, 0, "mmad", Kind.COMPUTE, Instr(op, c_r, srcs, 2 * m * n * k, (m, n, k, init))
    )
    units = dst.offset // L0C_UNIT + np.arange(m1 * n1)
    held = tags_of(ctx, Buffer.L0C)[units]
    source = int(held[0, layout.SRC]) if not init and held[0, layout.SRC] >= 0 else ctx.tags.new_source()
    tags_of(ctx, Buffer.L0C)[units] = layout.grid_tags(source, m1, n1, "NZ")
    if ctx.numerics:
        a = layout.zz_matrix(view(ctx, srcs[0], fm.dtype.np), m1, k1, c0_)
        b = layout.zn_matrix(view(ctx, srcs[1], fm.dtype.np), k1, n1, c0_)
        c = view(ctx, c_r, np.float32)
        acc = np.array(layout.nz_matrix(c, m1 * FRACTAL_ROWS, n1, FRACTAL_ROWS), dtype=np.float32)
        cube.mmad(acc, a[:, :k], b[:k, :], init)
        c[:] = layout.nz_rows(acc, FRACTAL_ROWS).reshape(c.shape)


__all__ = (
    "UNIT_OF",
    "aligned",
    "copy_nd2nz",
    "fractal_units",
    "load_data",
    "local_tensor",
    "mmad",
    "room",
    "tag_nd",
    "tag_plain_write",
    "tags_of",
    "view",
)
