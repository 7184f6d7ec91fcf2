"""The CopyIn / Compute / CopyOut table of one core: for each output tile, when each stage worked on it.

An output tile is one write to GM (a fixpipe or MTE3 store). Its lineage is every instruction whose
data flowed into it: the store's source slot was written by the Cube (or the Vector unit), whose
operands were loaded by MTE1 from L1, which MTE2 filled from GM. The lineage's rows on each pipe
give the tile's cell in that stage's column: first start, last end, number of instructions. Laid
out tile by tile it shows what double buffering buys: with two slots a tile's CopyIn runs while the
previous tile computes; with one, the stages take turns and the pipes idle in between.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.aicore.pipes import LANE_NAMES
from engine.trace.detail import GM, Instr

STAGE_ORDER = ("MTE2", "MTE1", "CUBE", "VECTOR", "FIXP", "MTE3")


@dataclass(frozen=True)
class StageCell:
    start: int
    end: int
    count: int


@dataclass(frozen=True)
class TileRow:
    row: int  # the store that wrote the tile (-1: not issued yet)
    label: str
    cells: dict  # stage (pipe name) -> StageCell
    done: bool


def lineage(replay, core: int, row: int, memo: dict) -> set[int]:
    """Rows whose data flowed into the instruction at ``row``, itself included."""
    found = memo.get(row)
    if found is not None:
        return found
    out = {row}
    tiles = replay.tiles
    d = replay.trace.detail_of(row)
    if isinstance(d, Instr):
        chain = tiles.mmad_chain(core, row) if d.op == "mmad" else [row]
        for r in chain:
            out.add(r)
            for src in tiles.instr(r).srcs:
                if src.buf == GM or (src == d.dst and d.op == "mmad"):
                    continue
                w = tiles.writer(core, src, r)
                if w >= 0:
                    out |= lineage(replay, core, w, memo)
    memo[row] = out
    return out


def stage_table(replay, core: int, row: int, max_tiles: int = 24) -> list[TileRow]:
    """The last ``max_tiles`` output tiles of core ``core`` up to step row ``row``, and the one in progress."""
    t = replay.trace
    index = replay.index
    rows = index.core_rows(core)
    stores = rows[index.tables.w_buf[index.dindex[rows]] == GM]
    done = stores[stores <= row]
    shown = list(done[-max_tiles:])
    upcoming = stores[stores > row]
    if len(upcoming):
        shown.append(int(upcoming[0]))
    pipe_of_lane = {lane: LANE_NAMES[p] for p, lane in index.cores[core].pipes.items()}
    memo: dict = {}
    out = []
    for store in map(int, shown):
        members = np.array(sorted(lineage(replay, core, store, memo)), dtype=np.int64)
        members = members[members <= row]  # what has started by this step
        cells = {}
        for lane in np.unique(t.lane[members]):
            stage = pipe_of_lane.get(int(lane))
            if stage is None:
                continue
            on = members[t.lane[members] == lane]
            cells[stage] = StageCell(int(t.start[on].min()), int(t.end[on].max()), len(on))
        ref = replay.tiles.tile_of(core, store)
        label = ref.label() if ref is not None else t.names[int(t.name[store])]
        out.append(TileRow(store if store <= row else -1, label, cells, store <= row))
    return out
