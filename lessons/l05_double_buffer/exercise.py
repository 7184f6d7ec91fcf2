"""Lesson 5 exercise: make the Hard-Swish kernel double-buffered, and at least 1.5x faster.

The kernel below is single-buffered, its compute stage is missing, and the host's tiling function does not
plan the tiles yet. Write compute: y = x * min(max(x + 3, 0), 6) / 6 on the vector unit (choosing the
instructions is part of the exercise). Give the queues the slots that let MTE2 load the next tile while V
computes this one and MTE3 stores the previous one. And plan the tiles on the host for those slots, the
largest that fit (lesson 4).
Check it with:  ascendsim lesson check 5

第 5 课练习：把 Hard-Swish 核函数改为双缓冲，并至少快 1.5 倍。
下面的核函数是单缓冲的，缺少计算阶段，主机的 tiling 函数也还没有规划分块。写出 compute：在向量单元上计算
y = x * min(max(x + 3, 0), 6) / 6（选择哪些指令是练习的一部分）。给队列足够的槽位，让 MTE2 在 V 计算当前分块时
搬入下一个分块，MTE3 同时写回上一个分块。并在主机上为这些槽位规划分块：能放下的最大分块（第 4 课）。
检查：ascendsim lesson check 5
"""

from engine import TilingContext, asc
from lessons.hostkit import split_cores

BUFFER_NUM = 1  # TODO (1 number): slots per queue, so that a queue can load one tile while another is computed
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
    tiling = HardSwishTilingData(former_num=split.former_num, former_length=split.former_length)
    tiling.tail_length = split.tail_length
    # TODO (about 6 lines): the tile plan: the longest tile, whole data blocks, such that every slot of every queue
    # of the kernel fits the UB at once; then, for the big and for the small cores' lengths, how many tiles and
    # how long the last one is. Set tile_length and the four *_tile_num / *_last_tile fields.
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
    # TODO (about 5 lines): y = Hard-Swish(x) (hard_swish's docstring) with vector instructions on UB tensors,
    # one instruction per step of the formula; engine/aicore/vector_ops.py holds the vector API.
    out_q.enque(y_local)
    in_q.free_tensor(x_local)


def copy_out(y_gm, out_q, count):
    y_local = out_q.deque()
    asc.data_copy(y_gm, y_local, count)
    out_q.free_tensor(y_local)


# Predict before you run: in the double-buffered kernel, which pipe is busy the longest:
# "MTE2" (loads), "VECTOR" (compute) or "MTE3" (stores)? And with 16 tiles on each of 16 cores instead
# of 8, is the double-buffered kernel still at least 1.5x faster than the single-buffered one: "yes" or "no"?
PREDICTIONS = {"busiest_pipe": None, "many_cores": None}  # TODO
