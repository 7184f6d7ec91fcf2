"""The fast path of :func:`engine.kernels.matmul.matmul_tiled`: same program, recorded once per shape.

Interpreting the kernel's Python code costs a few microseconds per instruction; an 8192^3 matmul
issues millions of instructions, nearly all of them repeats: every base block of the same size,
entered with the queues in the same state, issues exactly the same instructions, except that its
GM reads and writes sit at other addresses. So the fast path

1. runs the real ``compute_base_block`` / ``write_base_block`` for the first base block of each
   (rows, cols, queue state) and keeps the instructions it recorded as a *template*;
2. for every later base block with that signature, stamps the template (:mod:`engine.kernels.stamp`):
   its instructions with the GM tile keys (for L2), the GM rectangles of its moves (their trace
   details) and the GM write rectangles moved to the block's position, the queues in the state the
   template left them in;
3. computes the numbers once per launch, ``A @ B`` in fp32 (the same fp16 products and fp32
   accumulation, in a different summation order): A and B are converted to fp32 in a thread while the
   blocks are recorded and timed, multiplied when they have been, and each block's region of C is
   written then
   (``C[region] = A[rows] @ B[:, cols]`` per region, at once, when the product is too large to keep).

Everything the scheduler and the trace see is identical to the straightforward path: a test runs
both on small shapes and compares programs and timings event for event. Races are checked on each
template (the stamped copies are the same instructions at other addresses).
"""

from __future__ import annotations

import threading

import numpy as np

from engine import asc
from engine.aicore.context import current
from engine.aicore.matmul_tiling import TCubeTiling
from engine.kernels.matmul import (
    CubeQueues,
    base_blocks,
    compute_base_block,
    gm_tensors,
    matmul_tiled,
    write_base_block,
)
from engine.kernels.stamp import gm_key, queue_state, record_or_stamp

PRODUCT_LIMIT_BYTES = 1 << 29  # fp32 products (and copies of A and B) kept per launch up to 512 MiB each


def record_matmul_tiled(
    a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, tiling: TCubeTiling, b_trans: bool = False
):
    """Drop-in for ``matmul_tiled``'s body when the simulation runs the fast path (``b_trans``: B stored [N, K])."""
    ctx = current()
    t = tiling
    m0, n0, rows, cols = t.core_region(ctx.block_idx)
    if rows == 0 or cols == 0:
        return
    a_gm, b_gm, c_gm = gm_tensors(a, b, c, t)
    if len({gm_key(a_gm), gm_key(b_gm), gm_key(c_gm)}) < 3:  # shared allocations do not shift apart
        return matmul_tiled.fn(a, b, c, tiling, b_trans)
    pipe = asc.TPipe()
    q = CubeQueues(pipe, t)
    queues = (q.a1, q.b1, q.a2, q.b2, q.co1)
    out_size = c.dtype.sizeof()
    keys = gm_key(a_gm), gm_key(b_gm), gm_key(c_gm)
    templates = ctx.launch.scratch.setdefault("matmul_templates", {})
    b_col = t.Ka * 2 if b_trans else 2  # B^T: the next column of C is the next row of B
    if ctx.numerics and t.M * t.N * 4 <= PRODUCT_LIMIT_BYTES:
        launch_product(ctx, a_gm, b_gm, t, b_trans)  # its conversions start now, beside the recording
    numerics, ctx.numerics = ctx.numerics, False  # the numbers come from one matmul per launch, below
    try:
        for bm, bn, mr, nc in base_blocks(t, m0, n0, rows, cols):

            def step(bm=bm, bn=bn, mr=mr, nc=nc) -> None:
                compute_base_block(q, t, a_gm, b_gm, bm, bn, mr, nc, b_trans)
                write_base_block(q, c_gm, t.N, bm, bn, mr, nc)

            def delta(origin: tuple, bm=bm, bn=bn) -> dict:
                dm, dn = bm - origin[0], bn - origin[1]
                return {keys[0]: dm * t.Ka * 2, keys[1]: dn * b_col, keys[2]: (dm * t.N + dn) * out_size}

            record_or_stamp(ctx, templates, (mr, nc, queue_state(queues)), (bm, bn), delta, queues, step)
    finally:
        ctx.numerics = numerics
    if numerics:
        _region_numerics(ctx, a_gm, b_gm, c_gm, t, m0, n0, rows, cols, b_trans)


def _as_fp32(ctx, g: asc.GlobalTensor, shape: tuple[int, int]) -> np.ndarray:
    """A read-only fp32 copy of a GM matrix, converted once per launch (when it is not huge)."""
    cache = ctx.launch.scratch.setdefault("fp32", {})
    k = (g.alloc.where, g.alloc.ident, g.byte_offset, shape)
    found = cache.get(k)
    if found is None:
        raw = ctx.gm_bytes(g)[g.byte_offset : g.byte_offset + shape[0] * shape[1] * 2]
        found = raw.view(np.float16).reshape(shape).astype(np.float32)
        if found.nbytes <= PRODUCT_LIMIT_BYTES:
            cache[k] = found
    return found


