"""The Cube's instructions, with its real data layouts (:mod:`engine.aicore.layout`).

* :func:`copy_nd2nz` — ``DataCopy(l1, gm, Nd2NzParams)``: GM (ND) -> L1 (NZ), on MTE2 (reached through
  :func:`engine.aicore.instructions.data_copy`);
* :func:`load_data` — ``LoadData``: L1 -> L0A / L0B on MTE1, with ``LoadData2DParams`` (whole fractals, one row
  of them per call for NZ -> ZZ, transposed for NZ -> ZN) or ``LoadData3DParamsV2`` (NZ -> ZZ into L0A, NZ ->
  ZN into L0B, a whole operand in one call, as CANN's high-performance matmul samples do on the 910B);
* :func:`mmad` — ``Mmad``: L0C (NZ) = or += L0A (ZZ) @ L0B (ZN), on the Cube;
* :func:`fixpipe` — ``Fixpipe``: L0C (NZ) -> GM as ND (NZ2ND) or -> L1, converting fp32 on the FIX pipe.

Every instruction moves the data as the hardware arranges it, so L1 and L0 really hold fractals, and moves
its *tags* (where each fractal came from) with it; ``mmad`` and ``fixpipe`` read the tags and refuse an
operand in the wrong format with an error naming the expected and the given one (the hardware would
compute garbage instead). Costs: a copy by the bytes it reads from GM, a load by the whole fractals it
moves, ``mmad`` one 16x16x16 fractal product per cycle, ``fixpipe`` by the bytes it writes.
"""

from __future__ import annotations

import numpy as np

from ..trace import Kind
from ..trace.detail import Fixpipe, Instr, Load2D, Load3D, Nd2Nz, Rect
from . import cube, layout
from .cube_params import (
    CO2Layout,
    FixpipeConfig,
    FixpipeParamsV220,
    LoadData2DParams,
    LoadData3DParamsV2,
    MmadParams,
    Nd2NzParams,
    QuantModes,
    check_field,
    check_struct,
    not_modelled,
)
from .layout import DESCRIBED, FRACTAL_ROWS, L0C_UNIT, UNIT, Format
from .operands import check_room, fail, rect, tile_array
from .pipes import Pipe
from .program import GM_READ, GM_WRITE, LOCAL
from .running import current
from .tensor import Buffer, GlobalTensor, LocalTensor, Tile, float16, float32

_UNIT = {Buffer.L1: UNIT, Buffer.L0A: UNIT, Buffer.L0B: UNIT, Buffer.L0C: L0C_UNIT}


# -- shared -----------------------------------------------------------------------------------------------------
def _view(ctx, r: Rect, dtype) -> np.ndarray:
    """A writable ``rows x cols`` view of the bytes of ``r`` (on chip or in GM) as ``dtype``."""
    if r.buf == Buffer.GM.value:
        raise ValueError("GM rectangles are read and written through tiles")
    raw = ctx.buffer_bytes(Buffer(r.buf))[r.start : r.end]
    rows = np.lib.stride_tricks.as_strided(raw, (r.rows, r.row_bytes), (r.stride, 1), writeable=True)
    return rows.view(dtype)


def _tags(ctx, buf: Buffer) -> np.ndarray:
    return ctx.tags.of(buf.value, ctx.capacity(buf), _UNIT[buf])


def _local(op: str, t, buffers: tuple[Buffer, ...], what: str, what_zh: str) -> LocalTensor:
    if not isinstance(t, LocalTensor) or t.buffer not in buffers:
        names = " / ".join(b.name for b in buffers)
        fail(f"{op}: {what} must be an {names} LocalTensor", f"{op}: {what_zh}必须是 {names} 上的 LocalTensor")
    return t


def _aligned(op: str, t: LocalTensor, multiple: int, what: str) -> None:
    if t.offset % multiple:
        fail(
            f"{op}: the {what} address {t.buffer.name} +{t.offset} B is not {multiple}-byte aligned",
            f"{op}: {what}地址 {t.buffer.name} +{t.offset} B 没有按 {multiple} 字节对齐",
        )


