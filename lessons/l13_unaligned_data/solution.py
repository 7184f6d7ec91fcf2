"""Lesson 13 reference solution: y = |x| * scale on any length, split over the cores in 512-byte units (big cores
first) by the host, the last partial tile moved with DataCopyPad so nothing beyond the tensor is read or written."""

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
    unit = UNIT_BYTES // dtype_bytes  # elements per 512-byte unit
    units = max(1, -(-total_length // unit))  # 512-byte units, the last one possibly part-filled
    block_dim = min(core_num, units)  # never a core without a unit
    tiling = PadTilingData()
    tiling.set_total_length(total_length)
    tiling.set_former_num(units % block_dim)
    tiling.set_former_length(-(-units // block_dim) * unit)
    tiling.set_tail_length(units // block_dim * unit)
    tiling.set_tile_length(TILE_BYTES // dtype_bytes)
    tiling.set_scale(scale)
    context.set_block_dim(block_dim)
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
    x_local = in_q.alloc_tensor(dtype)
    if count * dtype.sizeof() % BLOCK_BYTES == 0:
        asc.data_copy(x_local, x_gm, count)  # whole 32-byte data blocks
    else:  # the tail: exactly count elements from GM, the UB side padded to 32 bytes
        asc.data_copy_pad(x_local, x_gm, count)
    in_q.enque(x_local)


def compute(in_q, out_q, count, scale, dtype):
    x_local = in_q.deque()
    y_local = out_q.alloc_tensor(dtype)
    asc.abs(y_local, x_local, count)
    asc.muls(y_local, y_local, scale, count)
    out_q.enque(y_local)
    in_q.free_tensor(x_local)


def copy_out(y_gm, out_q, count, dtype):
    y_local = out_q.deque()
    if count * dtype.sizeof() % BLOCK_BYTES == 0:
        asc.data_copy(y_gm, y_local, count)
    else:  # exactly count elements to GM: not one byte past the tensor's end
        asc.data_copy_pad(y_gm, y_local, count)
    out_q.free_tensor(y_local)


PREDICTIONS = {"round_up": "a GM write out of bounds"}
