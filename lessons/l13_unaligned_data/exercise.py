"""Lesson 13 exercise: y = |x| * scale on any length, over the cores, without touching a byte beyond the tensor.

The host's tiling function (pad_tiling) splits N elements over the vector cores into a PadTilingData struct; the
kernel (given) reads it with asc.get_tiling_data and processes its own range, tile by tile. Write pad_tiling and the
two copies, copy_in and copy_out. x and y hold exactly N elements, and N is never a whole number of 32-byte blocks.
Check it with:  ascendsim lesson check 13

第 13 课练习：对任意长度计算 y = |x| * scale，分到多个核上，且不访问张量之外的任何一个字节。
主机的 tiling 函数（pad_tiling）把 N 个元素切分到各个向量核，写进 PadTilingData 结构体；核函数（已给出）用
asc.get_tiling_data 读取它，按分块处理自己的区间。请实现 pad_tiling 和两个搬运函数 copy_in、copy_out。x 和 y 恰好
有 N 个元素，而 N 从来不是整数个 32 字节数据块。
检查：ascendsim lesson check 13
"""

from engine import TilingContext, asc

UNIT_BYTES = 512  # a core's share starts on a 512-byte boundary of GM (CANN's best practice on Atlas A2)
BLOCK_BYTES = 32  # DataCopy moves whole 32-byte data blocks between GM and UB
TILE_BYTES = 16384  # bytes per UB tile: 16 KiB (CANN's copy-optimisation advice: single copies of 16 KB or more)
BUFFER_NUM = 2  # two slots per queue: load tile i + 1 while tile i is computed (lesson 5)


class PadTilingData(asc.TilingData):  # BEGIN_TILING_DATA_DEF(PadTilingData)
    total_length = asc.Field(asc.uint32)  # N: elements of x and y
    former_num = asc.Field(asc.uint32)  # big cores: blocks 0 .. former_num - 1
    former_length = asc.Field(asc.uint32)  # elements of a big core
    tail_length = asc.Field(asc.uint32)  # elements of a small core (the others)
    tile_length = asc.Field(asc.uint32)  # elements per UB tile
    scale = asc.Field(asc.float32)


def pad_tiling(context: TilingContext, total_length: int, dtype_bytes: int, core_num: int, scale: float) -> None:
    """Host side: the tiling function. Fills PadTilingData, and the block count of ``context``."""
    # TODO (about 10 lines). Split N = total_length elements of dtype_bytes each over at most core_num blocks so that:
    #   - every block's range starts on a 512-byte boundary of GM, for any element size;
    #   - the blocks' shares differ by at most one 512-byte unit, the bigger blocks first;
    #   - all cores work when there is enough data, and no block is launched without work;
    #   - the last block's range ends at N exactly (the kernel clamps it with total_length).
    # Fill every field of PadTilingData (tile_length: TILE_BYTES of elements), then set the block count.
    tiling = PadTilingData()
    tiling.set_total_length(total_length)
    context.set_block_dim(1)
    tiling.save_to_buffer(context.get_raw_tiling_data())


@asc.jit(kernel_type=asc.KernelType.AIV_ONLY)
def abs_scale(x: asc.GlobalAddress, y: asc.GlobalAddress, tiling: asc.TilingAddress):
    """y = |x| * scale. Every block reads the host's tiling and processes its own range, tile by tile."""
    t = asc.get_tiling_data(tiling)  # GET_TILING_DATA(t, tiling): the host's tiling, copied from GM
    idx = asc.get_block_idx()
    start = idx * t.former_length  # a big core: blocks 0 .. former_num - 1
    length = t.former_length
    if idx >= t.former_num:  # a small core, after the big ones
        start = t.former_num * t.former_length + (idx - t.former_num) * t.tail_length
        length = t.tail_length
    length = max(0, min(length, t.total_length - start))  # the last core stops at N
    if length == 0:
        return
    dtype = x.dtype
    x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, length)
    y_gm.set_global_buffer(y + start, length)
    pipe = asc.TPipe()
    in_q, out_q = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM), asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    pipe.init_buffer(que=in_q, num=BUFFER_NUM, len=t.tile_length * dtype.sizeof())
    pipe.init_buffer(que=out_q, num=BUFFER_NUM, len=t.tile_length * dtype.sizeof())
    for offset in range(0, length, t.tile_length):
        count = min(t.tile_length, length - offset)
        copy_in(x_gm[offset:], in_q, count, dtype)
        compute(in_q, out_q, count, t.scale, dtype)
        copy_out(y_gm[offset:], out_q, count, dtype)


def copy_in(x_gm, in_q, count, dtype):
    # TODO (about 6 lines): bring the `count` elements at x_gm into a UB tensor of in_q and hand it to compute.
    # `count` is any number from 1 to tile_length; read nothing beyond them: x ends at N.
    pass


def compute(in_q, out_q, count, scale, dtype):
    x_local = in_q.deque()
    y_local = out_q.alloc_tensor(dtype)
    asc.abs(y_local, x_local, count)
    asc.muls(y_local, y_local, scale, count)
    out_q.enque(y_local)
    in_q.free_tensor(x_local)


def copy_out(y_gm, out_q, count, dtype):
    # TODO (about 6 lines): take the tile compute handed over and write exactly its `count` elements to y_gm, then
    # give the slot back. A byte past them is another core's, or past the end of y.
    pass


# Predict before you run: if copy_out wrote the last tile rounded up to whole 32-byte blocks with data_copy, the
# simulator would report "nothing: the extra bytes are padding", "a GM write out of bounds" or
# "a race between two cores"?
PREDICTIONS = {"round_up": None}  # TODO
