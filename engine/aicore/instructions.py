"""Kernel instructions, pyasc-shaped: data movement, vector and cube compute, flags and barriers.

Each function records one instruction on the running block's program (pipe, cost, flags, the
memory it reads and writes) and, with numerics on, does the work on numpy data at once, in
program order. Costs come from the profile:

* transfers: fixed MTE set-up + bytes at the path's per-core rate (GM transfers also share L2/HBM);
* ``mmad``: one 16x16x16 fractal per cycle (fp32 inputs: a quarter of that) + set-up;
* vector ops: one 256-byte repeat per cycle (exp, ln, sqrt, div: ``vector_slow_divisor`` cycles);
* flags and barriers: ``flag_cycles``.

The 32-byte rules of ``DataCopy`` are enforced: a UB address or length that is not a multiple of
32 bytes is an error (the hardware would silently round the length down); ``data_copy_pad``
handles any length.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from ..acl_codes import ACL_ERROR_RT_AICORE_EXCEPTION
from ..detail import NO_SLOT, CrossFlag, Flag, Instr, Mark, Rect
from ..trace import Kind
from . import cube, vector_math
from .context import BlockContext, KernelError, current
from .pipes import HardEvent, Pipe, PipeID
from .program import BARRIER, GM_READ, GM_WRITE, LOCAL, NOTE, SET, WAIT, XSET, XWAIT
from .tensor import Buffer, GlobalTensor, LocalTensor, Tile, float16, float32

UB_ALIGN_MESSAGE = "multiple of 32 B"


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


# -- helpers ------------------------------------------------------------------------------------
def _fail(message: str) -> None:
    raise KernelError(ACL_ERROR_RT_AICORE_EXCEPTION, message)


def _rect(t: LocalTensor | GlobalTensor, start: int, rows: int, row_bytes: int, stride: int) -> Rect:
    """``rows`` runs of ``row_bytes`` bytes, ``stride`` apart, from byte ``start`` of ``t``'s buffer or allocation."""
    if isinstance(t, GlobalTensor):
        return Rect(Buffer.GM.value, t.alloc.ident, NO_SLOT, start, rows, row_bytes, stride, t.dtype.name, "GM")
    owner = t.owner.ident if t.owner is not None else -1
    return Rect(t.buffer.value, owner, t.slot, start, rows, row_bytes, stride, t.dtype.name, t.position.name)


def _range(t: LocalTensor | GlobalTensor, start: int, nbytes: int) -> Rect:
    return _rect(t, start, 1, nbytes, nbytes)


def _tile_rect(t: Tile, rows: int | None = None, cols: int | None = None) -> Rect:
    """The bytes of a tile (or of its top-left ``rows x cols``)."""
    size = t.dtype.sizeof()
    base = t.tensor.byte_offset if isinstance(t.tensor, GlobalTensor) else t.tensor.offset
    rows = t.rows if rows is None else rows
    cols = t.cols if cols is None else cols
    return _rect(t.tensor, base + t.start * size, rows, cols * size, t.stride * size)


def _check_ub(ctx: BlockContext, t: LocalTensor, nbytes: int, what: str) -> None:
    if t.offset % 32:
        _fail(f"{what}: UB address +{t.offset} B is not 32-byte aligned ({ctx.src()[1]})")
    if nbytes % 32:
        _fail(
            f"{what}: length {nbytes} B is not a {UB_ALIGN_MESSAGE} (the hardware would round it down to "
            f"{nbytes // 32 * 32} B); use data_copy_pad for lengths like this ({ctx.src()[1]})"
        )


def _check_room(t: LocalTensor, count: int, what: str) -> None:
    if count > t.count:
        _fail(f"{what}: {count} elements do not fit the {t.position.name} tensor of {t.count} elements")


def _as_tile(x) -> Tile | None:
    if isinstance(x, Tile):
        return x
    if isinstance(x, LocalTensor) and x.shape is not None:
        return Tile(x, 0, x.shape[0], x.shape[1], x.shape[1])
    return None


