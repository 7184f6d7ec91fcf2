"""Vector add, z = x + y, in the CopyIn / Compute / CopyOut paradigm (ADK's Add example).

Each block takes a balanced share of the elements (``get_block_range``), and processes it in
tiles of ``tile_length`` elements through queues of ``buffer_num`` slots: with two slots (double
buffering), MTE2 loads tile i+1 while V adds tile i and MTE3 stores tile i-1. Any length works:
a tile whose byte length is not a multiple of 32 goes through ``data_copy_pad``.
"""

from __future__ import annotations

from engine import asc
from engine.aicore.tiling import balanced_tiling, get_block_range


@asc.jit(kernel_type=asc.KernelType.AIV_ONLY)
def add_kernel(
    x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, total: int, tile_length: int, buffer_num: int
):
    tiling = balanced_tiling(total, asc.get_block_num())
    start, end = get_block_range(tiling, asc.get_block_idx())
    length = end - start
    dtype = x.dtype
    x_gm, y_gm, z_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, length)
    y_gm.set_global_buffer(y + start, length)
    z_gm.set_global_buffer(z + start, length)

    pipe = asc.TPipe()
    in_x = asc.TQue(asc.TPosition.VECIN, buffer_num)
    in_y = asc.TQue(asc.TPosition.VECIN, buffer_num)
    out_z = asc.TQue(asc.TPosition.VECOUT, buffer_num)
    tile_bytes = tile_length * dtype.sizeof()
    pipe.init_buffer(que=in_x, num=buffer_num, len=tile_bytes)
    pipe.init_buffer(que=in_y, num=buffer_num, len=tile_bytes)
    pipe.init_buffer(que=out_z, num=buffer_num, len=tile_bytes)

    for offset in range(0, length, tile_length):
        count = min(tile_length, length - offset)
        copy_in(x_gm[offset:], y_gm[offset:], in_x, in_y, count)
        compute(in_x, in_y, out_z, count)
        copy_out(z_gm[offset:], out_z, count)


def _aligned(count: int, dtype) -> bool:
    return (count * dtype.sizeof()) % 32 == 0


def copy_in(x_gm, y_gm, in_x, in_y, count):
    x_local = in_x.alloc_tensor(x_gm.dtype)
    y_local = in_y.alloc_tensor(y_gm.dtype)
    if _aligned(count, x_gm.dtype):
        asc.data_copy(x_local, x_gm, count)
        asc.data_copy(y_local, y_gm, count)
    else:
        asc.data_copy_pad(x_local, x_gm, count)
        asc.data_copy_pad(y_local, y_gm, count)
    in_x.enque(x_local)
    in_y.enque(y_local)


def compute(in_x, in_y, out_z, count):
    x_local = in_x.deque()
    y_local = in_y.deque()
    z_local = out_z.alloc_tensor(x_local.dtype)
    asc.add(z_local, x_local, y_local, count)
    out_z.enque(z_local)
    in_x.free_tensor(x_local)
    in_y.free_tensor(y_local)


def copy_out(z_gm, out_z, count):
    z_local = out_z.deque()
    if _aligned(count, z_gm.dtype):
        asc.data_copy(z_gm, z_local, count)
    else:
        asc.data_copy_pad(z_gm, z_local, count)
    out_z.free_tensor(z_local)
