"""``Fixpipe``: the Cube's result leaves L0C (NZ, fp32) for GM as ND (NZ2ND, ``CFG_ROW_MAJOR``) or for L1,
converting it on the way (``quant_pre``), on the FIX pipe (the vector unit's on chips without one).

The fractals it reads must be an ``mmad`` result walked with the stride it was written with, and GM is ND
in this simulator, so leaving the result NZ in GM (``CFG_NZ``) is the missing NZ -> ND conversion: both
are AI-core errors naming what was expected and what was given (:mod:`engine.aicore.cube_ops`).
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np

from ..trace import Kind
from ..trace.detail import Fixpipe, Instr, Rect
from . import cube, layout
from .cube_ops import aligned, fractal_units, local_tensor, room, tag_nd, tags_of, view
from .cube_params import (
    CO2Layout,
    FixpipeConfig,
    FixpipeParamsV220,
    QuantModes,
    check_field,
    check_struct,
    not_modelled,
)
from .layout import FRACTAL_ROWS, L0C_UNIT, UNIT
from .operands import fail, rect, tile_array
from .pipes import Pipe
from .program import GM_WRITE, LOCAL
from .running import current
from .tensor import Buffer, GlobalTensor, LocalTensor, Tile, float16, float32

# -- L0C -> GM / L1 ---------------------------------------------------------------------------------------------
_QUANT = MappingProxyType({QuantModes.NoQuant: float32, QuantModes.F322F16: float16})


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
        not_modelled(
            op,
            "FixpipeConfig",
            "layout",
            config.layout.name,
            ("ROW_MAJOR and NZ (the 910B's two)", " ROW_MAJOR 和 NZ（910B 上的两种）"),
        )
    n = check_field(op, s, "n_size", params.n_size, 1, 4095)
    m = check_field(op, s, "m_size", params.m_size, 1, 8192 if nz2nd else 65535)
    src_stride = check_field(op, s, "src_stride", params.src_stride, 0, 65535)
    dst_stride = check_field(op, s, "dst_stride", params.dst_stride, 1, 2**31 - 1)
    for field, want in (("nd_num", 1), ("unit_flag", 0), ("is_channel_split", False)):
        if getattr(params, field) != want:
            not_modelled(op, s, field, getattr(params, field), (repr(want), " " + repr(want)))
    out = _QUANT.get(params.quant_pre)
    if out is None:
        not_modelled(
            op,
            s,
            "quant_pre",
            params.quant_pre,
            ("NoQuant (fp32) and F322F16 (fp32 -> fp16)", " NoQuant（fp32）和 F322F16（fp32 -> fp16）"),
        )
    src = local_tensor(op, src, (Buffer.L0C,), "src (the CO1 result of mmad)", "src（mmad 在 CO1 中的结果）")
    if src.dtype != float32:
        fail("fixpipe reads fp32 from L0C: src must be float32", "fixpipe 从 L0C 读取 fp32：src 必须是 float32")
    target = dst.tensor if isinstance(dst, Tile) else dst
    if isinstance(dst, Tile) or not isinstance(target, GlobalTensor | LocalTensor):
        fail(
            "fixpipe writes a GlobalTensor positioned at the block's first element of C (c_gm[m0 * n + n0:]) "
            "or an L1 tensor",
            "fixpipe 的目的操作数是定位到 C 中该块首元素的 GlobalTensor（c_gm[m0 * n + n0:]）或 L1 张量",
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
            f"fixpipe: FixpipeParamsV220.dst_stride = {dst_stride}（目的矩阵相邻两行之间的元素数）小于 n_size = {n}："
            "各行会重叠",
        )
    aligned(op, src, launch.granularity(Buffer.L0C), ("src", "源操作数"))
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
        ctx.emit(
            pipe,
            GM_WRITE,
            launch.mte_startup_ps,
            launch.rate["l0c_to_gm"],
            -1,
            nbytes,
            "fixpipe L0C->GM",
            Kind.MOVE,
            detail,
        )
    else:
        local_tensor(op, target, (Buffer.L1,), "the on-chip destination", "片上目的操作数")
        dst_r = _l1_target(ctx, op, target, m, n, dst_stride, nz2nd)
        cost = launch.mte_startup_ps + round(nbytes / launch.rate["l0c_to_l1"])
        ctx.emit(
            pipe,
            LOCAL,
            cost,
            0.0,
            -1,
            nbytes,
            "fixpipe L0C->L1",
            Kind.MOVE,
            Instr(op, dst_r, (src_r,), 0, detail_params),
        )
    if ctx.numerics:
        c = layout.nz_matrix(view(ctx, src_r, np.float32), m1 * FRACTAL_ROWS, n1, FRACTAL_ROWS)[:m, :n]
        if params.relu_en:
            c = np.maximum(c, np.float32(0))
        values = cube.fixpipe(c, out.np)
        if isinstance(target, GlobalTensor):
            tile_array(ctx, Tile(target, 0, m, n, dst_stride))[:] = values
        elif nz2nd:
            view(ctx, dst_r, out.np)[:] = values
        else:
            padded = np.zeros((m1 * FRACTAL_ROWS, n1 * FRACTAL_ROWS), dtype=out.np)
            padded[:m, :n] = values
            view(ctx, dst_r, out.np)[:] = layout.nz_rows(padded, FRACTAL_ROWS)


def _check_result(ctx, op: str, src: LocalTensor, m1: int, n1: int, src_stride: int) -> None:
    """The fractals fixpipe reads must be one mmad result's NZ grid, walked with the stride it was written with."""
    held = tags_of(ctx, Buffer.L0C)
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
            f"fixpipe: FixpipeParamsV220.src_stride = {src_stride} 与 L0C 中的 NZ 结果不符："
            f"mmad 写出的相邻两列分形相隔 {rows} 行（m 向上取整到 16）",
        )


