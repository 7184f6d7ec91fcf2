"""What the matmul fast paths share: base blocks recorded once per signature, numbers once per launch.

A kernel names its fast path where it is declared (``@asc.jit(..., fast_path=...)``, in
:mod:`engine.kernels.matmul` and :mod:`engine.kernels.matmul_leaky_relu`); a simulation runs it
when it may (``Simulation(fast=True)``). Interpreting a kernel's Python costs a few microseconds per
instruction and an 8192^3 matmul issues millions of them, nearly all repeats: every base block of
the same size, entered with the queues in the same state, issues the same instructions at other GM
addresses. So a fast path

1. runs the kernel's own step code (a base block through L1, L0, the Cube and the fixpipe) the
   first time a core meets a step's signature and stamps it afterwards (:func:`stamp_blocks`,
   :mod:`engine.kernels.stamp`), with numerics off: stamped copies move no data; inside a base block
   run for real, its K spans likewise (:func:`span_stamper`: a K loop of 128 steps runs a few);
2. gives the outputs their numbers from :func:`engine.aicore.cube.matmul` on the launch's A and B:
   the same ``mmad`` arithmetic, K step by K step, as each core's K loop, so the same bytes as the
   instruction-level path (:class:`LaunchProduct`: once per launch, when the blocks have been
   recorded and timed; per core region, at once, when the product is too large to keep).

Everything the scheduler and the trace see is the same as on the instruction-level path, and so
are the outputs' bytes: ``tests/test_fast_path.py`` compares both on every trace column, every
finding and every byte of C (and of the LeakyReLU kernel's workspace).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engine import asc
from engine.aicore import cube
from engine.aicore.matmul_tiling import TCubeTiling
from engine.aicore.running import current
from engine.kernels.stamp import gm_key, queue_state, record_or_stamp

PRODUCT_LIMIT_BYTES = 1 << 29  # a launch's product (and its working copies) up to 512 MiB, else per core region


def separate(*addresses: asc.GlobalAddress) -> bool:
    """Do the kernel's GM arguments lie in distinct allocations? (Stamped copies shift each one apart.)"""
    ctx = current()
    allocations = {(found.where, found.ident) for found in (ctx.gm_allocation(x.ptr) for x in addresses)}
    return len(allocations) == len(addresses)


def stamp_blocks(name: str, blocks: list, queues: tuple, strides: list, step: Callable, signature=None) -> None:
    """Run ``step(i, block)`` for each of this core's base ``blocks`` ``(m, n, rows, cols)``: for real the
    first time a step's signature is met, stamped after, with numerics off.

    ``strides``: ``(GM tensor, (per block index, per row of C, per column of C))``, the bytes its
    addresses move by (a stamped step moves that far from the step it copies). The signature is the
    block's size, ``signature(i, block)`` (what else decides its instructions) and the state of ``queues``.
    """
    ctx = current()
    templates = ctx.launch.scratch.setdefault((name, ctx.role), {})
    shift = _shifts(strides)
    numerics, ctx.numerics = ctx.numerics, False  # the numbers come from the launch's product
    try:
        for i, blk in enumerate(blocks):
            at = (ctx.block_idx, blk[0], blk[1])
            extra = signature(i, blk) if signature else ()
            sig = (blk[2], blk[3], *extra, queue_state(queues))
            record_or_stamp(ctx, templates, sig, at, shift(at), queues, lambda i=i, blk=blk: step(i, blk))
    finally:
        ctx.numerics = numerics


