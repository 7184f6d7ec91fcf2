"""Lesson 4 exercise: the host tiling of relu(a*x + b) under the UB's capacity.

A vector core has 192 KiB of UB. The kernel below keeps `queues` queues of `buffer_num` slots, each
slot one tile. Write plan_tiles: the tile length (in elements) that fits, obeys DataCopy's 32-byte
rule and needs the fewest loop iterations, the number of iterations, and the length of the last
(tail) tile. The check tries ten cases (fp16, fp32, int8, 1 or 2 buffers, 2 to 4 queues, lengths
that are not multiples of anything) and runs the kernel with your plan.
Check it with:  ascendsim lesson check 4

第 4 课练习：在 UB 容量限制下为 relu(a*x + b) 计算主机侧 tiling。
一个向量核有 192 KiB 的 UB。下面的核函数使用 queues 个队列，每个队列 buffer_num 个槽位，每个槽位存放一个分块。
实现 plan_tiles：给出能放进 UB、满足 DataCopy 的 32 字节规则、且循环次数最少的分块长度（元素个数），循环次数，
以及最后一个（尾）分块的长度。检查程序会尝试十种情况（fp16、fp32、int8，1 或 2 个缓冲，2 到 4 个队列，长度
不是任何数的整数倍），并用你的方案运行核函数。
检查：ascendsim lesson check 4
"""

from dataclasses import dataclass

from engine import asc
from engine.aicore.tiling import balanced_tiling, get_block_range

BLOCK_BYTES = 32  # DataCopy moves whole 32-byte blocks between GM and UB


@dataclass(frozen=True)
class TilePlan:
    tile_length: int  # elements per full tile
    tile_count: int  # loop iterations
    tail_length: int  # elements in the last tile (== tile_length when it divides evenly)


def plan_tiles(length: int, ub_bytes: int, dtype_bytes: int, queues: int, buffer_num: int) -> TilePlan:
    """The fewest tiles for `length` elements when `queues` queues of `buffer_num` slots share the UB."""
    # TODO (about 5 lines): the plan with the longest tiles such that every slot of every queue fits the UB
    # at the same time and a full tile is whole BLOCK_BYTES blocks; the tiles must cover `length` exactly.
    return TilePlan(1024, 1, length)


@asc.jit(kernel_type=asc.KernelType.AIV_ONLY)
def relu_axpb(
    x: asc.GlobalAddress, y: asc.GlobalAddress, total: int, tile_length: int, buffer_num: int, a: float, b: float
):
    """y = relu(a*x + b) in tiles of `tile_length` elements; a last, shorter tile goes through data_copy_pad."""
    tiling = balanced_tiling(total, asc.get_block_num())
    start, end = get_block_range(tiling, asc.get_block_idx())
    length = end - start
    if length <= 0:
        return
    x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, length)
    y_gm.set_global_buffer(y + start, length)
    pipe = asc.TPipe()
    in_q = asc.TQue(asc.TPosition.VECIN, buffer_num)
    out_q = asc.TQue(asc.TPosition.VECOUT, buffer_num)
    pipe.init_buffer(que=in_q, num=buffer_num, len=tile_length * asc.half.sizeof())
    pipe.init_buffer(que=out_q, num=buffer_num, len=tile_length * asc.half.sizeof())
    for offset in range(0, length, tile_length):
        count = min(tile_length, length - offset)
        whole = count * asc.half.sizeof() % BLOCK_BYTES == 0
        x_local = in_q.alloc_tensor(asc.half)
        if whole:
            asc.data_copy(x_local, x_gm[offset:], count)
        else:
            asc.data_copy_pad(x_local, x_gm[offset:], count)
        in_q.enque(x_local)
        x_local = in_q.deque()
        y_local = out_q.alloc_tensor(asc.half)
        asc.muls(y_local, x_local, a, count)
        asc.adds(y_local, y_local, b, count)
        asc.relu(y_local, y_local, count)
        out_q.enque(y_local)
        in_q.free_tensor(x_local)
        y_local = out_q.deque()
        if whole:
            asc.data_copy(y_gm[offset:], y_local, count)
        else:
            asc.data_copy_pad(y_gm[offset:], y_local, count)
        out_q.free_tensor(y_local)


# Predict before you run: on one core, with tiles half as long (twice the loop iterations), is the
# kernel "faster", "slower" or "about the same"?
PREDICTIONS = {"halve_tile": None}  # TODO