def _l1_target(ctx, op: str, t: LocalTensor, m: int, n: int, dst_stride: int, nz2nd: bool) -> Rect:
    size = t.dtype.sizeof()
    if nz2nd:
        room(op, t, ((m - 1) * dst_stride + n) * size, ("ND result", "ND 结果"))
        r = rect(t, t.offset, m, n * size, dst_stride * size)
        tag_nd(ctx, Buffer.L1, r)
        return r
    if size != 2 or n % FRACTAL_ROWS:
        not_modelled(
            op,
            "FixpipeConfig",
            "layout",
            "NZ",
            (
                "NZ into L1 for fp16 results whose n_size is a multiple of 16",
                " n_size 为 16 的倍数的 fp16 结果以 NZ 写入 L1",
            ),
        )
    m1, n1 = layout.count(m, FRACTAL_ROWS), n // FRACTAL_ROWS
    if dst_stride < m1 * FRACTAL_ROWS:
        fail(
            f"fixpipe: FixpipeParamsV220.dst_stride = {dst_stride} (rows from one column of fractals to the next) is "
            f"less than m_size rounded up to 16 = {m1 * FRACTAL_ROWS}: the columns would overlap",
            f"fixpipe: FixpipeParamsV220.dst_stride = {dst_stride}（相邻两列分形之间的行数）"
            f"小于 m_size 向上取整到 16 的 {m1 * FRACTAL_ROWS}：各列会重叠",
        )
    room(op, t, ((n1 - 1) * dst_stride + m1 * FRACTAL_ROWS) * 32, ("NZ result", "NZ 结果"))
    r = rect(t, t.offset, n1, m1 * FRACTAL_ROWS * 32, dst_stride * 32)
    starts = t.offset + np.arange(n1)[:, None] * dst_stride * 32 + np.arange(m1)[None, :] * UNIT
    units = fractal_units(starts.reshape(-1), UNIT)
    if units is None:
        tag_nd(ctx, Buffer.L1, r)
    else:
        tags_of(ctx, Buffer.L1)[units] = layout.nd2nz_tags(ctx.tags.new_source(), m1, n1)
    return r


__all__ = ("fixpipe",)