def _region_numerics(
    ctx, a_gm, b_gm, c_gm, t: TCubeTiling, m0: int, n0: int, rows: int, cols: int, b_trans: bool
) -> None:
    """Give C's region of this block its numbers: from ``A @ B`` computed once per launch
    (:func:`launch_product`) when the last block has run; per region, at once, when the
    product is too large to keep."""
    if t.M * t.N * 4 > PRODUCT_LIMIT_BYTES:
        a = _as_fp32(ctx, a_gm, (t.M, t.Ka))
        b = _as_fp32(ctx, b_gm, (t.N, t.Kb)).T if b_trans else _as_fp32(ctx, b_gm, (t.Kb, t.N))
        gm_matrix(ctx, c_gm, t.M, t.N)[m0 : m0 + rows, n0 : n0 + cols] = a[m0 : m0 + rows] @ b[:, n0 : n0 + cols]
        return
    regions = ctx.launch.scratch.get("regions")
    if regions is None:
        regions = ctx.launch.scratch["regions"] = []
        product = launch_product(ctx, a_gm, b_gm, t, b_trans)
        c = gm_matrix(ctx, c_gm, t.M, t.N)

        def write() -> None:
            full = product.result()
            # distinct blocks have disjoint regions (TCubeTiling.core_region): as large as C, they tile it
            if sum(nr * nc for _r0, _c0, nr, nc in regions) == t.M * t.N:
                c[...] = full
                return
            for r0, c0, nr, nc in regions:
                c[r0 : r0 + nr, c0 : c0 + nc] = full[r0 : r0 + nr, c0 : c0 + nc]

        ctx.launch.after_blocks.append(write)
    regions.append((m0, n0, rows, cols))


def gm_matrix(ctx, g: asc.GlobalTensor, rows: int, cols: int) -> np.ndarray:
    """A writable ``rows x cols`` view of GM from a GlobalTensor's start, in its dtype."""
    n = rows * cols * g.dtype.sizeof()
    return ctx.gm_bytes(g)[g.byte_offset : g.byte_offset + n].view(g.dtype.np).reshape(rows, cols)


def launch_product(ctx, a_gm, b_gm, t: TCubeTiling, b_trans: bool = False) -> LaunchProduct:
    """``A @ B`` (fp16 in, fp32 out) of this launch, one per launch and operands."""
    products = ctx.launch.scratch.setdefault("products", {})
    key = (a_gm.alloc.ident, a_gm.byte_offset, b_gm.alloc.ident, b_gm.byte_offset, t.M, t.Ka, t.N, b_trans)
    found = products.get(key)
    if found is None:
        a = ctx.gm_bytes(a_gm)[a_gm.byte_offset : a_gm.byte_offset + t.M * t.Ka * 2].view(np.float16)
        b = ctx.gm_bytes(b_gm)[b_gm.byte_offset : b_gm.byte_offset + t.Kb * t.N * 2].view(np.float16)
        b = b.reshape(t.N, t.Kb).T if b_trans else b.reshape(t.Kb, t.N)
        found = products[key] = LaunchProduct(a.reshape(t.M, t.Ka), b)
    return found


class LaunchProduct:
    """``A @ B`` in fp32 from fp16 inputs. The two conversions to fp32 start in a thread of their own
    as soon as the launch asks for the product (single-threaded numpy that does not hold the interpreter
    lock: they overlap the recording and timing of the blocks); the multiplication runs in ``result()``,
    when the blocks have been timed.

    numpy's matmul (BLAS) uses every core. Measured on a 2-core machine, running it in a thread beside
    the interpreter's recording and timing slowed both by about as much as they overlapped, so the
    multiplication waits and runs alone.
    """

    def __init__(self, a: np.ndarray, b: np.ndarray) -> None:
        self._result: np.ndarray | None = None
        self._fp32: tuple[np.ndarray, np.ndarray] | BaseException | None = None
        self._thread = threading.Thread(target=self._convert, args=(a, b), daemon=True)
        self._thread.start()

    def _convert(self, a: np.ndarray, b: np.ndarray) -> None:
        try:
            self._fp32 = (a.astype(np.float32), b.astype(np.float32))
        except BaseException as exc:  # handed to the thread that asks for the result
            self._fp32 = exc

    def result(self) -> np.ndarray:
        if self._result is None:
            self._thread.join()
            if isinstance(self._fp32, BaseException):
                raise self._fp32
            a, b = self._fp32
            self._result = a @ b
            self._fp32 = None
        return self._result


matmul_tiled.fast_path = record_matmul_tiled