def _tile_array(ctx: BlockContext, t: Tile) -> np.ndarray:
    """A numpy 2-D view of a tile (strided, writable)."""
    tensor = t.tensor
    size = t.dtype.sizeof()
    if isinstance(tensor, GlobalTensor):
        raw = ctx.gm_bytes(tensor)
        base = tensor.byte_offset
    else:
        raw = ctx.buffer_bytes(tensor.buffer)
        base = tensor.offset
    first = base + t.start * size
    flat = raw[first : first + ((t.rows - 1) * t.stride + t.cols) * size].view(t.dtype.np)
    return np.lib.stride_tricks.as_strided(flat, (t.rows, t.cols), (t.stride * size, size), writeable=True)


# -- data movement ------------------------------------------------------------------------------
def data_copy(dst, src, count: int | None = None) -> None:
    """``DataCopy``: GM <-> UB/L1/L0, UB -> UB, 1-D by element count or 2-D between tiles."""
    ctx = current()
    launch = ctx.launch
    src_tile, dst_tile = _as_tile(src), _as_tile(dst)
    if isinstance(src, GlobalTensor | Tile) and isinstance(_base(src), GlobalTensor):
        _copy_in(ctx, launch, dst, src, count)
    elif isinstance(_base(dst), GlobalTensor):
        _copy_out(ctx, launch, dst, src, count)
    elif isinstance(src, LocalTensor) and isinstance(dst, LocalTensor) and src_tile is None and dst_tile is None:
        n = min(src.count, dst.count) if count is None else count
        _check_room(src, n, "data_copy")
        _check_room(dst, n, "data_copy")
        if src.buffer != Buffer.UB or dst.buffer != Buffer.UB:
            _fail(
                f"data_copy {src.buffer.name} -> {dst.buffer.name} is not a supported path (use load_data for L1 -> L0)"
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
            Instr("data_copy", _range(dst, dst.offset, nbytes), (_range(src, src.offset, nbytes),)),
        )
        if ctx.numerics:
            ctx.local_array(dst, n)[:] = ctx.local_array(src, n)
    else:
        _fail(f"data_copy from {type(src).__name__} to {type(dst).__name__} is not supported")


def _base(x):
    return x.tensor if isinstance(x, Tile) else x


def _copy_in(ctx: BlockContext, launch, dst, src, count) -> None:
    g = _base(src)
    dst_base = _base(dst)
    if not isinstance(dst_base, LocalTensor):
        _fail("data_copy from GM needs a LocalTensor destination")
    size = g.dtype.sizeof()
    if dst_base.dtype.sizeof() != size:
        _fail(f"data_copy GM -> {dst_base.buffer.name}: element sizes differ ({g.dtype!r} vs {dst_base.dtype!r})")
    if isinstance(src, Tile):
        st = src
        dt = _as_tile(dst)
        if dt is None:
            dt = Tile(dst_base, 0, st.rows, st.cols, st.cols)
        if (dt.rows, dt.cols) != (st.rows, st.cols) and not (dt.rows >= st.rows and dt.cols >= st.cols):
            _fail(f"data_copy: a {st.rows}x{st.cols} tile does not fit a {dt.rows}x{dt.cols} destination")
        rows, cols = st.rows, st.cols
        lo, _ = ctx.gm_check(g, st.start, 0, False)
        last = st.start + (rows - 1) * st.stride + cols
        ctx.gm_check(g, st.start, last - st.start, False)
        nbytes = rows * cols * size
        key = launch.tile_key(g.alloc, lo, rows, cols * size, st.stride * size)
        if dst_base.buffer == Buffer.UB:
            _check_ub(ctx, dst_base, cols * size, "data_copy GM->UB (tile row)")
        _emit_read(ctx, launch, "data_copy", dst_base, nbytes, key, _tile_rect(dt, rows, cols), _tile_rect(st))
        if ctx.numerics:
            _tile_array(ctx, Tile(dt.tensor, dt.start, rows, cols, dt.stride))[:] = _tile_array(ctx, st)
        return
    n = min(dst_base.count, g.size) if count is None else count
    _check_room(dst_base, n, "data_copy")
    nbytes = n * size
    if dst_base.buffer == Buffer.UB:
        _check_ub(ctx, dst_base, nbytes, "data_copy GM->UB")
    lo, hi = ctx.gm_check(g, 0, n, False)
    key = launch.tile_key(g.alloc, lo, 1, nbytes, nbytes)
    _emit_read(
        ctx,
        launch,
        "data_copy",
        dst_base,
        nbytes,
        key,
        _range(dst_base, dst_base.offset, nbytes),
        _range(g, lo, nbytes),
    )
    if ctx.numerics:
        ctx.local_array(dst_base, n)[:] = ctx.gm_bytes(g)[lo:hi].view(g.dtype.np)


