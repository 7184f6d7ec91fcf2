"""Lesson 3 reference solution: y = relu(a*x + b) with CopyIn / Compute / CopyOut through TQues."""

from engine import asc
from engine.aicore.tiling import balanced_tiling, get_block_range

TILE = 4096  # elements per tile: 8 KiB of fp16 per queue slot


@asc.jit(kernel_type=asc.KernelType.AIV_ONLY)
def relu_axpb(x: asc.GlobalAddress, y: asc.GlobalAddress, total: int, a: float, b: float):
    tiling = balanced_tiling(total, asc.get_block_num())
    start, end = get_block_range(tiling, asc.get_block_idx())
    length = end - start
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
        compute(in_q, out_q, count, a, b)
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
