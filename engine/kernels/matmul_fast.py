"""The fast path of :func:`engine.kernels.matmul.matmul_tiled`: same program, recorded once per shape.

Interpreting the kernel's Python code costs a few microseconds per instruction; an 8192^3 matmul
issues millions of instructions, nearly all of them repeats: every base block of the same size,
entered with the queues in the same state, issues exactly the same instructions, except that its
GM reads and writes sit at other addresses. So the fast path

1. runs the real ``compute_base_block`` / ``write_base_block`` for the first base block of each
   (rows, cols, queue state) and keeps the instructions it recorded as a *template*;
2. for every later base block with that signature, appends the template's instructions with the GM
   tile keys (for L2), the GM rectangles of its moves (their trace details) and the GM write
   rectangles moved to the block's position, and puts the queues in the state the template left
   them in;
3. computes the numbers once per launch, ``A @ B`` in fp32 (the same fp16 products and fp32
   accumulation, in a different summation order) in a background thread while the blocks are recorded
   and timed, and writes each block's region of C when the last block has run
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
from engine.aicore.program import DETAIL, KEY, Template
from engine.detail import Instr
from engine.kernels.matmul import (
    CubeQueues,
    base_blocks,
    compute_base_block,
    gm_tensors,
    matmul_tiled,
    write_base_block,
)

_CACHE_LIMIT_BYTES = 1 << 29  # fp32 copies of A and B kept per launch up to 512 MiB each


def _queue_state(q: CubeQueues) -> tuple:
    return tuple((que._next, tuple(que._freed), tuple(que._state)) for que in (q.a1, q.b1, q.a2, q.b2, q.co1))


def _set_queue_state(q: CubeQueues, state: tuple) -> None:
    for que, (nxt, freed, slots) in zip((q.a1, q.b1, q.a2, q.b2, q.co1), state, strict=True):
        que._next = nxt
        que._freed = list(freed)
        que._state = list(slots)


class _BlockTemplate:
    """The program of one base block, and where its GM addresses move with the block."""

    def __init__(self, ctx, count: int, first_write: int, m0: int, n0: int, shifts: dict, exit_state: tuple):
        memory = ctx.launch._device.memory
        self.template = Template(ctx.program.tail(count))
        self.m0, self.n0 = m0, n0
        self.exit_state = exit_state
        self.reads = []  # per GM read: (alloc key, offset, rows, row bytes, stride, row shift, col shift)
        for pos in self.template.reads:
            alloc, offset, rows, row_bytes, stride = memory.key_spec(self.template.instrs[pos][KEY])
            self.reads.append((alloc, offset, rows, row_bytes, stride, *shifts[alloc]))
        self.writes = []
        for alloc, start, rows, row_bytes, stride, src in ctx.gm_writes[first_write:]:
            self.writes.append((alloc, start, rows, row_bytes, stride, src, *shifts[alloc]))
        details = ctx.sim.trace.details.items
        self.moves = []  # per GM move (read or write), in order: (its Instr, row shift, col shift)
        for pos in self.template.moves.tolist():
            instr = details[self.template.instrs[pos][DETAIL]]
            gm = instr.dst if instr.dst.buf == 0 else instr.srcs[0]
            self.moves.append((instr, *shifts[("device", gm.owner)]))
        self.read_shifts = [(i, r[5], r[6]) for i, r in enumerate(self.reads)]
        self.move_shifts = [(i, m[1], m[2]) for i, m in enumerate(self.moves)]
        # a copy moved by the same number of bytes reads the same tile: its L2 key and detail are the same
        self._keys: dict[tuple[int, int], int] = {}
        self._details: dict[tuple[int, int], int] = {}

    def _key(self, ctx, i: int, delta: int) -> int:
        """The L2 tile key of GM read ``i`` of a copy moved by ``delta`` bytes."""
        found = self._keys.get((i, delta))
        if found is None:
            alloc, offset, rows, row_bytes, stride, _r, _c = self.reads[i]
            found = ctx.launch._device.memory.tile_key(alloc, offset + delta, rows, row_bytes, stride)
            self._keys[(i, delta)] = found
        return found

    def _moved(self, ctx, i: int, delta: int) -> int:
        """The detail id of GM move ``i`` of a copy moved by ``delta`` bytes."""
        found = self._details.get((i, delta))
        if found is None:
            found = self._details[(i, delta)] = ctx.launch.detail_id(_moved(self.moves[i][0], delta))
        return found

    def stamp(self, ctx, m0: int, n0: int) -> None:
        dm, dn = m0 - self.m0, n0 - self.n0
        keys = [self._key(ctx, i, dm * row_shift + dn * col_shift) for i, row_shift, col_shift in self.read_shifts]
        moved = [self._moved(ctx, i, dm * row_shift + dn * col_shift) for i, row_shift, col_shift in self.move_shifts]
        ctx.program.stamp(self.template, keys, moved)
        ctx.accesses.extend([None] * len(self.template.instrs))
        for alloc, start, rows, row_bytes, stride, src, row_shift, col_shift in self.writes:
            ctx.gm_writes.append((alloc, start + dm * row_shift + dn * col_shift, rows, row_bytes, stride, src))


def _moved(instr: Instr, delta: int) -> Instr:
    """A GM move's detail with its GM rectangle ``delta`` bytes further on."""
    if instr.dst.buf == 0:
        return instr._replace(dst=instr.dst._replace(start=instr.dst.start + delta))
    gm = instr.srcs[0]
    return instr._replace(srcs=(gm._replace(start=gm.start + delta), *instr.srcs[1:]))


