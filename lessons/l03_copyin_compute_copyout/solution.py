"""Lesson 3 reference solution: y = relu(a*x + b), CopyIn / Compute / CopyOut through TQues, on the host's tiling."""

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
    x_local = in_q.alloc_tensor(asc.half)
    if count * asc.half.sizeof() % 32 == 0:
        asc.data_copy(x_local, x_gm, count)
    else:  # DataCopy moves whole 32-byte blocks; DataCopyPad moves any length
        asc.data_copy_pad(x_local, x_gm, count)
    in_q.enque(x_local)


def compute(in_q, out_q, count, a, b):
    x_local = in_q.deque()
    y_local = out_q.alloc_tensor(asc.half)
    asc.muls(y_local, x_local, a, count)
    asc.adds(y_local, y_local, b, count)
    asc.relu(y_local, y_local, count)
    out_q.enque(y_local)
    in_q.free_tensor(x_local)


def copy_out(y_gm, out_q, count):
    y_local = out_q.deque()
    if count * asc.half.sizeof() % 32 == 0:
        asc.data_copy(y_gm, y_local, count)
    else:
        asc.data_copy_pad(y_gm, y_local, count)
    out_q.free_tensor(y_local)


PREDICTIONS = {"load_pipe": "MTE2"}
