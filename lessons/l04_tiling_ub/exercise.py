"""Lesson 4 exercise: the host's tile plan of relu(a*x + b) under the UB's capacity.

A vector core has 192 KiB of UB. The kernel below keeps `queues` queues of one tile each (x in, y out).
Write plan_tiles: the tile length (in elements) that fits, obeys DataCopy's 32-byte rule and needs the
fewest loop iterations, the number of iterations, and the length of the last (tail) tile. The host's tiling
function (the lesson's, in scenario.py) calls it for each core's share and writes the plan into ReluTilingData,
which the kernel reads: the kernel works out no size itself. The check tries ten cases (fp16, fp32, int8,
2 to 4 queues, lengths that are not multiples of anything) and runs the kernel with your plans.
Check it with:  ascendsim lesson check 4

第 4 课练习：在 UB 容量限制下为 relu(a*x + b) 计算主机侧的分块方案。
一个向量核有 192 KiB 的 UB。下面的核函数使用 queues 个队列（输入 x、输出 y），每个队列放一个分块。
实现 plan_tiles：给出能放进 UB、满足 DataCopy 的 32 字节规则、且循环次数最少的分块长度（元素个数），循环次数，
以及最后一个（尾）分块的长度。主机的 tiling 函数（本课提供，在 scenario.py 中）为每个核负责的数据调用它，并把方案
写进核函数读取的 ReluTilingData：核函数自己不计算任何大小。检查程序会尝试十种情况（fp16、fp32、int8，2 到 4 个队列，
长度不是任何数的整数倍），并用你的方案运行核函数。
检查：ascendsim lesson check 4
"""

from dataclasses import dataclass

from engine import asc

BLOCK_BYTES = 32  # DataCopy moves whole 32-byte data blocks between GM and UB


@dataclass(frozen=True)
class TilePlan:
    tile_length: int  # elements per full tile
    tile_count: int  # loop iterations
    tail_length: int  # elements in the last tile (== tile_length when it divides evenly)


def plan_tiles(length: int, ub_bytes: int, dtype_bytes: int, queues: int) -> TilePlan:
    """The fewest tiles for ``length`` elements when ``queues`` queues of one tile each share the UB."""
    # TODO (about 5 lines): the plan with the longest tile such that every queue's tile fits the UB at the same
    # time and a full tile is whole BLOCK_BYTES data blocks; the tiles must cover `length` exactly, the last
    # one never empty.
    return TilePlan(1024, 1, length)


class ReluTilingData(
    asc.TilingData
):  # BEGIN_TILING_DATA_DEF(ReluTilingData): filled by the host (scenario.relu_tiling)
    former_num = asc.Field(asc.uint32)  # big cores first (lesson 2's split)
    former_length = asc.Field(asc.uint32)
    tail_length = asc.Field(asc.uint32)
    tile_length = asc.Field(asc.uint32)  # from plan_tiles
    former_tile_num = asc.Field(asc.uint32)  # a big core's loop iterations and last tile
    former_last_tile = asc.Field(asc.uint32)
    tail_tile_num = asc.Field(asc.uint32)  # a small core's loop iterations and last tile
    tail_last_tile = asc.Field(asc.uint32)
    a = asc.Field(asc.float32)
    b = asc.Field(asc.float32)


@asc.jit(kernel_type=asc.KernelType.AIV_ONLY)
def relu_axpb(x: asc.GlobalAddress, y: asc.GlobalAddress, tiling: asc.TilingAddress):
    """y = relu(a*x + b), tile by tile, as the host's tiling says: no tile size is worked out here."""
    t = asc.get_tiling_data(tiling)
    idx = asc.get_block_idx()
    if idx < t.former_num:  # a big core
        start, tiles, last = idx * t.former_length, t.former_tile_num, t.former_last_tile
    else:
        start = t.former_num * t.former_length + (idx - t.former_num) * t.tail_length
        tiles, last = t.tail_tile_num, t.tail_last_tile
    length = (tiles - 1) * t.tile_length + last
    x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, length)
    y_gm.set_global_buffer(y + start, length)
    pipe = asc.TPipe()
    in_q, out_q = asc.TQue(asc.TPosition.VECIN, 1), asc.TQue(asc.TPosition.VECOUT, 1)  # one tile per queue
    pipe.init_buffer(que=in_q, num=1, len=t.tile_length * asc.half.sizeof())
    pipe.init_buffer(que=out_q, num=1, len=t.tile_length * asc.half.sizeof())
    for i in range(tiles):
        count = t.tile_length if i < tiles - 1 else last
        x_local = in_q.alloc_tensor(asc.half)
        asc.data_copy(x_local, x_gm[i * t.tile_length :], count)
        in_q.enque(x_local)
        x_local = in_q.deque()
        y_local = out_q.alloc_tensor(asc.half)
        asc.muls(y_local, x_local, t.a, count)
        asc.adds(y_local, y_local, t.b, count)
        asc.relu(y_local, y_local, count)
        out_q.enque(y_local)
        in_q.free_tensor(x_local)
        y_local = out_q.deque()
        asc.data_copy(y_gm[i * t.tile_length :], y_local, count)
        out_q.free_tensor(y_local)


# Predict before you run: on one core, with tiles half as long (twice the loop iterations), is the
# kernel "faster", "slower" or "about the same"?
PREDICTIONS = {"halve_tile": None}  # TODO
