"""Lesson 13 scenario: y = |x| * scale over 10 001 fp16 elements on 7 vector cores, tiled on the host in 512-byte
units: 40 units (the last one holds 17 elements) = 5 big cores of 6 units and 2 small cores of 5; the last
core's 1041 elements end 2 bytes into a 32-byte block, so its tile goes in and out through DataCopyPad.

Also the seeded cases of the check, how to draw its hidden cases (``draw_<kind>``, :mod:`lessons.hidden`) and the
truth of the question (a copy-out rounded up to whole 32-byte blocks, run for real).
"""

from __future__ import annotations

import numpy as np

from engine import Simulation, TilingContext, asc
from lessons.hostkit import run_vector_kernel, uniform

SCALE = 0.5  # exact in fp16 and fp32
DTYPES = {2: np.float16, 4: np.float32}
KERNEL_CASES = (  # (name, N, bytes per element, cores): fp16, N never a whole number of 32-byte blocks
    ("main", 100_003, 2, 48),
    ("b7", 10_001, 2, 7),
    ("b24", 77_777, 2, 24),
    ("b1", 4099, 2, 1),
    ("b5", 2571, 2, 5),
)


def _seed(rng: np.random.Generator) -> int:
    return int(rng.integers(10, 1 << 20))


def draw_fp32(rng: np.random.Generator) -> dict:
    """Hidden: 4-byte elements (128 to a 512-byte unit), a length of no whole 32-byte block, on 3 to 48 cores."""
    total = int(rng.integers(5000, 80_000))
    total += 0 if total % 8 else int(rng.integers(1, 8))
    return {"total": total, "size": 4, "cores": int(rng.integers(3, 49)), "seed": _seed(rng)}


def draw_few(rng: np.random.Generator) -> dict:
    """Hidden: fewer 512-byte units than cores (8 to 48 cores): some cores must not be launched."""
    cores = int(rng.integers(8, 49))
    total = int(rng.integers(1, 256 * (cores - 1)))
    total += 0 if total % 16 else 1
    return {"total": total, "size": 2, "cores": cores, "seed": _seed(rng)}


def draw_other_chip(rng: np.random.Generator) -> dict:
    """Hidden: another chip, ascend910b4, whose 40 vector cores the tiling function is told of."""
    total = int(rng.integers(20_000, 200_000))
    total += 0 if total % 16 else int(rng.integers(1, 16))
    return {"total": total, "size": 2, "cores": 40, "seed": _seed(rng), "profile": "ascend910b4"}


def inputs(name: str, total: int, dtype_bytes: int = 2, seed: int | None = None) -> np.ndarray:
    return uniform(sum(map(ord, name)) if seed is None else seed, total, -100.0, 100.0, DTYPES[dtype_bytes])


def expected(x: np.ndarray) -> np.ndarray:
    """The vector unit's arithmetic: |x|, then times the scale (exact: a power of two)."""
    return (np.abs(x) * SCALE).astype(x.dtype)


def tiled(program, total: int, dtype_bytes: int, cores: int) -> TilingContext:
    """The host's tiling of one launch: a fresh context, filled by the program's tiling function."""
    context = TilingContext()
    program.pad_tiling(context, total, dtype_bytes, cores, SCALE)
    return context


def run_case(sim: Simulation, program, total: int, dtype_bytes: int, cores: int, x: np.ndarray, kernel=None):
    """Tile on the host, launch on the block count the tiling chose (x and y exactly N elements), return y."""
    context = tiled(program, total, dtype_bytes, cores)
    raw = context.get_raw_tiling_data()
    kernel = kernel or program.abs_scale
    tensors = (("x", x.shape), ("y", x.shape))
    return run_vector_kernel(
        sim, kernel, [x], total, context.get_block_dim(), raw, out_dtype=DTYPES[dtype_bytes], tensors=tensors
    )


def scenario(sim: Simulation) -> dict:
    from . import solution

    x = inputs("scenario", 10_001)
    y = run_case(sim, solution, x.size, 2, 7, x)
    return {"correct": bool(np.array_equal(y, expected(x)))}


@asc.jit(kernel_type=asc.KernelType.AIV_ONLY)
def _rounded_up(x: asc.GlobalAddress, y: asc.GlobalAddress, tiling: asc.TilingAddress):
    """The question's kernel: the reference, except that every copy-out moves whole 32-byte blocks (rounded up)."""
    from .solution import compute, copy_in

    t = asc.get_tiling_data(tiling)
    idx = asc.get_block_idx()
    start = idx * t.former_length
    length = t.former_length
    if idx >= t.former_num:
        start = t.former_num * t.former_length + (idx - t.former_num) * t.tail_length
        length = t.tail_length
    length = max(0, min(length, t.total_length - start))
    if length == 0:
        return
    dtype = x.dtype
    block = 32 // dtype.sizeof()
    x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, length)
    y_gm.set_global_buffer(y + start)
    pipe = asc.TPipe()
    in_q, out_q = asc.TQue(asc.TPosition.VECIN, 1), asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=in_q, num=1, len=t.tile_length * dtype.sizeof())
    pipe.init_buffer(que=out_q, num=1, len=t.tile_length * dtype.sizeof())
    for offset in range(0, length, t.tile_length):
        count = min(t.tile_length, length - offset)
        copy_in(x_gm[offset:], in_q, count, dtype)
        compute(in_q, out_q, count, t.scale, dtype)
        y_local = out_q.deque()
        asc.data_copy(y_gm[offset:], y_local, -(-count // block) * block)  # whole blocks: past N on the last core
        out_q.free_tensor(y_local)


def truth_round_up() -> str:
    """What the simulator reports when the last tile is written back rounded up to whole 32-byte blocks."""
    from engine.host.acl_codes import ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW

    from . import solution

    sim = Simulation()
    x = inputs("scenario", 10_001)
    run_case(sim, solution, x.size, 2, 7, x, kernel=_rounded_up)
    found = sim.finish().findings
    if any(f.code == ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW for f in found):
        return "a GM write out of bounds"
    if any(f.kind == "race" for f in found):
        return "a race between two cores"
    return "nothing: the extra bytes are padding"
