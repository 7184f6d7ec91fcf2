"""Lesson 3 exercise: y = relu(a*x + b) on the vector cores, CopyIn -> Compute -> CopyOut through TQues.

The host's tiling (relu_tiling: lesson 2's split, given) fills a ReluTilingData struct that the kernel reads
with asc.get_tiling_data; the kernel is complete except for its three stages. Fill in copy_in, compute and copy_out:
every tile of x goes GM -> UB (MTE2) into a VECIN queue, the vector unit computes y in a VECOUT
queue, and y goes UB -> GM (MTE3). The queues' calls are what make the hardware flags between the
pipes: leave one out and the check reports a race or a deadlock. The check also runs hidden cases
(other lengths, other core counts): `count` can be any number from 1 to TILE.
Check it with:  ascendsim lesson check 3

第 3 课练习：在向量核上计算 y = relu(a*x + b)，通过 TQue 实现 CopyIn -> Compute -> CopyOut。
主机的 tiling（relu_tiling：第 2 课的切分，已给出）填写 ReluTilingData 结构体，核函数用 asc.get_tiling_data 读取它；
下面的核函数只缺三个阶段：补全 copy_in、compute 和 copy_out。x 的每个分块经 MTE2 从 GM 搬入 UB 的
VECIN 队列，向量单元在 VECOUT 队列中计算 y，再经 MTE3 从 UB 写回 GM。队列的调用对应流水线之间的硬件同步标志：
漏掉一个，检查就会报告数据竞争或死锁。检查还会运行隐藏用例（其他长度、其他核数）：`count` 可以是 1 到 TILE 之间的
任意数。
检查：ascendsim lesson check 3
"""

from engine import TilingContext, asc

TILE = 4096  # elements per tile: 8 KiB of fp16 per queue slot
BLOCK_BYTES = 32  # DataCopy moves whole 32-byte data blocks between GM and UB


class ReluTilingData(asc.TilingData):  # BEGIN_TILING_DATA_DEF(ReluTilingData): filled on the host by relu_tiling
    total_length = asc.Field(asc.uint32)  # N: elements to process
    former_num = asc.Field(asc.uint32)  # big cores: blocks 0 .. former_num - 1
    former_length = asc.Field(asc.uint32)  # elements of a big core
    tail_length = asc.Field(asc.uint32)  # elements of a small core (the others)
    a = asc.Field(asc.float32)
    b = asc.Field(asc.float32)


def relu_tiling(context: TilingContext, total: int, core_num: int, a: float, b: float) -> None:
    """Host side, given (lesson 2's tiling function): N elements in 32-byte data blocks over at most core_num
    blocks, big cores first, into ReluTilingData, with the block count the launch uses."""
    align = BLOCK_BYTES // asc.half.sizeof()  # elements per data block
    blocks = max(1, -(-total // align))  # data blocks, the last one possibly part-filled
    block_dim = min(core_num, blocks)  # never a core without a data block
    tiling = ReluTilingData()
    tiling.set_total_length(total)
    tiling.set_former_num(blocks % block_dim)
    tiling.set_former_length(-(-blocks // block_dim) * align)
    tiling.set_tail_length(blocks // block_dim * align)
    tiling.set_a(a)
    tiling.set_b(b)
    context.set_block_dim(block_dim)
    tiling.save_to_buffer(context.get_raw_tiling_data())


@asc.jit(kernel_type=asc.KernelType.AIV_ONLY)
def relu_axpb(x: asc.GlobalAddress, y: asc.GlobalAddress, tiling: asc.TilingAddress):
    t = asc.get_tiling_data(tiling)  # GET_TILING_DATA(t, tiling): the host's tiling, copied from GM
    idx = asc.get_block_idx()
    start = idx * t.former_length  # a big core: blocks 0 .. former_num - 1
    length = t.former_length
    if idx >= t.former_num:  # a small core, after the big ones
        start = t.former_num * t.former_length + (idx - t.former_num) * t.tail_length
        length = t.tail_length
    length = min(length, t.total_length - start)  # the last block stops at N
    x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, length)
    y_gm.set_global_buffer(y + start, length)
    pipe = asc.TPipe()
    in_q = asc.TQue(asc.TPosition.VECIN, 1)
    out_q = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=in_q, num=1, len=TILE * asc.half.sizeof())
    pipe.init_buffer(que=out_q, num=1, len=TILE * asc.half.sizeof())
    for offset in range(0, length, TILE):
        count = min(TILE, length - offset)
        copy_in(x_gm[offset:], in_q, count)
        compute(in_q, out_q, count, t.a, t.b)
        copy_out(y_gm[offset:], out_q, count)


def copy_in(x_gm, in_q, count):
    # TODO (about 6 lines): bring `count` elements of x_gm into a UB tensor of the VECIN queue and hand it to
    # Compute. Any `count` from 1 to TILE: DataCopy moves only whole 32-byte blocks (lesson 3, step 3).
    pass


def compute(in_q, out_q, count, a, b):
    # TODO (7 lines): take the tile CopyIn handed over, compute y = relu(a*x + b) into a tensor of the VECOUT
    # queue with the vector unit (one instruction per operation; the vector API is in
    # engine/aicore/vector_ops.py), hand y to CopyOut and give x's slot back.
    pass


def copy_out(y_gm, out_q, count):
    # TODO (about 6 lines): take the tile Compute handed over, write its `count` elements to y_gm (no more: the
    # elements after them belong to another tile or another core), give the slot back.
    pass


# Predict before you run: which pipe moves x from GM into UB? "MTE2", "MTE3" or "VECTOR".
PREDICTIONS = {"load_pipe": None}  # TODO
