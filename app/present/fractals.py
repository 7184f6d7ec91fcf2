"""Which fractal of which tile sits where in an on-chip buffer, at any step: the replay's side of the Cube's
layouts (:mod:`engine.aicore.layout`, the one definition the engine moves its data and tags with).

A write into L1 / L0A / L0B / L0C leaves *tags* in the fractal-sized units of its footprint: per unit, the
row of the copy that brought the tile from GM (or ``ND`` / ``EMPTY``), the fractal's place in that tile and
whether it is stored transposed. They are rebuilt here from the trace's typed details alone, exactly as
the engine moved them, and composed over the writes of a slot (a matrix in L0A is often loaded one row of
fractals at a time). Nothing here reads the engine's buffers; fast-path runs are served too.

:func:`writes_before` is what both the tags and the values (``app/present/tiles.py``) compose: the writes
into a slot that landed by a step, latest first, taken until a region is covered.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from engine.aicore import layout
from engine.aicore.tensor import Buffer
from engine.trace import TraceData
from engine.trace.detail import Fixpipe, Instr, Load2D, Load3D, Nd2Nz, Rect

from .index import TraceIndex

UNITS = {Buffer.L1.value: layout.UNIT, Buffer.L0A.value: layout.UNIT, Buffer.L0B.value: layout.UNIT}
UNITS[Buffer.L0C.value] = layout.L0C_UNIT
_WALK_LIMIT = 4096  # writes into one slot looked back through, at most
_MEMO = 4096


def unit_starts(r: Rect, unit: int) -> np.ndarray:
    """Byte starts of the ``unit``-sized pieces of ``r``, in its order (row by row)."""
    per = max(1, r.row_bytes // unit)
    return (r.start + np.arange(r.rows)[:, None] * r.stride + np.arange(per)[None, :] * unit).reshape(-1)


def writes_before(t: TraceData, index: TraceIndex, core: int, r: Rect, before: int) -> Iterator[int]:
    """The writes into the slot holding ``r`` that had landed when row ``before`` started, latest first."""
    effects = index.writer_index(core).get((r.buf, r.owner & 0xFFFF, r.slot & 0xFFFF))
    if effects is None:
        return
    last = effects.last(int(t.start[before]), before - 1)
    if last < 0:
        return
    pos = effects.position(last)
    for p in range(pos, max(-1, pos - _WALK_LIMIT), -1):
        yield int(effects.rows[p])


class FractalMap:
    """Tags of on-chip writes and of regions at a step, from a trace and its index."""

    def __init__(self, t: TraceData, index: TraceIndex, chain_start: Callable[[int, int], int]) -> None:
        self.t = t
        self.index = index
        self._chain_start = chain_start  # (core, mmad row) -> the row of the mmad that started its sum
        self._memo: OrderedDict[tuple[int, int], tuple | None] = OrderedDict()

    def instr(self, row: int) -> Instr:
        return self.t.detail_of(row)

    # -- what one write left -------------------------------------------------------------------------
    def written(self, core: int, row: int) -> tuple[np.ndarray, np.ndarray] | None:
        """(absolute units, tags) of write ``row``'s destination, or None outside L1 / L0."""
        key = (core, row)
        if key in self._memo:
            self._memo.move_to_end(key)
            return self._memo[key]
        found = self._memo[key] = self._written(core, row)
        if len(self._memo) > _MEMO:
            self._memo.popitem(last=False)
        return found

    def _written(self, core: int, row: int):
        d = self.instr(row)
        if not isinstance(d, Instr) or d.dst is None or d.dst.buf not in UNITS:
            return None
        unit = UNITS[d.dst.buf]
        starts = unit_starts(d.dst, unit)
        units = starts // unit
        p = d.params
        if d.op == "mmad":
            m1, n1 = layout.count(p[0], layout.FRACTAL_ROWS), layout.count(p[1], layout.FRACTAL_ROWS)
            return units, layout.grid_tags(self._chain_start(core, row), m1, n1, "NZ")
        if isinstance(p, Nd2Nz):
            whole = p.rows % layout.FRACTAL_ROWS == 0 and not (starts % unit).any()
            cols = d.dst.rows
            return units, layout.nd2nz_tags(row, p.rows // layout.FRACTAL_ROWS, cols) if whole else _nd(len(units))
        if isinstance(p, Load2D):
            moved = self._source(core, d.srcs[0], row)
            if p.transpose:
                moved[moved[:, layout.SRC] >= 0, layout.T] ^= 1
            return units, moved
        if isinstance(p, Load3D):
            r1, k1 = p.rows // layout.FRACTAL_ROWS, p.cols // layout.FRACTAL_ROWS
            moved = layout.load3d_tags(self._source(core, d.srcs[0], row), r1, k1, p.order)
            moved[moved[:, layout.SRC] < 0, layout.T] = 0
            return units, moved
        if isinstance(p, Fixpipe) and not p.nz2nd:
            whole = not (starts % unit).any()
            m1 = layout.count(p.m, layout.FRACTAL_ROWS)
            n1 = layout.count(p.n, layout.FRACTAL_ROWS)
            return units, layout.nd2nz_tags(row, m1, n1) if whole else _nd(len(units))
        return units, _nd(len(units))  # a row-major copy or store into L1 / L0

    def _source(self, core: int, src: Rect, row: int) -> np.ndarray:
        """The tags of the fractals an L1 -> L0 load reads, in its order (``ND`` where not on a fractal)."""
        starts = unit_starts(src, layout.UNIT)
        if (starts % layout.UNIT).any():
            return _nd(len(starts))
        return self.read_units(core, src, starts // layout.UNIT, row)

    # -- a region at a step ---------------------------------------------------------------------------
    def read(self, core: int, r: Rect, before: int) -> np.ndarray:
        """The tags of the units of on-chip ``r`` as an instruction at row ``before`` finds them."""
        unit = UNITS.get(r.buf)
        if unit is None:
            return layout.tags(0)
        return self.read_units(core, r, unit_starts(r, unit) // unit, before)

    def read_units(self, core: int, r: Rect, units: np.ndarray, before: int) -> np.ndarray:
        out = layout.tags(len(units))
        need = np.ones(len(units), dtype=bool)
        for w in writes_before(self.t, self.index, core, r, before):
            found = self.written(core, w)
            if found is None:
                continue
            w_units, w_tags = found
            at, hit = _lookup(w_units, units)
            hit &= need
            if hit.any():
                out[hit] = w_tags[at[hit]]
                need &= ~hit
                if not need.any():
                    break
        return out


def _lookup(keys: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each of ``wanted``: its position in ``keys`` (the last, where a key repeats) and whether it is there."""
    order = np.argsort(keys, kind="stable")
    ranked = keys[order]
    pos = np.searchsorted(ranked, wanted, side="right") - 1
    hit = pos >= 0
    pos = np.maximum(pos, 0)
    hit &= ranked[pos] == wanted if len(ranked) else np.zeros(len(wanted), dtype=bool)
    return order[pos] if len(ranked) else pos, hit


def _nd(n: int) -> np.ndarray:
    return layout.tags(n, layout.ND)


# -- a slot's content, for the views -------------------------------------------------------------------------
@dataclass(frozen=True)
class SlotFractals:
    """What a slot of L1 / L0 holds, fractal by fractal: its format, the tile the fractals make up (as
    ``(tensor, row, col, rows, cols)`` of the tensor their copy came from), one fractal's shape in storage,
    and per fractal in storage order its place ``(i, j)`` in the tile's grid of fractals and whether it is
    stored transposed; ``values`` is the tile in its logical (row-major) form."""

    format: layout.Format
    tile: tuple  # (tensor, row, col, rows, cols)
    fractal: tuple[int, int]  # rows x cols of one fractal as stored (16 x 16 for fp16)
    grid: tuple[int, int]  # fractal rows x columns of the tile
    places: tuple[tuple[int, int, bool], ...]  # per stored fractal, in storage order: (i, j, transposed)
    starts: tuple[int, ...]  # per stored fractal: its first element's offset from the slot's first element
    values: np.ndarray | None


def slot_fractals(tiles, core: int, writes: list[int], region: Rect, with_values: bool) -> SlotFractals | None:
    """The fractals ``writes`` (ascending) left in ``region`` of L1 / L0, when they are one tile's fractals;
    ``tiles`` is the run's :class:`~app.present.tiles.TileResolver`."""
    unit = UNITS.get(region.buf)
    if unit is None or not writes:
        return None
    found = [tiles.fractals.written(core, w) for w in writes]
    if any(f is None for f in found):
        return None
    all_units = np.concatenate([f[0] for f in found])
    all_tags = np.concatenate([f[1] for f in found])
    first, last = region.start // unit, (region.end - 1) // unit
    latest = len(all_units) - 1 - np.unique(all_units[::-1], return_index=True)[1]  # the last write of each unit
    latest = latest[(all_units[latest] >= first) & (all_units[latest] <= last)]
    units = all_units[latest]
    tag = all_tags[latest].reshape(-1, 4)
    if not len(tag) or (tag[:, layout.SRC] < 0).any() or (tag[:, layout.SRC] != tag[0, layout.SRC]).any():
        return None
    source = int(tag[0, layout.SRC])
    base = tiles.tile_of(core, source)
    if base is None:
        return None
    fr, fc = layout.FRACTAL_ROWS, tiles.fractal_cols(source)
    i, j = tag[:, layout.R1] - tag[:, layout.R1].min(), tag[:, layout.C1] - tag[:, layout.C1].min()
    grid = (int(i.max()) + 1, int(j.max()) + 1)
    ways = layout.readings(tag, *grid)
    fmt = ways[0][1] if ways else layout.Format.MIXED
    r0, c0 = int(tag[:, layout.R1].min()), int(tag[:, layout.C1].min())
    rows = min(fr * grid[0], base.rows - fr * r0)
    cols = min(fc * grid[1], base.cols - fc * c0)
    tile = (base.tensor, base.row + fr * r0, base.col + fc * c0, rows, cols)
    places = tuple(zip(i.tolist(), j.tolist(), (tag[:, layout.T] == 1).tolist(), strict=True))
    itemsize = np.dtype(region.dtype).itemsize
    values = None
    if with_values:
        raw = tiles.read_region(core, region, writes)
        out = np.zeros((fr * grid[0], fc * grid[1]), dtype=raw.dtype)
        for u, (a, b, t) in zip(units.tolist(), places, strict=True):
            at = (u * unit - region.start) // itemsize
            block = raw[at : at + fr * fc]
            out[a * fr : (a + 1) * fr, b * fc : (b + 1) * fc] = block.reshape(fc, fr).T if t else block.reshape(fr, fc)
        values = out[:rows, :cols]
    starts = tuple(((units * unit - region.start) // itemsize).tolist())
    stored = (fc, fr) if places and places[0][2] else (fr, fc)
    return SlotFractals(fmt, tile, stored, grid, places, starts, values)


__all__ = ("UNITS", "FractalMap", "SlotFractals", "slot_fractals", "unit_starts", "writes_before")