def _room(op: str, t: LocalTensor, end: int, what: str) -> None:
    """``t`` must hold ``end`` bytes from its start."""
    if end > t.nbytes:
        fail(
            f"{op}: the {what} needs {end} B from {t.buffer.name} +{t.offset} B, the tensor has {t.nbytes} B",
            f"{op}: {what}需要从 {t.buffer.name} +{t.offset} B 起的 {end} B，而张量只有 {t.nbytes} B",
        )


def _fractal_units(byte_offsets: np.ndarray, unit: int) -> np.ndarray | None:
    """Unit indices of fractals starting at ``byte_offsets``, or None when one is not on a unit boundary."""
    if (byte_offsets % unit).any():
        return None
    return byte_offsets // unit


def _tag_nd(ctx, buf: Buffer, r: Rect) -> None:
    """A plain copy wrote ``r``: every unit it touches holds ND data now."""
    unit = _UNIT.get(buf)
    if unit is None:
        return
    first, last = r.start // unit, (r.end - 1) // unit
    _tags(ctx, buf)[first : last + 1] = (layout.ND, 0, 0, 0)


def tag_plain_write(ctx, dst: LocalTensor, r: Rect) -> None:
    """What a row-major copy into L1 or L0 does to the tags (called by ``data_copy``)."""
    _tag_nd(ctx, dst.buffer, r)


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
        not_modelled(op, s, "nd_num", p.nd_num, "0 and 1")
    n = check_field(op, s, "n_value", p.n_value, 0, 16384)
    d = check_field(op, s, "d_value", p.d_value, 0, 65535)
    check_field(op, s, "src_nd_matrix_stride", p.src_nd_matrix_stride, 0, 65535)
    row = check_field(op, s, "src_d_value", p.src_d_value, 1, 65535)
    stride = check_field(op, s, "dst_nz_c0_stride", p.dst_nz_c0_stride, 1, 16384)
    if check_field(op, s, "dst_nz_n_stride", p.dst_nz_n_stride, 1, 16384) != 1:
        not_modelled(op, s, "dst_nz_n_stride", p.dst_nz_n_stride, "1: the rows of a column of fractals one after another")
    check_field(op, s, "dst_nz_matrix_stride", p.dst_nz_matrix_stride, 0, 16384)
    if not p.nd_num or not n or not d:
        return  # documented: ndNum, nValue or dValue 0 is a NOP
    if isinstance(src, Tile) or not isinstance(src, GlobalTensor):
        fail(
            f"{op} with Nd2NzParams reads a GlobalTensor positioned at the tile's first element "
            f"(gm[row * width + col:]), got {type(src).__name__}",
            f"{op} 使用 Nd2NzParams 时源操作数是定位到分块首元素的 GlobalTensor（gm[row * width + col:]），"
            f"实际为 {type(src).__name__}",
        )
    dst = _local(op, dst, (Buffer.L1,), "with Nd2NzParams the destination (ND -> NZ happens on the way GM -> L1)",
                 "使用 Nd2NzParams 时目的操作数（ND -> NZ 在 GM -> L1 的途中完成）")
    if dst.dtype.sizeof() != src.dtype.sizeof():
        fail(
            f"{op} GM -> L1: element sizes differ ({src.dtype!r} vs {dst.dtype!r})",
            f"{op} GM -> L1: 元素大小不同（{src.dtype!r} 与 {dst.dtype!r}）",
        )
    _aligned(op, dst, 32, "L1 destination")
    if stride < n:
        fail(
            f"{op}: Nd2NzParams.dst_nz_c0_stride = {stride} (rows from one column of fractals to the next) is less "
            f"than n_value = {n}: the columns would overlap",
            f"{op}: Nd2NzParams.dst_nz_c0_stride = {stride}（相邻两列分形之间的行数）小于 n_value = {n}：各列会相互重叠",
        )
    size = dst.dtype.sizeof()
    c0_ = layout.c0(size)
    rows, cols = min(layout.up(n, FRACTAL_ROWS), stride), layout.count(d, c0_)
    _room(op, dst, (cols - 1) * stride * 32 + rows * 32, "NZ tile")
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
    units = _fractal_units(starts.reshape(-1), UNIT) if rows % FRACTAL_ROWS == 0 else None
    if units is None:
        _tag_nd(ctx, Buffer.L1, local)
    else:
        _tags(ctx, Buffer.L1)[units] = layout.nd2nz_tags(ctx.tags.new_source(), rows // FRACTAL_ROWS, cols)
    if ctx.numerics:
        values = tile_array(ctx, Tile(src, 0, n, d, row))
        _view(ctx, local, dst.dtype.np)[:] = layout.nd2nz(values, c0_, rows)


# -- L1 -> L0A / L0B ------------------------------------------------------------------------------------------
def load_data(dst, src, params) -> None:
    """``LoadData(dst, src, params)``: L1 (``src``, A1/B1) -> L0A (A2) or L0B (B2) on MTE1, with
    ``LoadData2DParams`` or ``LoadData3DParamsV2``."""
    ctx = current()
    op = "load_data"
    src = _local(op, src, (Buffer.L1,), "the source (an A1/B1 tensor in L1)", "源操作数（L1 上的 A1/B1 张量）")
    dst = _local(op, dst, (Buffer.L0A, Buffer.L0B), "the destination (A2 or B2)", "目的操作数（A2 或 B2）")
    if src.dtype != dst.dtype:
        fail(
            f"{op}: source and destination dtypes differ ({src.dtype!r} vs {dst.dtype!r})",
            f"{op}: 源与目的数据类型不同（{src.dtype!r} 与 {dst.dtype!r}）",
        )
    _aligned(op, dst, ctx.launch.granularity(dst.buffer), "destination")
    _aligned(op, src, 32, "source")
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
        not_modelled(op, s, "addr_mode", p.addr_mode, "0 (addresses increasing)")
    transpose = bool(p.if_transpose)
    size = src.dtype.sizeof()
    if transpose and size != 2:
        not_modelled(op, s, "if_transpose", True, "transposes of 16-bit fractals")
    first = start * UNIT
    _room(op, src, first + ((repeat - 1) * step + 1) * UNIT, "last source fractal")
    _room(op, dst, ((repeat - 1) * (1 + gap) + 1) * UNIT, "last destination fractal")
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
    src_units = _fractal_units(src.offset + first + i * step * UNIT, UNIT)
    dst_units = dst.offset // UNIT + i * (1 + gap)
    moved = layout.tags(repeat, layout.ND) if src_units is None else _tags(ctx, Buffer.L1)[src_units].copy()
    if transpose:
        moved[moved[:, layout.SRC] >= 0, layout.T] ^= 1
    _tags(ctx, dst.buffer)[dst_units] = moved
    if ctx.numerics:
        c0_ = layout.c0(size)
        values = _view(ctx, src_r, src.dtype.np)
        out = layout.load2d(values, repeat, (FRACTAL_ROWS, c0_), transpose)
        target = _view(ctx, dst_r, dst.dtype.np)
        target[:] = out.reshape(target.shape)


def _load3d(ctx, dst: LocalTensor, src: LocalTensor, p: LoadData3DParamsV2) -> None:
    op, s = "load_data", "LoadData3DParamsV2"
    for field, want in (
        ("l1_h", 1), ("stride_w", 1), ("stride_h", 1), ("filter_w", 1), ("filter_h", 1),
        ("dilation_filter_w", 1), ("dilation_filter_h", 1), ("filter_size_w", False), ("filter_size_h", False),
        ("f_matrix_ctrl", False),
    ):  # fmt: skip
        if getattr(p, field) != want:
            not_modelled(op, s, field, getattr(p, field), f"{want} (the matmul use: a 1 x 1 filter over one row)")
    if tuple(p.pad_list) != (0, 0, 0, 0):
        not_modelled(op, s, "pad_list", p.pad_list, "(0, 0, 0, 0)")
    width = check_field(op, s, "l1_w", p.l1_w, 0, 32767)
    channels = check_field(op, s, "channel_size", p.channel_size, 0, 65535)
    cols = check_field(op, s, "k_extension", p.k_extension, 0, 65535)
    rows = check_field(op, s, "m_extension", p.m_extension, 0, 65535)
    k0 = check_field(op, s, "k_start_pt", p.k_start_pt, 0, 65535)
    m0 = check_field(op, s, "m_start_pt", p.m_start_pt, 0, 32767)
    if not width or not channels or not cols or not rows:
        return  # documented: any of these 0 is a NOP
    if src.dtype.sizeof() != 2:
        not_modelled(op, s, "the dtype", src.dtype.name, "16-bit data (half)")
    for field, value in (("channel_size", channels), ("k_extension", cols), ("m_extension", rows),
                         ("k_start_pt", k0), ("m_start_pt", m0), ("l1_w", width)):  # fmt: skip
        if value % FRACTAL_ROWS:
            not_modelled(op, s, field, value, "multiples of 16: whole fractals")
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
    _room(op, src, first + (k1 - 1) * width * 32 + rows * 32, "window")
    _room(op, dst, r1 * k1 * UNIT, "destination fractals")
    src_r = rect(src, src.offset + first, k1, rows * 32, width * 32)
    dst_r = rect(dst, dst.offset, 1, r1 * k1 * UNIT, r1 * k1 * UNIT)
    nbytes = rows * cols * src.dtype.sizeof()
    _emit_load(ctx, dst, nbytes, Instr(op, dst_r, (src_r,), 0, Load3D(rows, cols, order)))
    starts = src.offset + first + np.arange(k1)[:, None] * width * 32 + np.arange(r1)[None, :] * UNIT
    units = _fractal_units(starts.reshape(-1), UNIT)
    window = layout.tags(r1 * k1, layout.ND) if units is None else _tags(ctx, Buffer.L1)[units]
    moved = layout.load3d_tags(window, r1, k1, order)
    moved[moved[:, layout.SRC] < 0, layout.T] = 0
    _tags(ctx, dst.buffer)[dst.offset // UNIT + np.arange(r1 * k1)] = moved
    if ctx.numerics:
        out = layout.load3d(_view(ctx, src_r, src.dtype.np), rows, cols, FRACTAL_ROWS, order)
        _view(ctx, dst_r, dst.dtype.np)[:] = out


# -- the Cube ---------------------------------------------------------------------------------------------------
def _expect(ctx, op: str, t: LocalTensor, what: str, r1: int, c1: int, want: Format, hint: tuple[str, str]) -> None:
    """The ``r1 x c1`` fractals of ``t`` must be ``want``, or the error naming the expected and given formats."""
    found = layout.classify(_tags(ctx, t.buffer)[t.offset // UNIT + np.arange(r1 * c1)], r1, c1)
    if want in found:
        return
    given = found[0]
    (w_en, w_zh), (g_en, g_zh) = _describe(want), _describe(given)
    fail(
        f"{op}: {what} ({t.buffer.name}) must hold {w_en}; it holds {g_en}. {hint[0]}",
        f"{op}: {what}（{t.buffer.name}）必须是 {w_zh}；实际是 {g_zh}。{hint[1]}",
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


def mmad(dst, fm, filter, params: MmadParams) -> None:  # noqa: A002 (pyasc's name)
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
        not_modelled(op, s, "unit_flag", params.unit_flag, "0")
    if params.cmatrix_source:
        not_modelled(op, s, "cmatrix_source", True, "False: C starts from L0C, not the bias table")
    dst = _local(op, dst, (Buffer.L0C,), "dst (CO1)", "dst（CO1）")
    fm = _local(op, fm, (Buffer.L0A,), "fm (A2)", "fm（A2）")
    filter = _local(op, filter, (Buffer.L0B,), "filter (B2)", "filter（B2）")  # noqa: A001
    if not m or not n or not k:
        return  # documented: m, n or k 0 and the instruction does not run
    if m == 1:
        fail(
            "mmad: m = 1 switches the Cube to GEMV mode, which reads L0A as ND (1 x k in a row), not ZZ; the "
            "simulator does not model GEMV: compute m = 16 and keep row 0, as CANN's Matmul API does",
            "mmad: m = 1 会让 Cube 进入 GEMV 模式，此时按 ND（1 x k 连续）而不是 ZZ 读取 L0A；模拟器没有模拟 GEMV："
            "请按 m = 16 计算并只取第 0 行，CANN 的 Matmul 高阶 API 就是这样做的",
        )
    if dst.dtype != float32:
        fail("mmad accumulates in fp32: the L0C tensor must be float32", "mmad 以 fp32 累加：L0C 张量必须是 float32")
    if fm.dtype not in (float16, float32) or filter.dtype != fm.dtype:
        fail(
            f"mmad multiplies fp16 (or fp32) operands of one dtype, got {fm.dtype!r} and {filter.dtype!r}",
            f"mmad 要求两个操作数同为 fp16（或 fp32），实际为 {fm.dtype!r} 和 {filter.dtype!r}",
        )
    _aligned(op, fm, UNIT, "fm")
    _aligned(op, filter, UNIT, "filter")
    _aligned(op, dst, L0C_UNIT, "dst")
    c0_ = layout.c0(fm.dtype.sizeof())
    m1, n1, k1 = layout.count(m, FRACTAL_ROWS), layout.count(n, FRACTAL_ROWS), layout.count(k, c0_)
    _room(op, fm, m1 * k1 * UNIT, f"{m} x {k} operand's fractals")
    _room(op, filter, k1 * n1 * UNIT, f"{k} x {n} operand's fractals")
    _room(op, dst, m1 * n1 * L0C_UNIT, f"{m} x {n} result's fractals")
    _expect(ctx, op, fm, "fm", m1, k1, Format.ZZ, _HINT_A)
    _expect(ctx, op, filter, "filter", k1, n1, Format.ZN, _HINT_B)
    fractal = launch.cube
    fractals = layout.count(m, fractal[0]) * layout.count(n, fractal[1]) * layout.count(k, fractal[2])
    if fm.dtype == float32:
        fractals *= launch.fp32_divisor
    init = bool(params.cmatrix_init_val)
    c_r = rect(dst, dst.offset, 1, m1 * n1 * L0C_UNIT, m1 * n1 * L0C_UNIT)
    srcs = (rect(fm, fm.offset, 1, m1 * k1 * UNIT, m1 * k1 * UNIT), rect(filter, filter.offset, 1, k1 * n1 * UNIT, k1 * n1 * UNIT))
    if not init:
        srcs = (*srcs, c_r)
    cost = launch.ps(launch.cube_startup + fractals)
    ctx.emit(Pipe.M, LOCAL, cost, 0.0, -1, 0, "mmad", Kind.COMPUTE, Instr(op, c_r, srcs, 2 * m * n * k, (m, n, k, init)))
    units = dst.offset // L0C_UNIT + np.arange(m1 * n1)
    held = _tags(ctx, Buffer.L0C)[units]
    source = int(held[0, layout.SRC]) if not init and held[0, layout.SRC] >= 0 else ctx.tags.new_source()
    _tags(ctx, Buffer.L0C)[units] = layout.grid_tags(source, m1, n1, "NZ")
    if ctx.numerics:
        a = layout.zz_matrix(_view(ctx, srcs[0], fm.dtype.np), m1, k1, c0_)
        b = layout.zn_matrix(_view(ctx, srcs[1], fm.dtype.np), k1, n1, c0_)
        c = _view(ctx, c_r, np.float32)
        acc = np.array(layout.nz_matrix(c, m1 * FRACTAL_ROWS, n1, FRACTAL_ROWS), dtype=np.float32)
        cube.mmad(acc, a[:, :k], b[:k, :], init)
        c[:] = layout.nz_rows(acc, FRACTAL_ROWS).reshape(c.shape)


# -- L0C -> GM / L1 ---------------------------------------------------------------------------------------------
_QUANT = {QuantModes.NoQuant: float32, QuantModes.F322F16: float16}


def fixpipe(dst, src, params: FixpipeParamsV220, config: FixpipeConfig | None = None) -> None:
    """``Fixpipe(dst, src, params, config)``: ``params.m_size x params.n_size`` of the NZ result in L0C to GM
    (``dst`` a GlobalTensor at C's first element of the block) or L1, as ND (``CFG_ROW_MAJOR``, the default)
    or NZ (``CFG_NZ``, L1 only here), converting fp32 as ``quant_pre`` says (FIX pipe)."""
    ctx = current()
    launch = ctx.launch
    op, s = "fixpipe", "FixpipeParamsV220"
    check_struct(op, params, FixpipeParamsV220)
    config = FixpipeConfig() if config is None else config
    check_struct(op, config, FixpipeConfig)
    nz2nd = config.layout == CO2Layout.ROW_MAJOR
    if config.layout not in (CO2Layout.ROW_MAJOR, CO2Layout.NZ):
        not_modelled(op, "FixpipeConfig", "layout", config.layout.name, "ROW_MAJOR and NZ (the 910B's two)")
    n = check_field(op, s, "n_size", params.n_size, 1, 4095)
    m = check_field(op, s, "m_size", params.m_size, 1, 8192 if nz2nd else 65535)
    src_stride = check_field(op, s, "src_stride", params.src_stride, 0, 65535)
    dst_stride = check_field(op, s, "dst_stride", params.dst_stride, 1, 2**31 - 1)
    for field, want in (("nd_num", 1), ("unit_flag", 0), ("is_channel_split", False)):
        if getattr(params, field) != want:
            not_modelled(op, s, field, getattr(params, field), repr(want))
    out = _QUANT.get(params.quant_pre)
    if out is None:
        not_modelled(op, s, "quant_pre", params.quant_pre, "NoQuant (fp32) and F322F16 (fp32 -> fp16)")
    src = _local(op, src, (Buffer.L0C,), "src (the CO1 result of mmad)", "src（mmad 在 CO1 中的结果）")
    if src.dtype != float32:
        fail("fixpipe reads fp32 from L0C: src must be float32", "fixpipe 从 L0C 读取 fp32：src 必须是 float32")
    target = dst.tensor if isinstance(dst, Tile) else dst
    if isinstance(dst, Tile) or not isinstance(target, GlobalTensor | LocalTensor):
        fail(
            "fixpipe writes a GlobalTensor positioned at the block's first element of C (c_gm[row * n + col:]) "
            "or an L1 tensor",
            "fixpipe 的目的操作数是定位到 C 中该块首元素的 GlobalTensor（c_gm[row * n + col:]）或 L1 张量",
        )
    if target.dtype != out:
        fail(
            f"fixpipe: quant_pre = {QuantModes(params.quant_pre).name} gives {out!r}, the destination is "
            f"{target.dtype!r}: use QuantModes.{'F322F16' if target.dtype == float16 else 'NoQuant'}",
            f"fixpipe: quant_pre = {QuantModes(params.quant_pre).name} 输出 {out!r}，而目的操作数是 {target.dtype!r}："
            f"请用 QuantModes.{'F322F16' if target.dtype == float16 else 'NoQuant'}",
        )
    if isinstance(target, GlobalTensor) and not nz2nd:
        fail(
            "fixpipe: the destination in GM holds ND, but FixpipeConfig.cfg_nz() leaves the result NZ (the NZ -> ND "
            "conversion is missing): keep the default FixpipeConfig.cfg_row_major() (NZ2ND)",
            "fixpipe: GM 中的目的操作数是 ND，而 FixpipeConfig.cfg_nz() 会让结果保持 NZ（缺少 NZ -> ND 转换）："
            "请保留默认的 FixpipeConfig.cfg_row_major()（NZ2ND）",
        )
    if nz2nd and dst_stride < n:
        fail(
            f"fixpipe: FixpipeParamsV220.dst_stride = {dst_stride} (elements from one row of the destination to the "
            f"next) is less than n_size = {n}: the rows would overlap",
            f"fixpipe: FixpipeParamsV220.dst_stride = {dst_stride}（目的矩阵相邻两行之间的元素数）小于 n_size = {n}：各行会重叠",
        )
    _aligned(op, src, launch.granularity(Buffer.L0C), "src")
    m1, n1 = layout.count(m, FRACTAL_ROWS), layout.count(n, FRACTAL_ROWS)
    _check_result(ctx, op, src, m1, n1, src_stride)
    src_r = rect(src, src.offset, n1, m1 * FRACTAL_ROWS * 64, src_stride * 64)
    size = out.sizeof()
    nbytes = m * n * size
    pipe = Pipe.FIX if launch.has_fix else Pipe.V
    detail_params = Fixpipe(m, n, src_stride, dst_stride, nz2nd, bool(params.relu_en))
    if isinstance(target, GlobalTensor):
        lo, _ = ctx.gm_check(target, 0, (m - 1) * dst_stride + n, True)
        dst_r = rect(target, lo, m, n * size, dst_stride * size)
        detail = Instr(op, dst_r, (src_r,), 0, detail_params)
        ctx.emit(pipe, GM_WRITE, launch.mte_startup_ps, launch.rate["l0c_to_gm"], -1, nbytes, "fixpipe L0C->GM", Kind.MOVE, detail)
    else:
        _local(op, target, (Buffer.L1,), "the on-chip destination", "片上目的操作数")
        dst_r = _l1_target(ctx, op, target, m, n, dst_stride, nz2nd)
        cost = launch.mte_startup_ps + round(nbytes / launch.rate["l0c_to_l1"])
        ctx.emit(pipe, LOCAL, cost, 0.0, -1, nbytes, "fixpipe L0C->L1", Kind.MOVE, Instr(op, dst_r, (src_r,), 0, detail_params))
    if ctx.numerics:
        c = layout.nz_matrix(_view(ctx, src_r, np.float32), m1 * FRACTAL_ROWS, n1, FRACTAL_ROWS)[:m, :n]
        if params.relu_en:
            c = np.maximum(c, np.float32(0))
        values = cube.fixpipe(c, out.np)
        if isinstance(target, GlobalTensor):
            tile_array(ctx, Tile(target, 0, m, n, dst_stride))[:] = values
        elif nz2nd:
            _view(ctx, dst_r, out.np)[:] = values
        else:
            padded = np.zeros((m1 * FRACTAL_ROWS, n1 * FRACTAL_ROWS), dtype=out.np)
            padded[:m, :n] = values
            _view(ctx, dst_r, out.np)[:] = layout.nz_rows(padded, FRACTAL_ROWS)


def _check_result(ctx, op: str, src: LocalTensor, m1: int, n1: int, src_stride: int) -> None:
    """The fractals fixpipe reads must be one mmad result's NZ grid, walked with the stride it was written with."""
    held = _tags(ctx, Buffer.L0C)
    if src_stride % FRACTAL_ROWS or src.offset % L0C_UNIT:
        fail(
            f"fixpipe: FixpipeParamsV220.src_stride = {src_stride} (rows from one column of fractals to the next, "
            f"in 16-element rows) must be a multiple of 16, from an L0C address on a fractal (+{src.offset} B)",
            f"fixpipe: FixpipeParamsV220.src_stride = {src_stride}（相邻两列分形之间的行数，以 16 个元素的行为单位）"
            f"必须是 16 的倍数，且起始地址在分形边界上（+{src.offset} B）",
        )
    i, j = np.divmod(np.arange(m1 * n1), n1)
    units = src.offset // L0C_UNIT + j * (src_stride // FRACTAL_ROWS) + i
    if units.max() >= len(held) or (held[units, layout.SRC] < 0).any():
        fail(
            "fixpipe: L0C holds no mmad result there: fixpipe reads the NZ fractals an mmad wrote",
            "fixpipe: L0C 的这一位置没有 mmad 的结果：fixpipe 读取的是 mmad 写出的 NZ 分形",
        )
    got = held[units]
    first = got[0]
    ok = (got[:, layout.SRC] == first[layout.SRC]).all()
    ok = ok and (got[:, layout.R1] - first[layout.R1] == i).all() and (got[:, layout.C1] - first[layout.C1] == j).all()
    if not ok:
        rows = int(held[held[:, layout.SRC] == first[layout.SRC], layout.R1].max() + 1) * FRACTAL_ROWS
        fail(
            f"fixpipe: FixpipeParamsV220.src_stride = {src_stride} does not walk the NZ result in L0C: the mmad wrote "
            f"its columns of fractals {rows} rows apart (m rounded up to 16)",
            f"fixpipe: FixpipeParamsV220.src_stride = {src_stride} 与 L0C 中的 NZ 结果不符：mmad 写出的相邻两列分形相隔 "
            f"{rows} 行（m 向上取整到 16）",
        )


def _l1_target(ctx, op: str, t: LocalTensor, m: int, n: int, dst_stride: int, nz2nd: bool) -> Rect:
    size = t.dtype.sizeof()
    if nz2nd:
        _room(op, t, ((m - 1) * dst_stride + n) * size, "ND result")
        r = rect(t, t.offset, m, n * size, dst_stride * size)
        _tag_nd(ctx, Buffer.L1, r)
        return r
    if size != 2 or n % FRACTAL_ROWS:
        not_modelled(op, "FixpipeConfig", "layout", "NZ", "NZ into L1 for fp16 results whose n_size is a multiple of 16")
    m1, n1 = layout.count(m, FRACTAL_ROWS), n // FRACTAL_ROWS
    if dst_stride < m1 * FRACTAL_ROWS:
        fail(
            f"fixpipe: FixpipeParamsV220.dst_stride = {dst_stride} (rows from one column of fractals to the next) is "
            f"less than m_size rounded up to 16 = {m1 * FRACTAL_ROWS}: the columns would overlap",
            f"fixpipe: FixpipeParamsV220.dst_stride = {dst_stride}（相邻两列分形之间的行数）小于 m_size 向上取整到 16 的 "
            f"{m1 * FRACTAL_ROWS}：各列会重叠",
        )
    _room(op, t, ((n1 - 1) * dst_stride + m1 * FRACTAL_ROWS) * 32, "NZ result")
    r = rect(t, t.offset, n1, m1 * FRACTAL_ROWS * 32, dst_stride * 32)
    starts = t.offset + np.arange(n1)[:, None] * dst_stride * 32 + np.arange(m1)[None, :] * UNIT
    units = _fractal_units(starts.reshape(-1), UNIT)
    if units is None:
        _tag_nd(ctx, Buffer.L1, r)
    else:
        _tags(ctx, Buffer.L1)[units] = layout.nd2nz_tags(ctx.tags.new_source(), m1, n1)
    return r


__all__ = ("copy_nd2nz", "fixpipe", "load_data", "mmad", "tag_plain_write")