def record_matmul_tiled(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, tiling: TCubeTiling):
    """Drop-in for ``matmul_tiled``'s body when the simulation runs the fast path."""
    ctx = current()
    t = tiling
    m0, n0, rows, cols = t.core_region(ctx.block_idx)
    if rows == 0 or cols == 0:
        return
    a_gm, b_gm, c_gm = gm_tensors(a, b, c, t)
    pipe = asc.TPipe()
    q = CubeQueues(pipe, t)
    out_size = c.dtype.sizeof()
    key = lambda g: (g.alloc.where, g.alloc.ident)  # noqa: E731
    shifts = {key(a_gm): (t.Ka * 2, 0), key(b_gm): (0, 2), key(c_gm): (t.N * out_size, out_size)}
    templates = ctx.launch.scratch.setdefault("matmul_templates", {})
    numerics, ctx.numerics = ctx.numerics, False  # the numbers come from one matmul per region, below
    try:
        for bm, bn, mr, nc in base_blocks(t, m0, n0, rows, cols):
            signature = (mr, nc, _queue_state(q))
            template = templates.get(signature)
            if template is None:
                first, first_write = len(ctx.program), len(ctx.gm_writes)
                compute_base_block(q, t, a_gm, b_gm, bm, bn, mr, nc)
                write_base_block(q, c_gm, t.N, bm, bn, mr, nc)
                count = len(ctx.program) - first
                templates[signature] = _BlockTemplate(ctx, count, first_write, bm, bn, shifts, _queue_state(q))
            else:
                template.stamp(ctx, bm, bn)
                _set_queue_state(q, template.exit_state)
    finally:
        ctx.numerics = numerics
    if numerics:
        _region_numerics(ctx, a_gm, b_gm, c_gm, t, m0, n0, rows, cols)


def _as_fp32(ctx, g: asc.GlobalTensor, shape: tuple[int, int]) -> np.ndarray:
    """A read-only fp32 copy of a GM matrix, converted once per launch (when it is not huge)."""
    cache = ctx.launch.scratch.setdefault("fp32", {})
    k = (g.alloc.where, g.alloc.ident, g.byte_offset, shape)
    found = cache.get(k)
    if found is None:
        raw = ctx.gm_bytes(g)[g.byte_offset : g.byte_offset + shape[0] * shape[1] * 2]
        found = raw.view(np.float16).reshape(shape).astype(np.float32)
        if found.nbytes <= _CACHE_LIMIT_BYTES:
            cache[k] = found
    return found


def _region_numerics(ctx, a_gm, b_gm, c_gm, t: TCubeTiling, m0: int, n0: int, rows: int, cols: int) -> None:
    """Give C's region of this block its numbers: from ``A @ B`` computed once per launch in a background
    thread while the blocks are recorded and timed (numpy's matmul runs without the interpreter lock),
    written when the last block has run; per region, at once, when the product is too large to keep."""
    launch = ctx.launch
    if t.M * t.N * 4 > _CACHE_LIMIT_BYTES:
        a = _as_fp32(ctx, a_gm, (t.M, t.Ka))
        b = _as_fp32(ctx, b_gm, (t.Kb, t.N))
        _write_region(ctx, c_gm, t, m0, n0, a[m0 : m0 + rows] @ b[:, n0 : n0 + cols])
        return
    key = (a_gm.alloc.ident, a_gm.byte_offset, b_gm.alloc.ident, b_gm.byte_offset, c_gm.alloc.ident)
    products = launch.scratch.setdefault("products", {})
    found = products.get(key)
    if found is None:
        a = ctx.gm_bytes(a_gm)[a_gm.byte_offset : a_gm.byte_offset + t.M * t.Ka * 2].view(np.float16)
        b = ctx.gm_bytes(b_gm)[b_gm.byte_offset : b_gm.byte_offset + t.Kb * t.N * 2].view(np.float16)
        found = products[key] = (_Product(a.reshape(t.M, t.Ka), b.reshape(t.Kb, t.N)), [])
        launch.after_blocks.append(lambda: _write_regions(ctx, c_gm, t, *found))
    found[1].append((m0, n0, rows, cols))


class _Product:
    """``A @ B`` in fp32 (from fp16 inputs), computed in a thread of its own."""

    def __init__(self, a: np.ndarray, b: np.ndarray) -> None:
        self._result: np.ndarray | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(a, b), daemon=True)
        self._thread.start()

    def _run(self, a: np.ndarray, b: np.ndarray) -> None:
        try:
            self._result = a.astype(np.float32) @ b.astype(np.float32)
        except BaseException as exc:  # handed to the thread that waits for the result
            self._error = exc

    def result(self) -> np.ndarray:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._result


def _write_regions(ctx, c_gm, t: TCubeTiling, product: _Product, regions: list[tuple]) -> None:
    full = product.result()
    for m0, n0, rows, cols in regions:
        _write_region(ctx, c_gm, t, m0, n0, full[m0 : m0 + rows, n0 : n0 + cols])


def _write_region(ctx, c_gm, t: TCubeTiling, m0: int, n0: int, result: np.ndarray) -> None:
    rows, cols = result.shape
    out = ctx.gm_bytes(c_gm)[c_gm.byte_offset : c_gm.byte_offset + t.M * t.N * c_gm.dtype.sizeof()]
    out.view(c_gm.dtype.np).reshape(t.M, t.N)[m0 : m0 + rows, n0 : n0 + cols] = result


matmul_tiled.fast_path = record_matmul_tiled
