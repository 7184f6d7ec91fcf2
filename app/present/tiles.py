"""What sits in a buffer slot at a step: which tile of which tensor, and its real numbers.

Nothing here reads the engine's buffers. A slot's content is the last instruction that wrote it,
and that instruction's detail says where its data came from (a GM rectangle, another slot, the
Cube's sources): following those links down to the run's inputs names the tile (``A[128:256,
0:64]``) and recomputes its values with the engine's own arithmetic (:mod:`engine.aicore.cube` for
``mmad`` and ``fixpipe``, :mod:`engine.aicore.vector_math` for vector instructions): the same bytes
the engine's buffers held. It therefore works on fast-path runs, whose on-chip buffers never held
data, and on timing-only runs whose inputs are regenerated from their seed.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from engine.aicore import cube, vector_math
from engine.trace import TraceData
from engine.trace.detail import GM, Instr, Rect

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
        self.k_total = self._k_total()

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
            a = self._origin(core, d.srcs[0], row)
            b = self._origin(core, d.srcs[1], row)
            m, n, _k, _init = d.params
            done = self._k_done(core, row)
            if a is None or b is None:
                return TileRef("C", 0, 0, m, n, "mmad", done, self.k_total)
            return TileRef(self._result_name(), a.row, b.col, m, n, "mmad", done, self.k_total)
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
        if d.op == "mmad":  # the slot held zeros before the first mmad of its sum, as L0C does
            m, n, _k, _init = d.params
            acc = np.zeros((m, n), dtype=np.float32)
            for r in self.mmad_chain(core, row):
                m, n, k, init = self.instr(r).params
                a = self.read(core, self.instr(r).srcs[0], r)
                b = self.read(core, self.instr(r).srcs[1], r)
                cube.mmad(acc[:m, :n], a[:m, :k], b[:k, :n], init)
                if r == row:
                    break
            return acc.astype(dtype, copy=False)
        if d.op in vector_math.OPS:
            count = d.flops
            srcs = [self.read(core, s, row).reshape(-1)[:count] for s in d.srcs]
            return vector_math.evaluate(d.op, srcs, d.params, dtype, count).reshape(1, -1)
        src = self.read(core, d.srcs[0], row)
        if d.op == "load_data" and d.params and d.params[0]:  # LoadData with ifTranspose
            src = src.T
        out = np.zeros(shape, dtype=dtype)
        rows = min(shape[0], src.shape[0])
        cols = min(shape[1], src.shape[1])
        out[:rows, :cols] = cube.fixpipe(src[:rows, :cols], dtype)  # fixpipe converts; pads stay zero
        return out

    def read(self, core: int, rect: Rect, before: int) -> np.ndarray:
        """The values in ``rect`` as an instruction at row ``before`` reads them."""
        if rect.buf == GM:
            return self._read_gm(rect, before)
        w = self.writer(core, rect, before)
        shape = rect_shape(rect)
        if w < 0:
            return np.zeros(shape, dtype=_np_dtype(rect.dtype))
        return _extract(self.instr(w).dst, self.values(core, w), rect)

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
