"""Kernel instructions, pyasc-shaped: data movement (the Cube's own instructions, ``load_data``, ``mmad`` and
``fixpipe``, and the ND -> NZ copy are in :mod:`.cube_ops`; vector instructions in :mod:`.vector_ops`; flags,
barriers and block identity in :mod:`.sync_ops`).

Each function records one instruction on the running block's program (pipe, cost, flags, the
memory it reads and writes) and, with numerics on, does the work on numpy data at once, in
program order. Costs come from the profile:

* transfers: fixed MTE set-up + bytes at the path's per-core rate (GM transfers also share L2/HBM).

The 32-byte rules of ``DataCopy`` are enforced: a UB address or length that is not a multiple of
32 bytes is an error (the hardware would silently round the length down); ``data_copy_pad``
handles any length.
"""

from __future__ import annotations

import math
from types import MappingProxyType

import numpy as np

from ..trace import Kind
from ..trace.detail import Instr, Rect
from . import cube_ops
from .context import BlockContext
from .cube_params import Nd2NzParams
from .operands import as_tile, byte_range, check_room, check_ub, fail, tile_array, tile_rect
from .pipes import Pipe
from .program import GM_READ, GM_WRITE, LOCAL
from .running import current
from .tensor import Buffer, GlobalTensor, LocalTensor, Tile


# -- data movement ------------------------------------------------------------------------------
def data_copy(dst, src, count: int | Nd2NzParams | None = None) -> None:
    """``DataCopy``: GM <-> UB/L1/L0, UB -> UB, 1-D by element count or 2-D between tiles (row-major, ND);
    with ``Nd2NzParams`` GM -> L1 converting ND to NZ (:func:`.cube_ops.copy_nd2nz`)."""
    if isinstance(count, Nd2NzParams):
        cube_ops.copy_nd2nz(dst, src, count)
        return
    ctx = current()
    launch = ctx.launch
    src_tile, dst_tile = as_tile(src), as_tile(dst)
    if isinstance(src, GlobalTensor | Tile) and isinstance(_base(src), GlobalTensor):
        _copy_in(ctx, launch, dst, src, count)
    elif isinstance(_base(dst), GlobalTensor):
        _copy_out(ctx, launch, dst, src, count)
    elif isinstance(src, LocalTensor) and isinstance(dst, LocalTensor) and src_tile is None and dst_tile is None:
        n = min(src.count, dst.count) if count is None else count
        check_room(src, n, "data_copy")
        check_room(dst, n, "data_copy")
        if src.buffer != Buffer.UB or dst.buffer != Buffer.UB:
            fail(
                f"data_copy {src.buffer.name} -> {dst.buffer.name} is not a supported path "
                "(use load_data for L1 -> L0)",
                f"data_copy 不支持 {src.buffer.name} -> {dst.buffer.name} 这条通路（L1 -> L0 请用 load_data）",
            )
        nbytes = n * src.dtype.sizeof()
        cycles = launch.vec_startup + math.ceil(nbytes / launch.repeat_bytes)
        ctx.emit(
            Pipe.V,
            LOCAL,
            launch.ps(cycles),
            0.0,
            -1,
            nbytes,
            "data_copy UB->UB",
            Kind.MOVE,
            Instr("data_copy", byte_range(dst, dst.offset, nbytes), (byte_range(src, src.offset, nbytes),)),
        )
        if ctx.numerics:
            ctx.local_array(dst, n)[:] = ctx.local_array(src, n)
    else:
        fail(
            f"data_copy from {type(src).__name__} to {type(dst).__name__} is not supported",
            f"data_copy 不支持从 {type(src).__name__} 拷贝到 {type(dst).__name__}",
        )


def _base(x):
    return x.tensor if isinstance(x, Tile) else x


