"""Lesson 2 reference solution: the host's tiling of N elements over the vector cores, in 32-byte data blocks
(big cores first), and each block's range read from it."""

from engine import TilingContext, asc

BLOCK_BYTES = 32  # DataCopy moves whole 32-byte data blocks between GM and UB
ALIGNED, PADDED = 1, 2  # tiling keys: N fills whole data blocks / the last data block is partly filled


class ScaleTilingData(asc.TilingData):  # BEGIN_TILING_DATA_DEF(ScaleTilingData)
    total_length = asc.Field(asc.uint32)  # N: elements to process
    former_num = asc.Field(asc.uint32)  # big cores: blocks 0 .. former_num - 1
    former_length = asc.Field(asc.uint32)  # elements of a big core
    tail_length = asc.Field(asc.uint32)  # elements of a small core (the others)


def scale_tiling(context: TilingContext, total_length: int, dtype_bytes: int, core_num: int) -> None:
    """Host side: the tiling function. Fills ScaleTilingData, the block count and the tiling key of ``context``."""
    align = BLOCK_BYTES // dtype_bytes  # elements per data block
    blocks = -(-total_length // align)  # data blocks, the last one possibly part-filled
    block_dim = max(1, min(core_num, blocks))  # never a core without a data block
    tiling = ScaleTilingData()
    tiling.set_total_length(total_length)
    tiling.set_former_num(blocks % block_dim)
    tiling.set_former_length(-(-blocks // block_dim) * align)
    tiling.set_tail_length(blocks // block_dim * align)
    context.set_block_dim(block_dim)
    context.set_tiling_key(ALIGNED if total_length % align == 0 else PADDED)
    tiling.save_to_buffer(context.get_raw_tiling_data())


def block_range(t: ScaleTilingData, block_idx: int) -> tuple[int, int]:
    """Device side: (first element, element count) of block ``block_idx``, read from the tiling."""
    if block_idx < t.former_num:
        start, length = block_idx * t.former_length, t.former_length
    else:
        start = t.former_num * t.former_length + (block_idx - t.former_num) * t.tail_length
        length = t.tail_length
    return start, max(0, min(length, t.total_length - start))  # the last block stops at N


TILE = 4096  # elements per UB tile


@asc.jit(kernel_type=asc.KernelType.AIV_ONLY, tiling_keys=(ALIGNED, PADDED))
def scale_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, tiling: asc.TilingAddress):
    """z = 2 * x. Every block runs this same code (SPMD) on the range of its block index. The queues and copies
    below are lesson 3's subject: here they move a range to the core and back."""
    t = asc.get_tiling_data(tiling)  # GET_TILING_DATA(t, tiling): the host's tiling, copied from GM
    start, length = block_range(t, asc.get_block_idx())
    if length == 0:
        return
    dtype = x.dtype
    x_gm, z_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, length)
    z_gm.set_global_buffer(z + start, length)
    pipe = asc.TPipe()
    in_q, out_q = asc.TQue(asc.TPosition.VECIN, 2), asc.TQue(asc.TPosition.VECOUT, 2)
    pipe.init_buffer(que=in_q, num=2, len=TILE * dtype.sizeof())
    pipe.init_buffer(que=out_q, num=2, len=TILE * dtype.sizeof())
    for offset in range(0, length, TILE):
        count = min(TILE, length - offset)
        partial = asc.tiling_key_is(PADDED) and count * dtype.sizeof() % BLOCK_BYTES != 0
        x_local = in_q.alloc_tensor(dtype)
        if partial:
            asc.data_copy_pad(x_local, x_gm[offset:], count)  # the last, partly filled data block
        else:
            asc.data_copy(x_local, x_gm[offset:], count)  # whole 32-byte data blocks only
        in_q.enque(x_local)
        x_local = in_q.deque()
        z_local = out_q.alloc_tensor(dtype)
        asc.muls(z_local, x_local, 2.0, count)
        out_q.enque(z_local)
        in_q.free_tensor(x_local)
        z_local = out_q.deque()
        if partial:
            asc.data_copy_pad(z_gm[offset:], z_local, count)
        else:
            asc.data_copy(z_gm[offset:], z_local, count)
        out_q.free_tensor(z_local)


PREDICTIONS = {"second_wave": "slower"}
