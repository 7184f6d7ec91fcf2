"""What sits in a buffer slot at a step: which tile of which tensor, and its real numbers.

Nothing here reads the engine's buffers. A slot's content is what the instructions that wrote it left
(the last one, or several: L0A is often loaded a row of fractals at a time), and each instruction's
detail says where its data came from (a GM rectangle, another slot, the Cube's sources): following
those links down to the run's inputs names the tile (``A[128:256, 0:64]``) and recomputes its values
with the engine's own arithmetic (:mod:`engine.aicore.cube` for ``mmad`` and ``fixpipe``,
:mod:`engine.aicore.vector_math` for vector instructions) and layouts (:mod:`engine.aicore.layout`: a
slot of L1 or L0 holds fractals in the order the hardware keeps them): the same bytes the engine's
buffers held (which fractal of which tile sits where is :mod:`app.present.fractals`). It therefore works
on fast-path runs, whose on-chip buffers never held data, and on timing-only runs whose inputs are
regenerated from their seed.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from engine.aicore import cube, layout, vector_math
from engine.aicore.layout import FRACTAL_ROWS, Format
from engine.trace import TraceData
from engine.trace.detail import GM, Fixpipe, Instr, Load2D, Load3D, Nd2Nz, Rect

from .fractals import FractalMap, SlotFractals, slot_fractals, writes_before
from .index import TraceIndex

_MEMO_ENTRIES = 4096
_NONE = np.zeros(0, dtype=np.int64)
_COMPOSE_LIMIT = 4096  # GM writers composed into one read, at most


@dataclass(frozen=True)
class TileRef:
    """A tile named by where its data comes from: ``tensor[row:row+rows, col:col+cols]``."""

    tensor: str
    row: int
    col: int
    rows: int
    cols: int
    op: str = ""  # the instruction that produced the slot's content
    k_done: int = 0  # an accumulating L0C tile: K columns summed so far (of k_total)
    k_total: int = 0
    flat: bool = False  # a 1-D tensor: named by its element range (``x[0:2048]``)

    def label(self) -> str:
        if self.flat and self.rows == 1:
            return f"{self.tensor}[{self.col}:{self.col + self.cols}]"
        text = f"{self.tensor}[{self.row}:{self.row + self.rows}, {self.col}:{self.col + self.cols}]"
        if self.k_total:
            text += f" k {self.k_done}/{self.k_total}"
        return text

    def to_dict(self) -> dict:
        return {**self.__dict__, "label": self.label()}


def rect_shape(r: Rect) -> tuple[int, int]:
    return r.rows, r.row_bytes // r.itemsize


def _np_dtype(name: str) -> np.dtype:
    return np.dtype(name)


class TileResolver:
    """Names and values of tiles, from a trace, its index and the run's GM inputs (bytes per allocation)."""

    def __init__(
        self,
        t: TraceData,
        index: TraceIndex,
        gm: dict,
        inputs: dict[int, np.ndarray] | None,
        labels: dict[int, str] | None = None,
    ) -> None:
        self.t = t
        self.index = index
        self.gm = gm  # allocation ident -> GmTensor (names and shapes)
        self.labels = labels or {}  # allocation ident -> kernel parameter name, for buffers the program never named
        self.inputs = inputs  # allocation ident -> initial bytes (uint8), or None: values unavailable
        self._values: OrderedDict[int, np.ndarray] = OrderedDict()
        self._tiles: dict[tuple[int, int], TileRef | None] = {}
        self._slots: dict[tuple, SlotFractals | None] = {}
        self.k_total = self._k_total()
        self.fractals = FractalMap(t, index, lambda core, row: self.mmad_chain(core, row)[0])

    # -- which tile -------------------------------------------------------------------------------
    def instr(self, row: int) -> Instr:
        return self.t.detail_of(row)

    def writer(self, core: int, rect: Rect, before: int) -> int:
        """The write into the slot holding ``rect`` on ``core`` that had landed when row ``before`` started
        (the data an instruction at ``before`` reads), or -1."""
        effects = self.index.writer_index(core).get((rect.buf, rect.owner & 0xFFFF, rect.slot & 0xFFFF))
        if effects is None:
            return -1
        return effects.last(int(self.t.start[before]), before - 1)

    def tile_of(self, core: int, row: int) -> TileRef | None:
        """The tile an instruction row wrote, named by its origin in a GM tensor."""
        key = (core, row)
        if key in self._tiles:
            return self._tiles[key]
        found = self._tiles[key] = self._tile_of(core, row)
        if len(self._tiles) > _MEMO_ENTRIES:
            self._tiles.pop(next(iter(self._tiles)))
        return found

    def _tile_of(self, core: int, row: int) -> TileRef | None:
        d = self.instr(row)
        if not isinstance(d, Instr) or d.dst is None:
            return None
        if d.op == "mmad":
            m, n, _k, _init = d.params
            done = self._k_done(core, row)
            corner = self._result_corner(core, d, row)
            if corner is None:
                return TileRef("C", 0, 0, m, n, "mmad", done, self.k_total)
            return TileRef(self._result_name(), *corner, m, n, "mmad", done, self.k_total)
        if isinstance(d.params, Load2D | Load3D):
            found = self.fractals.written(core, row)
            ref = self._span(core, found[1], d.op) if found is not None else None
            if ref is not None:
                return ref
        if d.dst.buf == GM:
            return self.gm_ref(d.dst, d.op)
        src = d.srcs[0] if d.srcs else None
        if src is None:
            return None
        if src.buf != GM:  # computed on chip: named by where it goes, when a store takes it to GM (y, not x)
            store = self.index.next_store(core, (d.dst.buf, d.dst.owner & 0xFFFF, d.dst.slot & 0xFFFF), row)
            if store >= 0:
                return self.gm_ref(self.instr(store).dst, d.op)
        ref = self._origin(core, src, row) if src.buf != GM else self.gm_ref(src, d.op)
        if ref is None:
            return None
        return TileRef(ref.tensor, ref.row, ref.col, ref.rows, ref.cols, d.op, ref.k_done, ref.k_total, ref.flat)

    def _span(self, core: int, tags: np.ndarray, op: str) -> TileRef | None:
        """The tile a set of fractals covers (their bounding box in the tile their copy brought to L1)."""
        src = tags[:, layout.SRC]
        if not len(tags) or (src < 0).any() or (src != src[0]).any():
            return None
        base = self.tile_of(core, int(src[0]))
        if base is None:
            return None
        c0_ = self.fractal_cols(int(src[0]))
        r0, c0 = int(tags[:, layout.R1].min()), int(tags[:, layout.C1].min())
        rows = min(FRACTAL_ROWS * (int(tags[:, layout.R1].max()) - r0 + 1), base.rows - FRACTAL_ROWS * r0)
        cols = min(c0_ * (int(tags[:, layout.C1].max()) - c0 + 1), base.cols - c0_ * c0)
        return TileRef(base.tensor, base.row + FRACTAL_ROWS * r0, base.col + c0_ * c0, rows, cols, op)

    def fractal_cols(self, row: int) -> int:
        """Columns of one fractal of what write ``row`` left: 16 in L0C, else 32 bytes of its type."""
        d = self.instr(row)
        return layout.L0C_C0 if d.op == "mmad" else layout.c0(d.dst.itemsize)

    def slot_writes(self, core: int, writer: int, since: int) -> list[int]:
        """The writes into ``writer``'s slot from row ``since`` (exclusive) to ``writer``, in landing order."""
        d = self.instr(writer).dst
        effects = self.index.writer_index(core)[(d.buf, d.owner & 0xFFFF, d.slot & 0xFFFF)]
        rows = effects.rows[: effects.position(writer) + 1]
        return [int(r) for r in rows[rows > since]]

    def slot_content(self, core: int, writer: int, since: int, with_values: bool = False) -> SlotFractals | None:
        """The fractals a slot of L1 / L0 holds after ``writer`` (the writes since row ``since``), or None when it
        holds no single tile's fractals (row-major data, a UB slot)."""
        key = (core, writer, since, with_values)
        found = self._slots.get(key, False)
        if found is not False:
            return found
        writes = self.slot_writes(core, writer, since)
        if self.instr(writer).op == "mmad":
            writes = [writer]  # an accumulation rewrites the whole result
        dsts = [self.instr(w).dst for w in writes]
        lo, hi = min(r.start for r in dsts), max(r.end for r in dsts)
        last = dsts[-1]
        region = Rect(last.buf, last.owner, last.slot, lo, 1, hi - lo, hi - lo, last.dtype, last.position)
        found = self._slots[key] = slot_fractals(self, core, writes, region, with_values)
        if len(self._slots) > _MEMO_ENTRIES:
            self._slots.pop(next(iter(self._slots)))
        return found

    def slot_tile(self, core: int, writer: int, since: int) -> TileRef | None:
        """What a slot holds after ``writer``: the tile its fractals make up (L0A loaded a row of fractals at a
        time shows the whole tile), else the tile ``writer`` wrote."""
        if isinstance(self.instr(writer).params, Load2D) and len(self.slot_writes(core, writer, since)) > 1:
            content = self.slot_content(core, writer, since)
            if content is not None:
                return TileRef(*content.tile, op="load_data")
        return self.tile_of(core, writer)

    def slot_format(self, core: int, writer: int, since: int) -> Format | None:
        """The layout a slot of L1 / L0 holds after ``writer`` (None: not one tile's fractals), from the write's
        own detail when it alone filled the slot, else from the fractals the writes left."""
        key = (core, writer, since, "format")
        if key in self._slots:
            return self._slots[key]
        found = self._slots[key] = self._slot_format(core, writer, since)
        return found

    def _slot_format(self, core: int, writer: int, since: int) -> Format | None:
        d = self.instr(writer)
        p = d.params
        if d.op == "mmad" or isinstance(p, Load3D | Nd2Nz) or (isinstance(p, Fixpipe) and not p.nz2nd):
            found = self.fractals.written(core, writer)
            if found is None or (found[1][:, layout.SRC] < 0).any():
                return None
            return {"ZN": Format.ZN, "ZZ": Format.ZZ}.get(getattr(p, "order", ""), Format.NZ)
        if not isinstance(p, Load2D):
            return None
        content = self.slot_content(core, writer, since)
        return content.format if content is not None else None

    def read_region(self, core: int, region: Rect, writes: list[int]) -> np.ndarray:
        """The elements of ``region`` (one run of bytes) after ``writes`` (ascending), zeros where none wrote."""
        raw = np.zeros(region.row_bytes, dtype=np.uint8)
        for w in writes:
            _paint(raw, region.start, self.instr(w).dst, self.values(core, w))
        return raw.view(_np_dtype(region.dtype))

    def _result_corner(self, core: int, d: Instr, row: int) -> tuple[int, int] | None:
        """(row, column) of C an mmad computes: A's rows (from its ZZ operand) and B's columns (from its ZN
        operand), whichever way the tiles were stored in GM (B as [N, K] reads as transposed)."""
        m, n, k, _init = d.params
        c0_ = layout.c0(d.srcs[0].itemsize)
        m1, n1, k1 = layout.count(m, FRACTAL_ROWS), layout.count(n, FRACTAL_ROWS), layout.count(k, c0_)
        a = self.fractals.read(core, d.srcs[0], row)[: m1 * k1]
        b = self.fractals.read(core, d.srcs[1], row)[: k1 * n1]
        a_ways = [t for t, f in layout.readings(a, m1, k1) if f == Format.ZZ]
        b_ways = [t for t, f in layout.readings(b, k1, n1) if f == Format.ZN]
        if not a_ways or not b_ways:
            return None
        a_ref, b_ref = self._span(core, a, "mmad"), self._span(core, b, "mmad")
        if a_ref is None or b_ref is None:
            return None
        return (a_ref.col if a_ways[0] else a_ref.row), (b_ref.row if b_ways[0] else b_ref.col)

    def _origin(self, core: int, rect: Rect, before: int) -> TileRef | None:
        """Where the data in on-chip ``rect`` (read at row ``before``) came from, down to GM."""
        if rect.buf == GM:
            return self.gm_ref(rect, "")
        w = self.writer(core, rect, before)
        if w < 0:
            return None
        base = self.tile_of(core, w)
        if base is None:
            return None
        wd = self.instr(w).dst
        dr, dc = _offset(wd, rect)
        rows, cols = rect_shape(rect)
        return TileRef(
            base.tensor, base.row + dr, base.col + dc, rows, cols, base.op, base.k_done, base.k_total, base.flat
        )

    def gm_ref(self, rect: Rect, op: str) -> TileRef:
        """The tile of a GM tensor that ``rect`` covers, named by the tensor (``A[0:128, 0:64]``); a buffer the
        program never named is named by the kernel parameter it was passed as, by element range (``x[0:2048]``)."""
        info = self.gm.get(rect.owner)
        name = info.name if info is not None else self.labels.get(rect.owner, f"GM#{rect.owner}")
        base = info.offset if info is not None else 0
        if (len(info.shape) == 1) if info is not None else rect.rows == 1:
            return TileRef(name, 0, (rect.start - base) // rect.itemsize, rect.rows, rect.cols, op, flat=True)
        row, col_bytes = divmod(rect.start - base, rect.stride)  # an unnamed buffer: rows of the copy's pitch
        return TileRef(name, row, col_bytes // rect.itemsize, rect.rows, rect.cols, op)

    def _result_name(self) -> str:
        outputs = [g.name for g in self.gm.values() if g.name == "C"]
        return outputs[0] if outputs else "C"

    def _k_total(self) -> int:
        a = next((g for g in self.gm.values() if g.name == "A"), None)
        return a.shape[1] if a is not None and len(a.shape) == 2 else 0

    def _accumulation(self, core: int, row: int) -> tuple:
        """(the slot's writes, position of ``row``, position where its sum started, K summed) of an mmad row."""
        d = self.instr(row)
        effects = self.index.writer_index(core)[(d.dst.buf, d.dst.owner & 0xFFFF, d.dst.slot & 0xFFFF)]
        first, k_done = effects.accumulations(self.index.tables, self.index.dindex)
        at = effects.position(row)
        return effects, at, int(first[at]), int(k_done[at])

    def _k_done(self, core: int, row: int) -> int:
        return self._accumulation(core, row)[3]

    def mmad_chain(self, core: int, row: int) -> list[int]:
        """The mmads whose sum the L0C tile written at ``row`` holds, oldest first."""
        effects, at, first, _k = self._accumulation(core, row)
        return [int(r) for r in effects.rows[first : at + 1]]

    # -- the numbers --------------------------------------------------------------------------------
    def values(self, core: int, row: int) -> np.ndarray:
        """The values an instruction row wrote to its destination (rows x cols, in its dtype)."""
        if self.inputs is None:
            raise LookupError("this run's inputs are not available, so tile values cannot be derived")
        found = self._values.get(row)
        if found is not None:
            self._values.move_to_end(row)
            return found
        found = self._compute(core, row)
        found.setflags(write=False)
        self._values[row] = found
        if len(self._values) > _MEMO_ENTRIES:
            self._values.popitem(last=False)
        return found

    def _compute(self, core: int, row: int) -> np.ndarray:
        d = self.instr(row)
        dst = d.dst
        shape = rect_shape(dst)
        dtype = _np_dtype(dst.dtype)
        p = d.params
        if d.op == "mmad":  # C as NZ fractals in L0C, summed from the mmad that started the sum
            acc = None
            for r in self.mmad_chain(core, row):
                ins = self.instr(r)
                m, n, k, init = ins.params
                c0_ = layout.c0(ins.srcs[0].itemsize)
                m1, n1, k1 = layout.count(m, FRACTAL_ROWS), layout.count(n, FRACTAL_ROWS), layout.count(k, c0_)
                if acc is None:
                    acc = np.zeros((m1 * FRACTAL_ROWS, n1 * FRACTAL_ROWS), dtype=np.float32)
                a = layout.zz_matrix(self.read(core, ins.srcs[0], r), m1, k1, c0_)
                b = layout.zn_matrix(self.read(core, ins.srcs[1], r), k1, n1, c0_)
                cube.mmad(acc, a[:, :k], b[:k, :], init)
                if r == row:
                    break
            return layout.nz_rows(acc, FRACTAL_ROWS).reshape(shape).astype(dtype, copy=False)
        if isinstance(p, Nd2Nz):
            return layout.nd2nz(self.read(core, d.srcs[0], row), layout.c0(dst.itemsize), p.rows).reshape(shape)
        if isinstance(p, Load2D):
            src = self.read(core, d.srcs[0], row)
            return layout.load2d(src, p.repeat, (FRACTAL_ROWS, layout.c0(dst.itemsize)), p.transpose).reshape(shape)
        if isinstance(p, Load3D):
            src = self.read(core, d.srcs[0], row)
            return layout.load3d(src, p.rows, p.cols, FRACTAL_ROWS, p.order).reshape(shape)
        if isinstance(p, Fixpipe):
            m1, n1 = layout.count(p.m, FRACTAL_ROWS), layout.count(p.n, FRACTAL_ROWS)
            c = layout.nz_matrix(self.read(core, d.srcs[0], row), m1 * FRACTAL_ROWS, n1, FRACTAL_ROWS)[: p.m, : p.n]
            if p.relu:
                c = np.maximum(c, np.float32(0))
            values = cube.fixpipe(c, dtype)
            if p.nz2nd:
                return values.reshape(shape)
            padded = np.zeros((m1 * FRACTAL_ROWS, n1 * FRACTAL_ROWS), dtype=dtype)
            padded[: p.m, : p.n] = values
            return layout.nz_rows(padded, FRACTAL_ROWS).reshape(shape)
        if d.op in vector_math.OPS:
            count = d.flops
            srcs = [self.read(core, s, row).reshape(-1)[:count] for s in d.srcs]
            return vector_math.evaluate(d.op, srcs, d.params, dtype, count).reshape(1, -1)
        src = self.read(core, d.srcs[0], row)
        out = np.zeros(shape, dtype=dtype)
        rows = min(shape[0], src.shape[0])
        cols = min(shape[1], src.shape[1])
        out[:rows, :cols] = cube.fixpipe(src[:rows, :cols], dtype)  # fixpipe converts; pads stay zero
        return out

    def read(self, core: int, rect: Rect, before: int) -> np.ndarray:
        """The values in ``rect`` as an instruction at row ``before`` reads them: from the last write into its
        slot, or composed from the writes that filled it (bytes no write reached read as zeros)."""
        if rect.buf == GM:
            return self._read_gm(rect, before)
        lo, hi = rect.start, rect.end
        need = _mask(rect, lo, hi)
        chosen = []
        for w in writes_before(self.t, self.index, core, rect, before):
            wd = self.instr(w).dst
            if not chosen and _covers(wd, rect):
                return _extract(wd, self.values(core, w), rect)
            hit = _mask(wd, lo, hi) & need
            if hit.any():
                chosen.append(w)
                need &= ~hit
                if not need.any():
                    break
        raw = np.zeros(hi - lo, dtype=np.uint8)
        for w in reversed(chosen):
            _paint(raw, lo, self.instr(w).dst, self.values(core, w))
        return _rect_view(raw, rect._replace(start=0))

    def _read_gm(self, rect: Rect, before: int) -> np.ndarray:
        effects = self.index.gm_writers().get(rect.owner)
        exact = None
        if effects is not None:
            landed = effects.last(int(self.t.start[before]), before - 1)
            prior = effects.rows[: int(np.flatnonzero(effects.rows == landed)[0]) + 1] if landed >= 0 else _NONE
            for w in prior[::-1][:_COMPOSE_LIMIT]:
                wd = self.instr(int(w)).dst
                if wd.start <= rect.start and rect.end <= wd.end and wd.stride == rect.stride:
                    exact = int(w)
                    break
            if exact is None and len(prior):
                return self._compose_gm(rect, prior[-_COMPOSE_LIMIT:])
        if exact is not None:
            core = int(self.index.core_of_lane[self.t.lane[exact]])
            return _extract(self.instr(exact).dst, self.values(core, exact), rect)
        return _rect_view(self._initial(rect.owner), rect)

    def _compose_gm(self, rect: Rect, writers: np.ndarray) -> np.ndarray:
        """GM bytes under ``rect`` after the given writes (in row order) over the initial contents."""
        raw = self._initial(rect.owner).copy()
        for writer in writers:
            w = int(writer)
            wd = self.instr(w).dst
            if wd.end <= rect.start or wd.start >= rect.end:
                continue
            core = int(self.index.core_of_lane[self.t.lane[w]])
            raw[wd.start : wd.end] = _region_bytes(wd, self.values(core, w), raw[wd.start : wd.end])
        return _rect_view(raw, rect)

    def _initial(self, owner: int) -> np.ndarray:
        found = self.inputs.get(owner)
        if found is None:
            info = self.gm.get(owner)
            size = info.offset + int(np.prod(info.shape)) * _np_dtype(info.dtype).itemsize if info else 0
            found = self.inputs[owner] = np.zeros(size, dtype=np.uint8)
        return found


def _covers(outer: Rect, inner: Rect) -> bool:
    """Does ``outer`` hold every byte of ``inner`` (so ``inner`` reads from ``outer``'s values alone)?"""
    if inner.start < outer.start or inner.end > outer.end:
        return False
    if outer.rows == 1 or outer.stride == outer.row_bytes:
        return True
    _row, col = divmod(inner.start - outer.start, outer.stride)
    return col + inner.row_bytes <= outer.row_bytes and (inner.rows == 1 or inner.stride == outer.stride)


def _mask(r: Rect, lo: int, hi: int) -> np.ndarray:
    """Which bytes of [lo, hi) ``r`` covers."""
    out = np.zeros(hi - lo, dtype=bool)
    for s in (r.start - lo + np.arange(r.rows) * r.stride).tolist():
        a, b = max(s, 0), min(s + r.row_bytes, hi - lo)
        if a < b:
            out[a:b] = True
    return out


def _paint(raw: np.ndarray, lo: int, region: Rect, values: np.ndarray) -> None:
    """Write ``values`` (the rows of ``region``) into ``raw``, the bytes from ``lo`` on, where they overlap."""
    rows = np.ascontiguousarray(values).view(np.uint8).reshape(region.rows, region.row_bytes)
    for i, s in enumerate((region.start - lo + np.arange(region.rows) * region.stride).tolist()):
        a, b = max(s, 0), min(s + region.row_bytes, len(raw))
        if a < b:
            raw[a:b] = rows[i, a - s : b - s]


def _offset(outer: Rect, inner: Rect) -> tuple[int, int]:
    """(rows, columns) from ``outer``'s first element to ``inner``'s, in ``inner``'s element size."""
    delta = inner.start - outer.start
    if outer.rows == 1 or outer.stride == 0:
        return 0, delta // inner.itemsize
    dr, db = divmod(delta, outer.stride)
    return dr, db // inner.itemsize


def _region_bytes(region: Rect, values: np.ndarray, under: np.ndarray | None = None) -> np.ndarray:
    """The bytes from ``region.start`` to ``region.end`` once ``values`` are written to ``region``
    (gaps between strided rows keep ``under``, or zeros)."""
    rows = np.ascontiguousarray(values).view(np.uint8).reshape(region.rows, region.row_bytes)
    if region.rows == 1 or region.stride == region.row_bytes:
        return rows.reshape(-1)
    raw = np.zeros(region.end - region.start, dtype=np.uint8) if under is None else under.copy()
    target = np.lib.stride_tricks.as_strided(raw, (region.rows, region.row_bytes), (region.stride, 1))
    target[:] = rows
    return raw


def _extract(region: Rect, values: np.ndarray, rect: Rect) -> np.ndarray:
    """The values of ``rect`` (inside ``region``) given the ``values`` written to ``region``."""
    return _rect_view(_region_bytes(region, values), rect._replace(start=rect.start - region.start))


def _rect_view(raw: np.ndarray, rect: Rect) -> np.ndarray:
    """The ``rows x cols`` values of ``rect`` in a byte array."""
    if len(raw) < rect.end:
        raw = np.concatenate([raw, np.zeros(rect.end - len(raw), dtype=np.uint8)])
    flat = raw[rect.start : rect.end]
    rows = np.lib.stride_tricks.as_strided(flat, (rect.rows, rect.row_bytes), (rect.stride, 1), writeable=False)
    return np.ascontiguousarray(rows).view(_np_dtype(rect.dtype))