def _copy_in(ctx: BlockContext, launch, dst, src, count) -> None:
    g = _base(src)
    dst_base = _base(dst)
    if not isinstance(dst_base, LocalTensor):
        fail("data_copy from GM needs a LocalTensor destination", "从 GM 执行 data_copy 时目的操作数必须是 LocalTensor")
    size = g.dtype.sizeof()
    if dst_base.dtype.sizeof() != size:
        fail(
            f"data_copy GM -> {dst_base.buffer.name}: element sizes differ ({g.dtype!r} vs {dst_base.dtype!r})",
            f"data_copy GM -> {dst_base.buffer.name}: 元素大小不同（{g.dtype!r} 与 {dst_base.dtype!r}）",
        )
    if isinstance(src, Tile):
        st = src
        dt = as_tile(dst)
        if dt is None:
            dt = Tile(dst_base, 0, st.rows, st.cols, st.cols)
        if (dt.rows, dt.cols) != (st.rows, st.cols) and not (dt.rows >= st.rows and dt.cols >= st.cols):
            fail(
                f"data_copy: a {st.rows}x{st.cols} tile does not fit a {dt.rows}x{dt.cols} destination",
                f"data_copy: {st.rows}x{st.cols} 的分块放不进 {dt.rows}x{dt.cols} 的目的操作数",
            )
        rows, cols = st.rows, st.cols
        lo, _ = ctx.gm_check(g, st.start, 0, False)
        last = st.start + (rows - 1) * st.stride + cols
        ctx.gm_check(g, st.start, last - st.start, False)
        nbytes = rows * cols * size
        key = launch.tile_key(g.alloc, lo, rows, cols * size, st.stride * size)
        if dst_base.buffer == Buffer.UB:
            check_ub(ctx, dst_base, cols * size, "data_copy GM->UB (tile row)")
        _emit_read(ctx, launch, "data_copy", dst_base, nbytes, key, tile_rect(dt, rows, cols), tile_rect(st))
        if ctx.numerics:
            tile_array(ctx, Tile(dt.tensor, dt.start, rows, cols, dt.stride))[:] = tile_array(ctx, st)
        return
    n = min(dst_base.count, g.size) if count is None else count
    check_room(dst_base, n, "data_copy")
    nbytes = n * size
    if dst_base.buffer == Buffer.UB:
        check_ub(ctx, dst_base, nbytes, "data_copy GM->UB")
    lo, hi = ctx.gm_check(g, 0, n, False)
    key = launch.tile_key(g.alloc, lo, 1, nbytes, nbytes)
    _emit_read(
        ctx,
        launch,
        "data_copy",
        dst_base,
        nbytes,
        key,
        byte_range(dst_base, dst_base.offset, nbytes),
        byte_range(g, lo, nbytes),
    )
    if ctx.numerics:
        ctx.local_array(dst_base, n)[:] = ctx.gm_bytes(g)[lo:hi].view(g.dtype.np)


_READ_PATHS = MappingProxyType(
    {Buffer.UB: "gm_to_ub", Buffer.L1: "gm_to_l1", Buffer.L0A: "gm_to_l1", Buffer.L0B: "gm_to_l1"}
)


def _emit_read(ctx, launch, op: str, dst: LocalTensor, nbytes: int, key: int, local: Rect, gm: Rect) -> None:
    path = _READ_PATHS.get(dst.buffer)
    if path is None:
        fail(f"{op} GM -> {dst.buffer.name} is not a hardware path", f"{op} GM -> {dst.buffer.name} 不是硬件支持的通路")
    ctx.emit(
        Pipe.MTE2,
        GM_READ,
        launch.mte_startup_ps,
        launch.rate[path],
        key,
        nbytes,
        f"{op} GM->{dst.buffer.name}",
        Kind.MOVE,
        Instr(op, local, (gm,)),
    )
    if dst.buffer != Buffer.UB:  # row-major data in L1 / L0: what mmad calls ND
        cube_ops.tag_plain_write(ctx, dst, local)


