"""Lesson 4 reference solution: the host tiling of relu(a*x + b) under the UB's capacity."""

from dataclasses import dataclass

from engine import asc
from engine.aicore.tiling import balanced_tiling, get_block_range

BLOCK_BYTES = 32  # DataCopy moves whole 32-byte blocks between GM and UB


@dataclass(frozen=True)
class TilePlan:
    tile_length: int  # elements per full tile
    tile_count: int  # loop iterations
    tail_length: int  # elements in the last tile (== tile_length when it divides evenly)


def plan_tiles(length: int, ub_bytes: int, dtype_bytes: int, queues: int, buffer_num: int) -> TilePlan:
    """The fewest tiles for `length` elements when `queues` queues of `buffer_num` slots share the UB."""
    slot_bytes = ub_bytes // (queues * buffer_num) // BLOCK_BYTES * BLOCK_BYTES
    max_tile = slot_bytes // dtype_bytes
    tile_count = -(-length // max_tile)  # ceil
    tail = length - (tile_count - 1) * max_tile
    return TilePlan(max_tile, tile_count, tail)


@asc.jit(kernel_type=asc.KernelType.AIV_ONLY)
def relu_axpb(
    x: asc.GlobalAddress, y: asc.GlobalAddress, total: int, tile_length: int, buffer_num: int, a: float, b: float
):
    """y = relu(a*x + b) in tiles of `tile_length` elements; a last, shorter tile goes through data_copy_pad."""
    tiling = balanced_tiling(total, asc.get_block_num())
    start, end = get_block_range(tiling, asc.get_block_idx())
    length = end - start
    if length <= 0:
        return
    x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, length)
    y_gm.set_global_buffer(y + start, length)
    pipe = asc.TPipe()
    in_q = asc.TQue(asc.TPosition.VECIN, buffer_num)
    out_q = asc.TQue(asc.TPosition.VECOUT, buffer_num)
    pipe.init_buffer(que=in_q, num=buffer_num, len=tile_length * asc.half.sizeof())
    pipe.init_buffer(que=out_q, num=buffer_num, len=tile_length * asc.half.sizeof())
    for offset in range(0, length, tile_length):
        count = min(tile_length, length - offset)
        whole = count * asc.half.sizeof() % BLOCK_BYTES == 0
        x_local = in_q.alloc_tensor(asc.half)
        if whole:
            asc.data_copy(x_local, x_gm[offset:], count)
        else:
            asc.data_copy_pad(x_local, x_gm[offset:], count)
        in_q.enque(x_local)
        x_local = in_q.deque()
        y_local = out_q.alloc_tensor(asc.half)
        asc.muls(y_local, x_local, a, count)
        asc.adds(y_local, y_local, b, count)
        asc.relu(y_local, y_local, count)
        out_q.enque(y_local)
        in_q.free_tensor(x_local)
        y_local = out_q.deque()
        if whole:
            asc.data_copy(y_gm[offset:], y_local, count)
        else:
            asc.data_copy_pad(y_gm[offset:], y_local, count)
        out_q.free_tensor(y_local)


PREDICTIONS = {"halve_tile": "slower"}
