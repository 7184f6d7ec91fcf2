"""What the kernel instructions share: the AI-core exception they raise, the byte rectangles an instruction
reads and writes (for the trace and the race detector), the UB's 32-byte rules, and numpy views of tiles."""

from __future__ import annotations

import numpy as np

from ..host.acl_codes import ACL_ERROR_RT_AICORE_EXCEPTION
from ..trace.detail import NO_SLOT, Rect
from .context import BlockContext, KernelError
from .tensor import Buffer, GlobalTensor, LocalTensor, Tile

UB_ALIGN_MESSAGE = "multiple of 32 B"


def fail(message: str, message_zh: str) -> None:
    """Raise the AI-core exception of a misused instruction, its message in English and Chinese."""
    raise KernelError(ACL_ERROR_RT_AICORE_EXCEPTION, message, message_zh)


def rect(t: LocalTensor | GlobalTensor, start: int, rows: int, row_bytes: int, stride: int) -> Rect:
    """``rows`` runs of ``row_bytes`` bytes, ``stride`` apart, from byte ``start`` of ``t``'s buffer or allocation."""
    if isinstance(t, GlobalTensor):
        return Rect(Buffer.GM.value, t.alloc.ident, NO_SLOT, start, rows, row_bytes, stride, t.dtype.name, "GM")
    owner = t.owner.ident if t.owner is not None else -1
    return Rect(t.buffer.value, owner, t.slot, start, rows, row_bytes, stride, t.dtype.name, t.position.name)


def byte_range(t: LocalTensor | GlobalTensor, start: int, nbytes: int) -> Rect:
    return rect(t, start, 1, nbytes, nbytes)


def tile_rect(t: Tile, rows: int | None = None, cols: int | None = None) -> Rect:
    """The bytes of a tile (or of its top-left ``rows x cols``)."""
    size = t.dtype.sizeof()
    base = t.tensor.byte_offset if isinstance(t.tensor, GlobalTensor) else t.tensor.offset
    rows = t.rows if rows is None else rows
    cols = t.cols if cols is None else cols
    return rect(t.tensor, base + t.start * size, rows, cols * size, t.stride * size)


def check_ub(ctx: BlockContext, t: LocalTensor, nbytes: int, what: str) -> None:
    if t.offset % 32:
        fail(
            f"{what}: UB address +{t.offset} B is not 32-byte aligned ({ctx.src()[1]})",
            f"{what}: UB 地址 +{t.offset} B 没有按 32 字节对齐（{ctx.src()[1]}）",
        )
    if nbytes % 32:
        fail(
            f"{what}: length {nbytes} B is not a {UB_ALIGN_MESSAGE} (the hardware would round it down to "
            f"{nbytes // 32 * 32} B); use data_copy_pad for lengths like this ({ctx.src()[1]})",
            f"{what}: 长度 {nbytes} B 不是 32 B 的整数倍（硬件会把它向下取整为 {nbytes // 32 * 32} B）；"
            f"这样的长度请用 data_copy_pad（{ctx.src()[1]}）",
        )


def check_room(t: LocalTensor, count: int, what: str) -> None:
    if count > t.count:
        fail(
            f"{what}: {count} elements do not fit the {t.position.name} tensor of {t.count} elements",
            f"{what}: {count} 个元素放不进只有 {t.count} 个元素的 {t.position.name} 张量",
        )


def as_tile(x) -> Tile | None:
    if isinstance(x, Tile):
        return x
    if isinstance(x, LocalTensor) and x.shape is not None:
        return Tile(x, 0, x.shape[0], x.shape[1], x.shape[1])
    return None


def tile_array(ctx: BlockContext, t: Tile) -> np.ndarray:
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