_READ_PATHS = MappingProxyType(
    {Buffer.UB: "gm_to_ub", Buffer.L1: "gm_to_l1", Buffer.L0A: "gm_to_l1", Buffer.L0B: "gm_to_l1"}
)


def _emit_read(ctx, launch, op: str, dst: LocalTensor, nbytes: int, key: int, local: Rect, gm: Rect) -> None:
    path = _READ_PATHS.get(dst.buffer)
    if path is None:
        _fail(f"{op} GM -> {dst.buffer.name} is not a hardware path")
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
        _fail("data_copy to GM needs a LocalTensor source")
    size = g.dtype.sizeof()
    if src_base.buffer == Buffer.UB:
        path, pipe = "ub_to_gm", Pipe.MTE3
    elif src_base.buffer == Buffer.L1:
        path, pipe = "l1_to_gm", Pipe.MTE3
    else:
        _fail(f"data_copy {src_base.buffer.name} -> GM is not a hardware path (L0C leaves through fixpipe)")
    if isinstance(dst, Tile):
        st = _as_tile(src) or Tile(src_base, 0, dst.rows, dst.cols, dst.cols)
        rows, cols = dst.rows, dst.cols
        last = dst.start + (rows - 1) * dst.stride + cols
        lo, _ = ctx.gm_check(g, dst.start, last - dst.start, True)
        nbytes = rows * cols * size
        if src_base.buffer == Buffer.UB:
            _check_ub(ctx, src_base, cols * size, "data_copy UB->GM (tile row)")
        _emit_write(ctx, launch, pipe, path, "data_copy", src_base, nbytes, _tile_rect(dst), _tile_rect(st, rows, cols))
        if ctx.numerics:
            _tile_array(ctx, dst)[:] = _tile_array(ctx, Tile(st.tensor, st.start, rows, cols, st.stride))
        return
    n = min(src_base.count, g.size) if count is None else count
    _check_room(src_base, n, "data_copy")
    nbytes = n * size
    if src_base.buffer == Buffer.UB:
        _check_ub(ctx, src_base, nbytes, "data_copy UB->GM")
    lo, hi = ctx.gm_check(g, 0, n, True)
    _emit_write(
        ctx,
        launch,
        pipe,
        path,
        "data_copy",
        src_base,
        nbytes,
        _range(g, lo, nbytes),
        _range(src_base, src_base.offset, nbytes),
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
        _check_room(dst, padded // size, "data_copy_pad")
        if dst.offset % 32:
            _fail(f"data_copy_pad: UB address +{dst.offset} B is not 32-byte aligned ({ctx.src()[1]})")
        lo, hi = ctx.gm_check(src, 0, count, False)
        key = launch.tile_key(src.alloc, lo, 1, count * size, count * size)
        local = _range(dst, dst.offset, padded)
        _emit_read(ctx, launch, "data_copy_pad", dst, padded, key, local, _range(src, lo, count * size))
        if ctx.numerics:
            out = ctx.local_array(dst, padded // size)
            out[:count] = ctx.gm_bytes(src)[lo:hi].view(src.dtype.np)
            out[count:] = 0
    elif isinstance(dst, GlobalTensor) and isinstance(src, LocalTensor) and src.buffer == Buffer.UB:
        size = dst.dtype.sizeof()
        _check_room(src, count, "data_copy_pad")
        if src.offset % 32:
            _fail(f"data_copy_pad: UB address +{src.offset} B is not 32-byte aligned ({ctx.src()[1]})")
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
            _range(dst, lo, nbytes),
            _range(src, src.offset, nbytes),
        )
        if ctx.numerics:
            ctx.gm_bytes(dst)[lo:hi] = ctx.local_array(src, count).view(np.uint8)
    else:
        _fail("data_copy_pad copies GM -> UB or UB -> GM")


def load_data(dst, src, transpose: bool = False) -> None:
    """``LoadData``: a tile of L1 (A1/B1) into L0A (A2) or L0B (B2), on MTE1.

    ``transpose`` (``LoadData2DParams.ifTranspose``): a ``rows x cols`` L1 tile lands as ``cols x rows``
    (how a B stored as [N, K] reaches L0B as [K, N]); same bytes, same cost.
    """
    ctx = current()
    launch = ctx.launch
    st = _as_tile(src)
    dst_base = _base(dst)
    if st is None or not isinstance(st.tensor, LocalTensor) or st.tensor.buffer != Buffer.L1:
        _fail("load_data needs an L1 tile source: l1_tensor.tile(row, col, rows, cols)")
    if not isinstance(dst_base, LocalTensor) or dst_base.buffer not in (Buffer.L0A, Buffer.L0B):
        _fail("load_data writes L0A (A2) or L0B (B2)")
    rows, cols = (st.cols, st.rows) if transpose else (st.rows, st.cols)
    dt = _as_tile(dst) or Tile(dst_base, 0, rows, cols, cols)
    if dt.rows < rows or dt.cols < cols:
        _fail(f"load_data: a {rows}x{cols} tile does not fit a {dt.rows}x{dt.cols} {dst_base.buffer.name} tensor")
    if dst_base.offset % launch.granularity(dst_base.buffer):
        _fail(
            f"load_data: {dst_base.buffer.name} address +{dst_base.offset} B is not "
            f"{launch.granularity(dst_base.buffer)}-byte aligned"
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
        Instr("load_data", _tile_rect(dt, rows, cols), (_tile_rect(st),), 0, (bool(transpose),)),
    )
    if ctx.numerics:
        values = _tile_array(ctx, st)
        _tile_array(ctx, Tile(dst_base, dt.start, rows, cols, dt.stride))[:] = values.T if transpose else values


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
            _fail(f"mmad: {name} must be an {buf.name} tensor")
        if t.shape is None or t.shape[0] < shape[0] or t.shape[1] < shape[1]:
            _fail(f"mmad: {name} must be a 2-D tensor of at least {shape[0]}x{shape[1]} (reshape it), got {t.shape}")
    if dst.dtype != float32:
        _fail("mmad accumulates in fp32: the L0C tensor must be float32")
    if a.dtype not in (float16, float32) or b.dtype != a.dtype:
        _fail(f"mmad multiplies fp16 (or fp32) operands of one dtype, got {a.dtype!r} and {b.dtype!r}")
    fractal = launch.cube
    fractals = math.ceil(m / fractal[0]) * math.ceil(n / fractal[1]) * math.ceil(k / fractal[2])
    if a.dtype == float32:
        fractals *= launch.fp32_divisor
    cost = launch.ps(launch.cube_startup + fractals)
    c_rect = _tile_rect(dst.tile(0, 0, m, n))
    srcs = (_tile_rect(a.tile(0, 0, m, k)), _tile_rect(b.tile(0, 0, k, n)))
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
        av = _tile_array(ctx, a.tile(0, 0, m, k))
        bv = _tile_array(ctx, b.tile(0, 0, k, n))
        cube.mmad(_tile_array(ctx, dst.tile(0, 0, m, n)), av, bv, init)


def fixpipe(dst, src: LocalTensor, params: FixpipeParams | None = None) -> None:
    """``Fixpipe``: L0C (fp32) -> GM or L1, converting to the destination dtype (FIX pipe, :mod:`.cube`)."""
    ctx = current()
    launch = ctx.launch
    if not isinstance(src, LocalTensor) or src.buffer != Buffer.L0C or src.shape is None:
        _fail("fixpipe reads a 2-D L0C (CO1) tensor")
    dt = dst if isinstance(dst, Tile) else _as_tile(dst)
    if dt is None:
        _fail("fixpipe writes a tile: gm.tile(row, col, rows, cols, row_stride) or a 2-D L1 tensor")
    rows = params.m if params else dt.rows
    cols = params.n if params else dt.cols
    if rows > src.shape[0] or cols > src.shape[1] or rows > dt.rows or cols > dt.cols:
        _fail(f"fixpipe: {rows}x{cols} exceeds the source {src.shape} or the destination {dt.rows}x{dt.cols}")
    out_size = dt.dtype.sizeof()
    nbytes = rows * cols * out_size
    pipe = Pipe.FIX if launch.has_fix else Pipe.V
    target = dt.tensor
    detail = Instr("fixpipe", _tile_rect(dt, rows, cols), (_tile_rect(src.tile(0, 0, rows, cols)),))
    if isinstance(target, GlobalTensor):
        last = dt.start + (rows - 1) * dt.stride + cols
        ctx.gm_check(target, dt.start, last - dt.start, True)
        rate = launch.rate["l0c_to_gm"]
        ctx.emit(pipe, GM_WRITE, launch.mte_startup_ps, rate, -1, nbytes, "fixpipe L0C->GM", Kind.MOVE, detail)
    else:
        if target.buffer != Buffer.L1:
            _fail("fixpipe writes GM or L1")
        cost = launch.mte_startup_ps + round(nbytes / launch.rate["l0c_to_l1"])
        ctx.emit(pipe, LOCAL, cost, 0.0, -1, nbytes, "fixpipe L0C->L1", Kind.MOVE, detail)
    if ctx.numerics:
        out = _tile_array(ctx, Tile(target, dt.start, rows, cols, dt.stride))
        out[:] = cube.fixpipe(_tile_array(ctx, src.tile(0, 0, rows, cols)), out.dtype)


# -- vector -------------------------------------------------------------------------------------
def _vector(name: str, dst: LocalTensor, srcs: tuple[LocalTensor, ...], count: int, params: tuple = ()) -> None:
    ctx = current()
    launch = ctx.launch
    for t in (dst, *srcs):
        if not isinstance(t, LocalTensor) or t.buffer != Buffer.UB:
            _fail(f"{name}: operands must be UB tensors (VECIN/VECOUT/VECCALC)")
        _check_room(t, count, name)
    width = max(t.dtype.sizeof() for t in (dst, *srcs))
    repeats = math.ceil(count * width / launch.repeat_bytes)
    cycles = launch.vec_startup + repeats * (launch.slow_divisor if name in vector_math.SLOW else 1)
    detail = Instr(
        name,
        _range(dst, dst.offset, count * dst.dtype.sizeof()),
        tuple(_range(t, t.offset, count * t.dtype.sizeof()) for t in srcs),
        count,
        params,
    )
    nbytes = count * width * (len(srcs) + 1)
    ctx.emit(Pipe.V, LOCAL, launch.ps(cycles), 0.0, -1, nbytes, name, Kind.COMPUTE, detail)
    if ctx.numerics:
        args = [ctx.local_array(t, count) for t in srcs]
        ctx.local_array(dst, count)[:] = vector_math.evaluate(name, args, params, dst.dtype.np, count)


def _binary(name: str):
    def op(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int) -> None:
        if src0.dtype != src1.dtype or src0.dtype != dst.dtype:
            _fail(f"{name}: operand dtypes differ ({dst.dtype!r}, {src0.dtype!r}, {src1.dtype!r})")
        _vector(name, dst, (src0, src1), count)

    op.__name__ = name
    op.__doc__ = f"``{name.capitalize()}``: dst = {name}(src0, src1), elementwise over ``count`` elements (V pipe)."
    return op


add = _binary("add")
sub = _binary("sub")
mul = _binary("mul")
div = _binary("div")
vmax = _binary("max")  # asc.max
vmin = _binary("min")  # asc.min


def _unary(name: str):
    def op(dst: LocalTensor, src: LocalTensor, count: int) -> None:
        if src.dtype != dst.dtype:
            _fail(f"{name}: operand dtypes differ ({dst.dtype!r}, {src.dtype!r}); use cast")
        _vector(name, dst, (src,), count)

    op.__name__ = name
    return op


exp = _unary("exp")
ln = _unary("ln")
sqrt = _unary("sqrt")
vabs = _unary("abs")  # asc.abs
relu = _unary("relu")


def muls(dst: LocalTensor, src: LocalTensor, scalar: float, count: int) -> None:
    """``Muls``: dst = src * scalar."""
    _vector("muls", dst, (src,), count, (float(scalar),))


def adds(dst: LocalTensor, src: LocalTensor, scalar: float, count: int) -> None:
    """``Adds``: dst = src + scalar."""
    _vector("adds", dst, (src,), count, (float(scalar),))


def maxs(dst: LocalTensor, src: LocalTensor, scalar: float, count: int) -> None:
    """``Maxs``: dst = max(src, scalar)."""
    _vector("maxs", dst, (src,), count, (float(scalar),))


def mins(dst: LocalTensor, src: LocalTensor, scalar: float, count: int) -> None:
    """``Mins``: dst = min(src, scalar)."""
    _vector("mins", dst, (src,), count, (float(scalar),))


def duplicate(dst: LocalTensor, scalar: float, count: int) -> None:
    """``Duplicate``: fill ``count`` elements with ``scalar``."""
    _vector("duplicate", dst, (), count, (float(scalar),))


def cast(dst: LocalTensor, src: LocalTensor, round_mode: str = "CAST_NONE", count: int = 0) -> None:
    """``Cast``: convert ``count`` elements to the destination dtype (round to nearest)."""
    _vector("cast", dst, (src,), count)


def reduce_sum(dst: LocalTensor, src: LocalTensor, work: LocalTensor, count: int) -> None:
    """``ReduceSum``: dst[0] = sum of ``count`` elements (accumulated in fp32), using ``work`` as scratch."""
    ctx = current()
    launch = ctx.launch
    for t in (dst, src, work):
        if not isinstance(t, LocalTensor) or t.buffer != Buffer.UB:
            _fail("reduce_sum: operands must be UB tensors")
    _check_room(src, count, "reduce_sum")
    width = src.dtype.sizeof()
    repeats = math.ceil(count * width / launch.repeat_bytes)
    cycles = launch.vec_startup + repeats + math.ceil(math.log2(max(2, repeats)))
    detail = Instr(
        "reduce_sum", _range(dst, dst.offset, dst.dtype.sizeof()), (_range(src, src.offset, count * width),), count
    )
    scratch = (_range(work, work.offset, min(work.nbytes, count * width)),)
    ctx.emit(Pipe.V, LOCAL, launch.ps(cycles), 0.0, -1, count * width, "reduce_sum", Kind.COMPUTE, detail, scratch)
    if ctx.numerics:
        src_values = [ctx.local_array(src, count)]
        ctx.local_array(dst, 1)[:] = vector_math.evaluate("reduce_sum", src_values, (), dst.dtype.np, 1)


# -- synchronisation ----------------------------------------------------------------------------
def _event_key(ctx: BlockContext, event: HardEvent, event_id: int, what: str) -> int:
    limit = ctx.launch.flag_ids
    if not isinstance(event, HardEvent):
        _fail(f"{what}: event must be an asc.HardEvent, got {event!r}")
    if not isinstance(event_id, int) or not 0 <= event_id < limit:
        _fail(f"{what}: event_id must be 0..{limit - 1}, got {event_id!r}")
    return ctx.launch.flag_key(event.src, event.dst, ("id", event_id))


def set_flag(event: HardEvent, event_id: int = 0) -> None:
    """``SetFlag<SRC_DST>``: fires on the SRC pipe once its earlier work is done."""
    ctx = current()
    key = _event_key(ctx, event, event_id, "set_flag")
    flag = Flag(int(event.src), int(event.dst), event_id)
    ctx.emit(event.src, SET, 0, 0.0, key, 0, f"set_flag {event.name}", Kind.FLAG_SET, flag)


def wait_flag(event: HardEvent, event_id: int = 0) -> None:
    """``WaitFlag<SRC_DST>``: holds the DST pipe until the matching set_flag fired."""
    ctx = current()
    key = _event_key(ctx, event, event_id, "wait_flag")
    flag = Flag(int(event.src), int(event.dst), event_id)
    ctx.emit(event.dst, WAIT, 0, 0.0, key, 0, f"wait_flag {event.name}", Kind.FLAG_WAIT, flag)


def pipe_barrier(pipe: PipeID = PipeID.PIPE_ALL) -> None:
    """``PipeBarrier``: PIPE_ALL drains every pipe; one pipe's barrier orders only that (in-order) pipe."""
    ctx = current()
    if pipe == PipeID.PIPE_ALL:
        ctx.emit(Pipe.S, BARRIER, 0, 0.0, -1, 0, "pipe_barrier PIPE_ALL", Kind.BARRIER)
    else:
        ctx.emit(pipe.value, LOCAL, ctx.launch.flag_ps, 0.0, -1, 0, f"pipe_barrier {pipe.name}", Kind.BARRIER)


def _cross_flag(what: str, flag_id: int, mode: int) -> BlockContext:
    ctx = current()
    if ctx.group is None:
        _fail(
            f"{what}: cross-core flags synchronise the AIC and AIVs of a mixed kernel; {ctx.launch.name} is "
            f"{ctx.launch.core_type}-only (launch it with kernel_type=asc.KernelType.MIX_AIC_1_2)"
        )
    if mode != 2:
        _fail(f"{what}: mode {mode!r} is not modelled; mode 2 (AIC <-> AIV of one AI core) is")
    limit = ctx.launch.cross_flag_ids
    if not isinstance(flag_id, int) or not 0 <= flag_id < limit:
        _fail(f"{what}: flag_id must be 0..{limit - 1}, got {flag_id!r}")
    return ctx


def cross_core_set_flag(flag_id: int, mode: int = 2, pipe: PipeID = PipeID.PIPE_FIX) -> None:
    """``CrossCoreSetFlag<mode, pipe>(flagId)``: once ``pipe``'s earlier work is done, signal the other side.

    On the AIC it reaches both AIVs of the group; on an AIV it reaches the AIC. ``pipe`` defaults to
    FIX on the AIC (its results leave through the fixpipe) and is MTE3 on an AIV by default.
    """
    ctx = _cross_flag("cross_core_set_flag", flag_id, mode)
    if pipe == PipeID.PIPE_FIX and ctx.core_type == "aiv":
        pipe = PipeID.PIPE_MTE3
    if pipe == PipeID.PIPE_ALL:
        _fail("cross_core_set_flag: pipe must be one pipe (PIPE_S, PIPE_FIX, PIPE_MTE3, ...), not PIPE_ALL")
    detail = CrossFlag(flag_id, mode)
    ctx.emit(pipe.value, XSET, 0, 0.0, flag_id, 0, f"cross_core_set_flag {flag_id}", Kind.FLAG_SET, detail)
    ctx.group.cross_set(ctx.role, flag_id)


def cross_core_wait_flag(flag_id: int, mode: int = 2, pipe: PipeID = PipeID.PIPE_S) -> None:
    """``CrossCoreWaitFlag(flagId)``: every later instruction of this core waits until the other side set it.

    The AIC's wait takes one set from each of its two AIVs; an AIV's wait takes one set of the AIC.
    """
    ctx = _cross_flag("cross_core_wait_flag", flag_id, mode)
    if pipe == PipeID.PIPE_ALL:
        _fail("cross_core_wait_flag: pipe must be one pipe (PIPE_S, PIPE_V, ...), not PIPE_ALL")
    name = f"cross_core_wait_flag {flag_id}"
    where = ctx.emit(pipe.value, XWAIT, 0, 0.0, flag_id, 0, name, Kind.FLAG_WAIT, CrossFlag(flag_id, mode))
    ctx.group.cross_wait(ctx.role, flag_id, where)


# -- block identity -----------------------------------------------------------------------------
def get_block_idx() -> int:
    return current().block_idx


def get_block_num() -> int:
    return current().block_num


def get_subblockidx() -> int:
    """``GetSubBlockIdx()``: which AIV of its group (0 or 1) this core is; 0 on the AIC and outside mixed kernels."""
    ctx = current()
    return ctx.role - 1 if ctx.role else 0


def ascend_is_aic() -> bool:
    return current().core_type in ("aic", "coupled")


def ascend_is_aiv() -> bool:
    return current().core_type in ("aiv", "coupled")


def scalar_work(cycles: int, name: str = "scalar") -> None:
    """Account ``cycles`` of scalar-unit work (address arithmetic, loop control) on the S pipe."""
    ctx = current()
    ctx.emit(Pipe.S, LOCAL, ctx.launch.ps(cycles), 0.0, -1, 0, name, Kind.COMPUTE)


def mark(label: str) -> None:
    """A user's mark in the kernel (a trace row on the scalar pipe, no cost): the replay can stop at it."""
    ctx = current()
    ctx.emit(Pipe.S, NOTE, 0, 0.0, -1, 0, f"mark {label}", Kind.MARK, Mark(str(label)))
