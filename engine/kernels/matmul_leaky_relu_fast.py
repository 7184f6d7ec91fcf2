"""The fast path of :func:`engine.kernels.matmul_leaky_relu.matmul_leaky_relu`: same program, each step recorded once.

Each of a block's three cores runs the kernel's own step code (:class:`CubeSide` on the AIC,
:class:`VectorSide` on each AIV) the first time it meets a step's signature, and stamps it afterwards
(:mod:`engine.kernels.stamp`). A Cube step is one base block through L1, L0 and the Cube, and the
fixpipe into a workspace slot; a Vector step is one AIV's half of a base block from the workspace
through UB into C. A step's signature is its size, its workspace slot, whether it waits for the slot
to come back, and the state of its core's queues; a stamped copy moves A's rows and C's with the base
block, B's columns and C's, and the workspace slots with the block. The cross-core flags of a stamped
step go to the group recorder in order, so the three cores take turns exactly as the real code makes
them (and the recorder would diagnose a deadlock exactly as it does there).

The numbers: ``C = fp16(LeakyReLU(A @ B))`` from one fp32 product per launch (as the matmul fast path
computes it), written when the last block has run, each workspace slot left
holding the fp32 base block it held last.

The deliberately broken variants (``skip_wait``, ``skip_set``: the debugging lesson's race and
deadlock), launches whose buffers share an allocation and, with numerics, products too large to keep
in fp32 run the kernel's code call by call: their
findings come from every block's own instructions. ``tests/test_fast_path.py`` compares both paths
on every trace column and every finding.
"""

from __future__ import annotations

import numpy as np

from engine import asc
from engine.aicore.context import current
from engine.aicore.matmul_tiling import TCubeTiling
from engine.kernels.matmul import base_blocks
from engine.kernels.matmul_fast import PRODUCT_LIMIT_BYTES, gm_matrix, launch_product
from engine.kernels.matmul_leaky_relu import SLOTS, CubeSide, VectorSide, block_workspace, matmul_leaky_relu
from engine.kernels.stamp import gm_key, queue_state, record_or_stamp


def record_matmul_leaky_relu(
    a: asc.GlobalAddress,
    b: asc.GlobalAddress,
    c: asc.GlobalAddress,
    workspace: asc.GlobalAddress,
    tiling: TCubeTiling,
    alpha: float,
    skip_wait: bool = False,
    skip_set: bool = False,
):
    """Drop-in for ``matmul_leaky_relu``'s body when the simulation runs the fast path."""
    ctx = current()
    allocs = {ctx.gm_allocation(x.ptr).ident for x in (a, b, c, workspace)}
    too_large = ctx.numerics and tiling.M * tiling.N * 4 > PRODUCT_LIMIT_BYTES  # no fp32 product kept
    if skip_wait or skip_set or len(allocs) < 4 or too_large:
        return matmul_leaky_relu.fn(a, b, c, workspace, tiling, alpha, skip_wait, skip_set)
    t = tiling
    block = ctx.block_idx
    m0, n0, rows, cols = t.core_region(block)
    if rows == 0 or cols == 0:
        return
    work = block_workspace(workspace, t, block)
    blocks = base_blocks(t, m0, n0, rows, cols)
    slot_bytes = t.baseM * t.baseN * asc.float32.sizeof()
    templates = ctx.launch.scratch.setdefault(("matmul_leaky_relu", ctx.role), {})
    numerics, ctx.numerics = ctx.numerics, False  # the numbers come from one matmul per launch, below
    try:
        if asc.ascend_is_aic():
            side = CubeSide(t, a, b, work)
            keys = gm_key(side.a_gm), gm_key(side.b_gm), gm_key(work)
            for i, blk in enumerate(blocks):
                bm, bn, mr, nc = blk

                def delta(origin: tuple, bm=bm, bn=bn) -> dict:
                    return {
                        keys[0]: (bm - origin[1]) * t.Ka * 2,
                        keys[1]: (bn - origin[2]) * 2,
                        keys[2]: (block - origin[0]) * SLOTS * slot_bytes,
                    }

                signature = (mr, nc, i % SLOTS, i >= SLOTS, queue_state(side.queues))
                step = lambda i=i, blk=blk: side.step(i, blk)  # noqa: E731
                record_or_stamp(ctx, templates, signature, (block, bm, bn), delta, side.queues, step)
            side.drain(len(blocks))
        else:
            side = VectorSide(t, c, work)
            keys = gm_key(side.c_gm), gm_key(work)
            for i, blk in enumerate(blocks):
                bm, bn, mr, nc = blk

                def delta(origin: tuple, bm=bm, bn=bn) -> dict:
                    return {
                        keys[0]: ((bm - origin[1]) * t.N + bn - origin[2]) * 2,
                        keys[1]: (block - origin[0]) * SLOTS * slot_bytes,
                    }

                signature = (mr, nc, i % SLOTS, queue_state(side.queues))
                step = lambda i=i, blk=blk: side.step(i, blk, alpha)  # noqa: E731
                record_or_stamp(ctx, templates, signature, (block, bm, bn), delta, side.queues, step)
    finally:
        ctx.numerics = numerics
    if numerics and ctx.role == 0:
        _block_numerics(ctx, side, work, t, blocks, alpha, (m0, n0, rows, cols), c)


def _block_numerics(ctx, cube: CubeSide, work, t: TCubeTiling, blocks: list, alpha: float, region, c) -> None:
    """Once the last block has run: C's region of this block and its workspace slots, from ``A @ B``."""
    product = launch_product(ctx, cube.a_gm, cube.b_gm, t)
    c_gm = asc.GlobalTensor()
    c_gm.set_global_buffer(c, t.M * t.N)
    out = gm_matrix(ctx, c_gm, t.M, t.N)
    slots = gm_matrix(ctx, work, SLOTS * t.baseM, t.baseN)
    last = {i % SLOTS: blk for i, blk in enumerate(blocks)}  # what each workspace slot holds at the end

    def write() -> None:
        full = product.result()
        m0, n0, rows, cols = region
        x = full[m0 : m0 + rows, n0 : n0 + cols]
        out[m0 : m0 + rows, n0 : n0 + cols] = np.maximum(x, x * np.float32(alpha))
        for slot, (bm, bn, mr, nc) in last.items():
            slots[slot * t.baseM : slot * t.baseM + mr, :nc] = full[bm : bm + mr, bn : bn + nc]

    ctx.launch.after_blocks.append(write)


matmul_leaky_relu.fast_path = record_matmul_leaky_relu
