"""Lesson 2 exercise: split N elements over B blocks, evenly, for an SPMD kernel.

The host computes a Tiling (compute_tiling); every block of the kernel, running the same code,
asks get_block_range for its own [start, end) with its block index. Write both: every element must
belong to exactly one block, block sizes may differ by at most one, and the kernel below must be
right on 1, 7, 24 and 48 blocks and when there are fewer elements than blocks.
Check it with:  ascendsim lesson check 2

第 2 课练习：把 N 个元素均衡地分给 B 个块，供 SPMD 核函数使用。
主机计算 Tiling（compute_tiling）；核函数的每个块运行同一份代码，用自己的块索引通过 get_block_range 得到
自己的 [start, end)。两个函数都由你实现：每个元素必须恰好属于一个块，各块大小最多相差 1，下面的核函数
在 1、7、24、48 个块上，以及元素少于块数时都必须正确。
检查：ascendsim lesson check 2
"""

from dataclasses import dataclass

from engine import asc


@dataclass(frozen=True)
class Tiling:
    total: int  # N: elements to process
    num_blocks: int  # B: blocks launched
    base_chunk: int  # elements every block gets
    remainder: int  # the first `remainder` blocks get one element more


def compute_tiling(total: int, num_blocks: int) -> Tiling:
    """Host side: split `total` elements over `num_blocks` blocks."""
    # TODO (about 2 lines): fill base_chunk and remainder so that the block sizes add up to `total`
    # and no two blocks differ by more than one element.
    return Tiling(total, num_blocks, 0, 0)


def get_block_range(tiling: Tiling, block_idx: int) -> tuple[int, int]:
    """Device side: [start, end) of the elements block `block_idx` processes."""
    # TODO (about 6 lines): the range of block `block_idx`, with the sizes the Tiling describes: the ranges of
    # blocks 0, 1, 2, ... follow one another with no gap and no overlap and together cover [0, total).
    return 0, 0


TILE = 4096  # elements per UB tile


@asc.jit(kernel_type=asc.KernelType.AIV_ONLY)
def scale_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, tiling: Tiling):
    """z = 2 * x: every block (the same code, SPMD) handles the range its block index selects."""
    start, end = get_block_range(tiling, asc.get_block_idx())
    length = end - start
    if length <= 0:
        return  # more blocks than elements: this one has nothing to do
    x_gm, z_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, length)
    z_gm.set_global_buffer(z + start, length)
    pipe = asc.TPipe()
    in_q, out_q = asc.TQue(asc.TPosition.VECIN, 2), asc.TQue(asc.TPosition.VECOUT, 2)
    pipe.init_buffer(que=in_q, num=2, len=TILE * 2)
    pipe.init_buffer(que=out_q, num=2, len=TILE * 2)
    for offset in range(0, length, TILE):
        count = min(TILE, length - offset)
        x_local = in_q.alloc_tensor(asc.half)
        asc.data_copy_pad(x_local, x_gm[offset:], count)  # any length: padded to 32 B in UB
        in_q.enque(x_local)
        x_local = in_q.deque()
        z_local = out_q.alloc_tensor(asc.half)
        asc.muls(z_local, x_local, 2.0, count)
        out_q.enque(z_local)
        in_q.free_tensor(x_local)
        z_local = out_q.deque()
        asc.data_copy_pad(z_gm[offset:], z_local, count)
        out_q.free_tensor(z_local)


# Predict before you run: ascend910b1 has 48 vector cores. Launching the same work on 49 blocks instead of 48
# makes the kernel "faster", "about the same" or "slower"?
PREDICTIONS = {"second_wave": None}  # TODO
