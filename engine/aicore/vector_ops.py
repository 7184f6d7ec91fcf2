"""Vector instructions, pyasc-shaped (``Add``, ``Muls``, ``Exp``, ``ReduceSum`` ...): each records one
instruction on the V pipe, one 256-byte repeat per cycle (exp, ln, sqrt, div: ``vector_slow_divisor``
cycles) plus the start-up, and with numerics on computes it on the UB's numpy data at once."""

from __future__ import annotations

import math

from ..trace import Kind
from ..trace.detail import Instr
from . import vector_math
from .operands import byte_range, check_room, fail
from .pipes import Pipe
from .program import LOCAL
from .running import current
from .tensor import Buffer, LocalTensor


# -- vector -------------------------------------------------------------------------------------
def _vector(name: str, dst: LocalTensor, srcs: tuple[LocalTensor, ...], count: int, params: tuple = ()) -> None:
    ctx = current()
    launch = ctx.launch
    for t in (dst, *srcs):
        if not isinstance(t, LocalTensor) or t.buffer != Buffer.UB:
            fail(
                f"{name}: operands must be UB tensors (VECIN/VECOUT/VECCALC)",
                f"{name}: 操作数必须是 UB 张量（VECIN/VECOUT/VECCALC）",
            )
        check_room(t, count, name)
    width = max(t.dtype.sizeof() for t in (dst, *srcs))
    repeats = math.ceil(count * width / launch.repeat_bytes)
    cycles = launch.vec_startup + repeats * (launch.slow_divisor if name in vector_math.SLOW else 1)
    detail = Instr(
        name,
        byte_range(dst, dst.offset, count * dst.dtype.sizeof()),
        tuple(byte_range(t, t.offset, count * t.dtype.sizeof()) for t in srcs),
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
            fail(
                f"{name}: operand dtypes differ ({dst.dtype!r}, {src0.dtype!r}, {src1.dtype!r})",
                f"{name}: 操作数的数据类型不一致（{dst.dtype!r}、{src0.dtype!r}、{src1.dtype!r}）",
            )
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
            fail(
                f"{name}: operand dtypes differ ({dst.dtype!r}, {src.dtype!r}); use cast",
                f"{name}: 操作数的数据类型不一致（{dst.dtype!r}、{src.dtype!r}）；请用 cast 转换",
            )
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
            fail("reduce_sum: operands must be UB tensors", "reduce_sum: 操作数必须是 UB 张量")
    check_room(src, count, "reduce_sum")
    width = src.dtype.sizeof()
    repeats = math.ceil(count * width / launch.repeat_bytes)
    cycles = launch.vec_startup + repeats + math.ceil(math.log2(max(2, repeats)))
    detail = Instr(
        "reduce_sum",
        byte_range(dst, dst.offset, dst.dtype.sizeof()),
        (byte_range(src, src.offset, count * width),),
        count,
    )
    scratch = (byte_range(work, work.offset, min(work.nbytes, count * width)),)
    ctx.emit(Pipe.V, LOCAL, launch.ps(cycles), 0.0, -1, count * width, "reduce_sum", Kind.COMPUTE, detail, scratch)
    if ctx.numerics:
        src_values = [ctx.local_array(src, count)]
        ctx.local_array(dst, 1)[:] = vector_math.evaluate("reduce_sum", src_values, (), dst.dtype.np, 1)