def _copy_out(ctx: BlockContext, launch, dst, src, count) -> None:
    g = _base(dst)
    src_base = _base(src)
    if not isinstance(src_base, LocalTensor):
        fail("data_copy to GM needs a LocalTensor source", "向 GM 执行 data_copy 时源操作数必须是 LocalTensor")
    size = g.dtype.sizeof()
    if src_base.buffer == Buffer.UB:
        path, pipe = "ub_to_gm", Pipe.MTE3
    elif src_base.buffer == Buffer.L1:
        path, pipe = "l1_to_gm", Pipe.MTE3
    else:
        fail(
            f"data_copy {src_base.buffer.name} -> GM is not a hardware path (L0C leaves through fixpipe)",
            f"data_copy {src_base.buffer.name} -> GM 不是硬件支持的通路（L0C 的数据经 fixpipe 搬出）",
        )
    if isinstance(dst, Tile):
        st = as_tile(src) or Tile(src_base, 0, dst.rows, dst.cols, dst.cols)
        rows, cols = dst.rows, dst.cols
        last = dst.start + (rows - 1) * dst.stride + cols
        lo, _ = ctx.gm_check(g, dst.start, last - dst.start, True)
        nbytes = rows * cols * size
        if src_base.buffer == Buffer.UB:
            check_ub(ctx, src_base, cols * size, "data_copy UB->GM (tile row)")
        _emit_write(ctx, launch, pipe, path, "data_copy", src_base, nbytes, tile_rect(dst), tile_rect(st, rows, cols))
        if ctx.numerics:
            tile_array(ctx, dst)[:] = tile_array(ctx, Tile(st.tensor, st.start, rows, cols, st.stride))
        return
    n = min(src_base.count, g.size) if count is None else count
    check_room(src_base, n, "data_copy")
    nbytes = n * size
    if src_base.buffer == Buffer.UB:
        check_ub(ctx, src_base, nbytes, "data_copy UB->GM")
    lo, hi = ctx.gm_check(g, 0, n, True)
    _emit_write(
        ctx,
        launch,
        pipe,
        path,
        "data_copy",
        src_base,
        nbytes,
        byte_range(g, lo, nbytes),
        byte_range(src_base, src_base.offset, nbytes),
    )
    if ctx.numerics:
        ctx.gm_bytes(g)[lo:hi] = ctx.local_array(src_base, n).view(np.uint8)


def _emit_write(ctx, launch, pipe, path: str, op: str, src: LocalTensor, nbytes: int, gm: Rect, local: Rect) -> None:
    ctx.emit(
        pipe,
        GM_WRITE,
        launch.mte_startup_ps,
        launch.rate[path],
        -1,
        nbytes,
        f"{op} {src.buffer.name}->GM",
        Kind.MOVE,
        Instr(op, gm, (local,)),
    )


def data_copy_pad(dst, src, count: int) -> None:
    """``DataCopyPad``: GM <-> UB for any element count (UB side padded to 32 B with zeros)."""
    ctx = current()
    launch = ctx.launch
    if isinstance(src, GlobalTensor) and isinstance(dst, LocalTensor) and dst.buffer == Buffer.UB:
        size = src.dtype.sizeof()
        padded = math.ceil(count * size / 32) * 32
        check_room(dst, padded // size, "data_copy_pad")
        if dst.offset % 32:
            fail(
                f"data_copy_pad: UB address +{dst.offset} B is not 32-byte aligned ({ctx.src()[1]})",
                f"data_copy_pad: UB 地址 +{dst.offset} B 没有按 32 字节对齐（{ctx.src()[1]}）",
            )
        lo, hi = ctx.gm_check(src, 0, count, False)
        key = launch.tile_key(src.alloc, lo, 1, count * size, count * size)
        local = byte_range(dst, dst.offset, padded)
        _emit_read(ctx, launch, "data_copy_pad", dst, padded, key, local, byte_range(src, lo, count * size))
        if ctx.numerics:
            out = ctx.local_array(dst, padded // size)
            out[:count] = ctx.gm_bytes(src)[lo:hi].view(src.dtype.np)
            out[count:] = 0
    elif isinstance(dst, GlobalTensor) and isinstance(src, LocalTensor) and src.buffer == Buffer.UB:
        size = dst.dtype.sizeof()
        check_room(src, count, "data_copy_pad")
        if src.offset % 32:
            fail(
                f"data_copy_pad: UB address +{src.offset} B is not 32-byte aligned ({ctx.src()[1]})",
                f"data_copy_pad: UB 地址 +{src.offset} B 没有按 32 字节对齐（{ctx.src()[1]}）",
            )
        lo, hi = ctx.gm_check(dst, 0, count, True)
        nbytes = count * size
        _emit_write(
            ctx,
            launch,
            Pipe.MTE3,
            "ub_to_gm",
            "data_copy_pad",
            src,
            nbytes,
            byte_range(dst, lo, nbytes),
            byte_range(src, src.offset, nbytes),
        )
        if ctx.numerics:
            ctx.gm_bytes(dst)[lo:hi] = ctx.local_array(src, count).view(np.uint8)
    else:
        fail("data_copy_pad copies GM -> UB or UB -> GM", "data_copy_pad 只能拷贝 GM -> UB 或 UB -> GM")
