"""Lesson 2 reference solution: the balanced partition of N elements over B blocks, used by an SPMD kernel."""

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
    return Tiling(total, num_blocks, total // num_blocks, total % num_blocks)


def get_block_range(tiling: Tiling, block_idx: int) -> tuple[int, int]:
    """Device side: [start, end) of the elements block `block_idx` processes."""
    base, rem = tiling.base_chunk, tiling.remainder
    if block_idx < rem:
        start = block_idx * (base + 1)
        return start, start + base + 1
    start = rem * (base + 1) + (block_idx - rem) * base
    return start, start + base


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


PREDICTIONS = {"second_wave": "slower"}
