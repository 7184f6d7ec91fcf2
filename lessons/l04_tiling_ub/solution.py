"""Lesson 4 reference solution: the host's tile plan of relu(a*x + b) under the UB's capacity."""

from dataclasses import dataclass

from engine import asc

BLOCK_BYTES = 32  # DataCopy moves whole 32-byte data blocks between GM and UB


@dataclass(frozen=True)
class TilePlan:
    tile_length: int  # elements per full tile
    tile_count: int  # loop iterations
    tail_length: int  # elements in the last tile (== tile_length when it divides evenly)


def plan_tiles(length: int, ub_bytes: int, dtype_bytes: int, queues: int) -> TilePlan:
    """The fewest tiles for ``length`` elements when ``queues`` queues of one tile each share the UB."""
    slot_bytes = ub_bytes // queues // BLOCK_BYTES * BLOCK_BYTES
    max_tile = slot_bytes // dtype_bytes
    tile_count = -(-length // max_tile)  # ceil
    tail = length - (tile_count - 1) * max_tile
    return TilePlan(max_tile, tile_count, tail)


class ReluTilingData(
    asc.TilingData
):  # BEGIN_TILING_DATA_DEF(ReluTilingData): filled by the host (scenario.relu_tiling)
    former_num = asc.Field(asc.uint32)  # big cores first (lesson 2's split)
    former_length = asc.Field(asc.uint32)
    tail_length = asc.Field(asc.uint32)
    tile_length = asc.Field(asc.uint32)  # from plan_tiles
    former_tile_num = asc.Field(asc.uint32)  # a big core's loop iterations and last tile
    former_last_tile = asc.Field(asc.uint32)
    tail_tile_num = asc.Field(asc.uint32)  # a small core's loop iterations and last tile
    tail_last_tile = asc.Field(asc.uint32)
    a = asc.Field(asc.float32)
    b = asc.Field(asc.float32)


@asc.jit(kernel_type=asc.KernelType.AIV_ONLY)
def relu_axpb(x: asc.GlobalAddress, y: asc.GlobalAddress, tiling: asc.TilingAddress):
    """y = relu(a*x + b), tile by tile, as the host's tiling says: no tile size is worked out here."""
    t = asc.get_tiling_data(tiling)
    idx = asc.get_block_idx()
    if idx < t.former_num:  # a big core
        start, tiles, last = idx * t.former_length, t.former_tile_num, t.former_last_tile
    else:
        start = t.former_num * t.former_length + (idx - t.former_num) * t.tail_length
        tiles, last = t.tail_tile_num, t.tail_last_tile
    length = (tiles - 1) * t.tile_length + last
    x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, length)
    y_gm.set_global_buffer(y + start, length)
    pipe = asc.TPipe()
    in_q, out_q = asc.TQue(asc.TPosition.VECIN, 1), asc.TQue(asc.TPosition.VECOUT, 1)  # one tile per queue
    pipe.init_buffer(que=in_q, num=1, len=t.tile_length * asc.half.sizeof())
    pipe.init_buffer(que=out_q, num=1, len=t.tile_length * asc.half.sizeof())
    for i in range(tiles):
        count = t.tile_length if i < tiles - 1 else last
        x_local = in_q.alloc_tensor(asc.half)
        asc.data_copy(x_local, x_gm[i * t.tile_length :], count)
        in_q.enque(x_local)
        x_local = in_q.deque()
        y_local = out_q.alloc_tensor(asc.half)
        asc.muls(y_local, x_local, t.a, count)
        asc.adds(y_local, y_local, t.b, count)
        asc.relu(y_local, y_local, count)
        out_q.enque(y_local)
        in_q.free_tensor(x_local)
        y_local = out_q.deque()
        asc.data_copy(y_gm[i * t.tile_length :], y_local, count)
        out_q.free_tensor(y_local)


PREDICTIONS = {"halve_tile": "slower"}
