"""Lesson 5 exercise: make the Hard-Swish kernel double-buffered, and at least 1.5x faster.

The kernel below is single-buffered and its compute stage is missing. First write compute:
y = x * min(max(x + 3, 0), 6) / 6 on the vector unit (choosing the instructions is part of the
exercise; about five). Then change the queues so that MTE2 loads the next tile while V computes this
one and MTE3 stores the previous one, keeping the tile length: the UB has room for it.
Check it with:  ascendsim lesson check 5

第 5 课练习：把 Hard-Swish 核函数改为双缓冲，并至少快 1.5 倍。
下面的核函数是单缓冲的，而且缺少计算阶段。先写出 compute：在向量单元上计算 y = x * min(max(x + 3, 0), 6) / 6
（选择哪些指令是练习的一部分，大约五条）。然后修改队列，让 MTE2 在 V 计算当前分块时搬入下一个分块，MTE3 同时写回
上一个分块，分块长度保持不变：UB 放得下。
检查：ascendsim lesson check 5
"""

from engine import asc
from engine.aicore.tiling import balanced_tiling, get_block_range

BUFFER_NUM = 1  # TODO (1 number): slots per queue, so that a queue can load one tile while another is computed
TILE = 24576  # elements: 2 queues x 1 slot x 48 KiB = 96 KiB: half of the 192 KiB UB is idle


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
    # TODO (5 lines): y = Hard-Swish(x) (the formula is in hard_swish's docstring) with vector instructions
    # on UB tensors, one instruction per step of the formula; engine/aicore/vector_ops.py holds the vector API.
    out_q.enque(y_local)
    in_q.free_tensor(x_local)


def copy_out(y_gm, out_q, count):
    y_local = out_q.deque()
    if _whole(count):
        asc.data_copy(y_gm, y_local, count)
    else:
        asc.data_copy_pad(y_gm, y_local, count)
    out_q.free_tensor(y_local)


# Predict before you run: in the double-buffered kernel, which pipe is busy the longest:
# "MTE2" (loads), "VECTOR" (compute) or "MTE3" (stores)? And with 16 tiles on each of 16 cores instead
# of 8, is the double-buffered kernel still at least 1.5x faster than the single-buffered one: "yes" or "no"?
PREDICTIONS = {"busiest_pipe": None, "many_cores": None}  # TODO
