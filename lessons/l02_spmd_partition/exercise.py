"""Lesson 2 exercise: the host's tiling of N elements over the vector cores, and each block's range.

The host decides how the work is split (scale_tiling): how many blocks to launch, and what each block
processes, written into a ScaleTilingData struct that travels with the launch. Every block of the kernel runs
the same code; it reads the struct (asc.get_tiling_data) and asks block_range for its own range with its
block index. Write both functions. The kernel below is given: its queues and copies are lesson 3's subject.
Check it with:  ascendsim lesson check 2

第 2 课练习：主机把 N 个元素切分到各个向量核上的 tiling，以及每个块的区间。
由主机决定如何切分（scale_tiling）：下发多少个块、每个块处理什么，都写进随下发一起传递的 ScaleTilingData 结构体。
核函数的每个块运行同一份代码：它读取结构体（asc.get_tiling_data），再用自己的块索引通过 block_range 得到自己的区间。
两个函数都由你实现。下面的核函数是给定的：其中的队列和搬运是第 3 课的内容。
检查：ascendsim lesson check 2
"""

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
    # TODO (about 10 lines). Split N elements of dtype_bytes each over at most core_num blocks so that:
    #   - every block's range starts on a 32-byte boundary of GM (DataCopy moves whole 32-byte data blocks);
    #   - the blocks' sizes differ by at most one data block, the bigger blocks first;
    #   - no block is launched without work, and all cores work when there is enough of it;
    #   - the tiling key says whether N fills whole data blocks (ALIGNED) or not (PADDED).
    # Then set the block count and the key on the context and save the struct into its raw tiling buffer
    # (context.set_block_dim, context.set_tiling_key, tiling.save_to_buffer(context.get_raw_tiling_data())).
    tiling = ScaleTilingData()
    tiling.set_total_length(total_length)
    context.set_block_dim(1)
    context.set_tiling_key(ALIGNED)
    tiling.save_to_buffer(context.get_raw_tiling_data())


def block_range(t: ScaleTilingData, block_idx: int) -> tuple[int, int]:
    """Device side: (first element, element count) of block ``block_idx``, read from the tiling."""
    # TODO (about 6 lines): the range of block `block_idx` as the tiling describes it: big blocks first, then
    # small ones, one after another with no gap and no overlap; no range may run past total_length.
    return 0, 0


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


# Predict before you run: ascend910b1 has 48 vector cores. Launching the same work on 49 blocks instead of 48
# makes the kernel "faster", "about the same" or "slower"?
PREDICTIONS = {"second_wave": None}  # TODO
