"""Lesson 5 reference solution: Hard-Swish, double-buffered (two slots per queue), and the host tiling for it."""

from engine import TilingContext, asc
from lessons.hostkit import split_cores

BUFFER_NUM = 2  # two slots per queue: MTE2 fills one while V works on the other
QUEUES = 2  # VECIN x and VECOUT y
UB_BYTES = 196608  # ascend910b1: 192 KiB of UB per vector core
BLOCK_BYTES = 32  # DataCopy moves whole 32-byte data blocks


class HardSwishTilingData(asc.TilingData):  # BEGIN_TILING_DATA_DEF(HardSwishTilingData)
    former_num = asc.Field(asc.uint32)  # big cores first (lesson 2's split)
    former_length = asc.Field(asc.uint32)
    tail_length = asc.Field(asc.uint32)
    tile_length = asc.Field(asc.uint32)  # elements per full tile (lesson 4's plan)
    former_tile_num = asc.Field(asc.uint32)
    former_last_tile = asc.Field(asc.uint32)
    tail_tile_num = asc.Field(asc.uint32)
    tail_last_tile = asc.Field(asc.uint32)


def hard_swish_tiling(context: TilingContext, total_length: int, core_num: int) -> None:
    """Host side: lesson 2's split of the fp16 data over the cores, then tiles that let every slot of every queue
    sit in the UB at once."""
    split = split_cores(total_length, 2, core_num)  # padded to whole data blocks
    tile = UB_BYTES // (QUEUES * BUFFER_NUM) // BLOCK_BYTES * BLOCK_BYTES // 2
    tiling = HardSwishTilingData(former_num=split.former_num, former_length=split.former_length, tile_length=tile)
    tiling.tail_length = split.tail_length
    for kind, length in (("former", split.former_length), ("tail", split.tail_length)):
        count = -(-length // tile)
        setattr(tiling, f"{kind}_tile_num", count)
        setattr(tiling, f"{kind}_last_tile", length - (count - 1) * tile)
    context.set_block_dim(split.block_dim)
    tiling.save_to_buffer(context.get_raw_tiling_data())


@asc.jit(kernel_type=asc.KernelType.AIV_ONLY)
def hard_swish(x: asc.GlobalAddress, y: asc.GlobalAddress, tiling: asc.TilingAddress):
    """y = x * min(max(x + 3, 0), 6) / 6, tile by tile: CopyIn -> Compute -> CopyOut."""
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
    in_q = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    out_q = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    pipe.init_buffer(que=in_q, num=BUFFER_NUM, len=t.tile_length * asc.half.sizeof())
    pipe.init_buffer(que=out_q, num=BUFFER_NUM, len=t.tile_length * asc.half.sizeof())
    for i in range(tiles):
        count = t.tile_length if i < tiles - 1 else last
        copy_in(x_gm[i * t.tile_length :], in_q, count)
        compute(in_q, out_q, count)
        copy_out(y_gm[i * t.tile_length :], out_q, count)


def copy_in(x_gm, in_q, count):
    x_local = in_q.alloc_tensor(asc.half)
    asc.data_copy(x_local, x_gm, count)
    in_q.enque(x_local)


def compute(in_q, out_q, count):
    x_local = in_q.deque()
    y_local = out_q.alloc_tensor(asc.half)
    asc.adds(y_local, x_local, 3.0, count)  # x + 3
    asc.relu(y_local, y_local, count)  # max(., 0)
    asc.mins(y_local, y_local, 6.0, count)  # min(., 6)
    asc.muls(y_local, y_local, 1.0 / 6.0, count)  # / 6
    asc.mul(y_local, y_local, x_local, count)  # * x
    out_q.enque(y_local)
    in_q.free_tensor(x_local)


def copy_out(y_gm, out_q, count):
    y_local = out_q.deque()
    asc.data_copy(y_gm, y_local, count)
    out_q.free_tensor(y_local)


PREDICTIONS = {"busiest_pipe": "VECTOR", "many_cores": "no"}