def span_stamper(name: str, queues: tuple, strides: list, signature: tuple) -> Callable:
    """``spans`` for :func:`engine.kernels.matmul.compute_base_block`: a function ``(block) -> spans`` where
    ``spans(k0, k1, issue)`` issues the K span ``[k0, k1)`` of base block ``block`` ``(m, n, rows, cols)``: for
    real (``issue()``) the first time its signature is met in the launch, stamped after. The signature: the
    span's length, whether it starts K (the first ``mmad`` initialises L0C), the block's size, ``signature``
    (what else decides the span's instructions) and the state of ``queues``. ``strides``: ``(GM tensor, (per
    row of C, per column of C, per element of K))``, the bytes its addresses move by."""
    ctx = current()
    templates = ctx.launch.scratch.setdefault((name, "span", ctx.role), {})
    shift = _shifts(strides)

    def of_block(blk: tuple) -> Callable:
        m0, n0, rows, cols = blk

        def spans(k0: int, k1: int, issue: Callable) -> None:
            at = (m0, n0, k0)
            sig = (k1 - k0, k0 == 0, rows, cols, *signature, queue_state(queues))
            record_or_stamp(ctx, templates, sig, at, shift(at), queues, issue)

        return spans

    return of_block


def _shifts(strides: list) -> Callable[[tuple], Callable[[tuple], dict]]:
    """``strides``: ``(GM tensor, bytes per unit of each coordinate)``. Returns ``at -> delta_of``, where
    ``delta_of(origin)`` maps each tensor's allocation to the bytes a copy at coordinates ``at`` lies beyond one
    at ``origin`` (what :func:`engine.kernels.stamp.record_or_stamp` stamps with)."""
    keys = [(gm_key(g), per) for g, per in strides]

    def at(where: tuple) -> Callable[[tuple], dict]:
        def delta(origin: tuple) -> dict:
            return {key: sum(s * (x - o) for s, x, o in zip(per, where, origin, strict=True)) for key, per in keys}

        return delta

    return at


def with_region(a_gm, b_gm, t: TCubeTiling, region: tuple, write: Callable, b_trans: bool = False) -> None:
    """Call ``write(values, matrix)`` with C's ``region`` ``(m0, n0, rows, cols)`` of A @ B (fp32) and
    ``matrix(g, rows, cols)``, a writable view of GM tensor ``g``: from the launch's product once every
    block has run, or now, per region, when the product is too large to keep; not at all when the
    simulation runs without numerics. (B is stored [N, K] when ``b_trans``.)"""
    ctx = current()
    if not ctx.numerics:
        return
    devmem = ctx.sim.devmem

    def matrix(g: asc.GlobalTensor, rows: int, cols: int) -> np.ndarray:
        n = rows * cols * g.dtype.sizeof()
        return devmem.view(g.alloc)[g.byte_offset : g.byte_offset + n].view(g.dtype.np).reshape(rows, cols)

    m0, n0, rows, cols = region
    a = matrix(a_gm, t.M, t.Ka)
    b = matrix(b_gm, t.N, t.Kb).T if b_trans else matrix(b_gm, t.Kb, t.N)
    if cube.matmul_bytes(t.M, t.N, t.Ka) > PRODUCT_LIMIT_BYTES:  # too large: this region's part, now
        write(cube.matmul(a[m0 : m0 + rows], b[:, n0 : n0 + cols], t.baseK), matrix)
        return
    products = ctx.launch.scratch.setdefault("products", {})
    key = (gm_key(a_gm), a_gm.byte_offset, gm_key(b_gm), b_gm.byte_offset, t.M, t.Ka, t.N, t.baseK, b_trans)
    product = products.get(key)
    if product is None:
        product = products[key] = LaunchProduct(a, b, t.baseK)
    ctx.launch.after_blocks.append(lambda: write(product.result()[m0 : m0 + rows, n0 : n0 + cols], matrix))


class LaunchProduct:
    """``A @ B`` in fp32 by :func:`engine.aicore.cube.matmul`, computed the first time ``result()`` is
    asked for (when every block has been recorded and timed, so BLAS has the machine's cores)."""

    def __init__(self, a: np.ndarray, b: np.ndarray, k_step: int) -> None:
        self._operands: tuple | None = (a, b, k_step)
        self._result: np.ndarray | None = None

    def result(self) -> np.ndarray:
        if self._result is None:
            self._result = cube.matmul(*self._operands)
            self._operands = None
        return self._result
