"""Kernel instructions, pyasc-shaped: data movement and the Cube (vector instructions are in
:mod:`.vector_ops`; flags, barriers and block identity in :mod:`.sync_ops`).

Each function records one instruction on the running block's program (pipe, cost, flags, the
memory it reads and writes) and, with numerics on, does the work on numpy data at once, in
program order. Costs come from the profile:

* transfers: fixed MTE set-up + bytes at the path's per-core rate (GM transfers also share L2/HBM);
* ``mmad``: one 16x16x16 fractal per cycle (fp32 inputs: a quarter of that) + set-up.

The 32-byte rules of ``DataCopy`` are enforced: a UB address or length that is not a multiple of
32 bytes is an error (the hardware would silently round the length down); ``data_copy_pad``
handles any length.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from ..trace import Kind
from ..trace.detail import Instr, Rect
from . import cube
from .context import BlockContext
from .operands import as_tile, byte_range, check_room, check_ub, fail, tile_array, tile_rect
from .pipes import Pipe
from .program import GM_READ, GM_WRITE, LOCAL
from .running import current
from .tensor import Buffer, GlobalTensor, LocalTensor, Tile, float16, float32


@dataclass(frozen=True)
class MmadParams:
    m: int
    n: int
    k: int
    cmatrix_init_val: bool = True  # True: C = A @ B; False: C += A @ B


@dataclass(frozen=True)
class FixpipeParams:
    m: int
    n: int


# -- data movement ------------------------------------------------------------------------------
def data_copy(dst, src, count: int | None = None) -> None:
    """``DataCopy``: GM <-> UB/L1/L0, UB -> UB, 1-D by element count or 2-D between tiles."""
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


def load_data(dst, src, transpose: bool = False) -> None:
    """``LoadData``: a tile of L1 (A1/B1) into L0A (A2) or L0B (B2), on MTE1.

    ``transpose`` (``LoadData2DParams.ifTranspose``): a ``rows x cols`` L1 tile lands as ``cols x rows``
    (how a B stored as [N, K] reaches L0B as [K, N]); same bytes, same cost.
    """
    ctx = current()
    launch = ctx.launch
    st = as_tile(src)
    dst_base = _base(dst)
    if st is None or not isinstance(st.tensor, LocalTensor) or st.tensor.buffer != Buffer.L1:
        fail(
            "load_data needs an L1 tile source: l1_tensor.tile(row, col, rows, cols)",
            "load_data 的源操作数必须是 L1 分块：l1_tensor.tile(row, col, rows, cols)",
        )
    if not isinstance(dst_base, LocalTensor) or dst_base.buffer not in (Buffer.L0A, Buffer.L0B):
        fail("load_data writes L0A (A2) or L0B (B2)", "load_data 只能写入 L0A (A2) 或 L0B (B2)")
    rows, cols = (st.cols, st.rows) if transpose else (st.rows, st.cols)
    dt = as_tile(dst) or Tile(dst_base, 0, rows, cols, cols)
    if dt.rows < rows or dt.cols < cols:
        fail(
            f"load_data: a {rows}x{cols} tile does not fit a {dt.rows}x{dt.cols} {dst_base.buffer.name} tensor",
            f"load_data: {rows}x{cols} 的分块放不进 {dt.rows}x{dt.cols} 的 {dst_base.buffer.name} 张量",
        )
    if dst_base.offset % launch.granularity(dst_base.buffer):
        fail(
            f"load_data: {dst_base.buffer.name} address +{dst_base.offset} B is not "
            f"{launch.granularity(dst_base.buffer)}-byte aligned",
            f"load_data: {dst_base.buffer.name} 地址 +{dst_base.offset} B 没有按 "
            f"{launch.granularity(dst_base.buffer)} 字节对齐",
        )
    size = st.dtype.sizeof()
    nbytes = st.rows * st.cols * size
    path = "l1_to_l0a" if dst_base.buffer == Buffer.L0A else "l1_to_l0b"
    cost = launch.mte_startup_ps + round(nbytes / launch.rate[path])
    ctx.emit(
        Pipe.MTE1,
        LOCAL,
        cost,
        0.0,
        -1,
        nbytes,
        f"load_data L1->{dst_base.buffer.name}",
        Kind.MOVE,
        Instr("load_data", tile_rect(dt, rows, cols), (tile_rect(st),), 0, (bool(transpose),)),
    )
    if ctx.numerics:
        values = tile_array(ctx, st)
        tile_array(ctx, Tile(dst_base, dt.start, rows, cols, dt.stride))[:] = values.T if transpose else values


def mmad(dst: LocalTensor, a: LocalTensor, b: LocalTensor, params: MmadParams) -> None:
    """``Mmad``: L0C[m, n] (+)= L0A[m, k] @ L0B[k, n], fp16 x fp16 -> fp32 accumulate (:mod:`.cube`)."""
    ctx = current()
    launch = ctx.launch
    m, n, k = params.m, params.n, params.k
    for t, buf, shape, name in (
        (dst, Buffer.L0C, (m, n), "dst"),
        (a, Buffer.L0A, (m, k), "a"),
        (b, Buffer.L0B, (k, n), "b"),
    ):
        if not isinstance(t, LocalTensor) or t.buffer != buf:
            fail(f"mmad: {name} must be an {buf.name} tensor", f"mmad: {name} 必须是 {buf.name} 张量")
        if t.shape is None or t.shape[0] < shape[0] or t.shape[1] < shape[1]:
            fail(
                f"mmad: {name} must be a 2-D tensor of at least {shape[0]}x{shape[1]} (reshape it), got {t.shape}",
                f"mmad: {name} 必须是至少 {shape[0]}x{shape[1]} 的二维张量（请先 reshape），实际为 {t.shape}",
            )
    if dst.dtype != float32:
        fail("mmad accumulates in fp32: the L0C tensor must be float32", "mmad 以 fp32 累加：L0C 张量必须是 float32")
    if a.dtype not in (float16, float32) or b.dtype != a.dtype:
        fail(
            f"mmad multiplies fp16 (or fp32) operands of one dtype, got {a.dtype!r} and {b.dtype!r}",
            f"mmad 要求两个操作数同为 fp16（或 fp32），实际为 {a.dtype!r} 和 {b.dtype!r}",
        )
    fractal = launch.cube
    fractals = math.ceil(m / fractal[0]) * math.ceil(n / fractal[1]) * math.ceil(k / fractal[2])
    if a.dtype == float32:
        fractals *= launch.fp32_divisor
    cost = launch.ps(launch.cube_startup + fractals)
    c_rect = tile_rect(dst.tile(0, 0, m, n))
    srcs = (tile_rect(a.tile(0, 0, m, k)), tile_rect(b.tile(0, 0, k, n)))
    if not params.cmatrix_init_val:
        srcs = (*srcs, c_rect)
    init = bool(params.cmatrix_init_val)
    ctx.emit(
        Pipe.M,
        LOCAL,
        cost,
        0.0,
        -1,
        0,
        "mmad",
        Kind.COMPUTE,
        Instr("mmad", c_rect, srcs, 2 * m * n * k, (m, n, k, init)),
    )
    if ctx.numerics:
        av = tile_array(ctx, a.tile(0, 0, m, k))
        bv = tile_array(ctx, b.tile(0, 0, k, n))
        cube.mmad(tile_array(ctx, dst.tile(0, 0, m, n)), av, bv, init)


def fixpipe(dst, src: LocalTensor, params: FixpipeParams | None = None) -> None:
    """``Fixpipe``: L0C (fp32) -> GM or L1, converting to the destination dtype (FIX pipe, :mod:`.cube`)."""
    ctx = current()
    launch = ctx.launch
    if not isinstance(src, LocalTensor) or src.buffer != Buffer.L0C or src.shape is None:
        fail("fixpipe reads a 2-D L0C (CO1) tensor", "fixpipe 的源操作数必须是二维 L0C (CO1) 张量")
    dt = dst if isinstance(dst, Tile) else as_tile(dst)
    if dt is None:
        fail(
            "fixpipe writes a tile: gm.tile(row, col, rows, cols, row_stride) or a 2-D L1 tensor",
            "fixpipe 的目的操作数必须是分块 gm.tile(row, col, rows, cols, row_stride) 或二维 L1 张量",
        )
    rows = params.m if params else dt.rows
    cols = params.n if params else dt.cols
    if rows > src.shape[0] or cols > src.shape[1] or rows > dt.rows or cols > dt.cols:
        fail(
            f"fixpipe: {rows}x{cols} exceeds the source {src.shape} or the destination {dt.rows}x{dt.cols}",
            f"fixpipe: {rows}x{cols} 超出了源操作数 {src.shape} 或目的操作数 {dt.rows}x{dt.cols}",
        )
    out_size = dt.dtype.sizeof()
    nbytes = rows * cols * out_size
    pipe = Pipe.FIX if launch.has_fix else Pipe.V
    target = dt.tensor
    detail = Instr("fixpipe", tile_rect(dt, rows, cols), (tile_rect(src.tile(0, 0, rows, cols)),))
    if isinstance(target, GlobalTensor):
        last = dt.start + (rows - 1) * dt.stride + cols
        ctx.gm_check(target, dt.start, last - dt.start, True)
        rate = launch.rate["l0c_to_gm"]
        ctx.emit(pipe, GM_WRITE, launch.mte_startup_ps, rate, -1, nbytes, "fixpipe L0C->GM", Kind.MOVE, detail)
    else:
        if target.buffer != Buffer.L1:
            fail("fixpipe writes GM or L1", "fixpipe 只能写入 GM 或 L1")
        cost = launch.mte_startup_ps + round(nbytes / launch.rate["l0c_to_l1"])
        ctx.emit(pipe, LOCAL, cost, 0.0, -1, nbytes, "fixpipe L0C->L1", Kind.MOVE, detail)
    if ctx.numerics:
        out = tile_array(ctx, Tile(target, dt.start, rows, cols, dt.stride))
        out[:] = cube.fixpipe(tile_array(ctx, src.tile(0, 0, rows, cols)), out.dtype)
