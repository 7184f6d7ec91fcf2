"""Lesson 5 reference solution: Hard-Swish, double-buffered (two slots per queue)."""

from engine import asc
from engine.aicore.tiling import balanced_tiling, get_block_range

BUFFER_NUM = 2  # two slots per queue: MTE2 fills one while V works on the other
TILE = 24576  # elements: 2 queues x 2 slots x 48 KiB = the whole 192 KiB UB


@asc.jit(kernel_type=asc.KernelType.AIV_ONLY)
def hard_swish(x: asc.GlobalAddress, y: asc.GlobalAddress, total: int):
    """y = x * min(max(x + 3, 0), 6) / 6, tile by tile: CopyIn -> Compute -> CopyOut."""
    tiling = balanced_tiling(total, asc.get_block_num())
    start, end = get_block_range(tiling, asc.get_block_idx())
    length = end - start
    if length <= 0:
        return
    x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, length)
    y_gm.set_global_buffer(y + start, length)
    pipe = asc.TPipe()
    in_q = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    out_q = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    pipe.init_buffer(que=in_q, num=BUFFER_NUM, len=TILE * asc.half.sizeof())
    pipe.init_buffer(que=out_q, num=BUFFER_NUM, len=TILE * asc.half.sizeof())
    for offset in range(0, length, TILE):
        count = min(TILE, length - offset)
        copy_in(x_gm[offset:], in_q, count)
        compute(in_q, out_q, count)
        copy_out(y_gm[offset:], out_q, count)


def _whole(count: int) -> bool:
    return count * asc.half.sizeof() % 32 == 0


def copy_in(x_gm, in_q, count):
    x_local = in_q.alloc_tensor(asc.half)
    if _whole(count):
        asc.data_copy(x_local, x_gm, count)
    else:
        asc.data_copy_pad(x_local, x_gm, count)
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
    if _whole(count):
        asc.data_copy(y_gm, y_local, count)
    else:
        asc.data_copy_pad(y_gm, y_local, count)
    out_q.free_tensor(y_local)


PREDICTIONS = {"busiest_pipe": "VECTOR", "many_cores": "no"}
