"""The tiles each core holds over a window of steps, computed for all the window's steps at once.

A window's tile outlines (:func:`app.present.frames.frames`) need, at each step where a core's holdings may
change, which GM tiles that core's queue and TBuf slots hold. :meth:`~app.present.replay.Replay.core_state`
answers that for one step with a binary search per slot, besides the pipes and slot states the outlines do not
need; over a 250-step window of a 24-core matmul that was thousands of calls and most of a window's time. Here
each slot's searches are done once for the whole window (:meth:`~app.present.index.Effects.last_many`), and a
step is then a few array lookups. The result is what the one-step path gives, slot for slot, in its order
(tests/test_present_frames.py compares them at every step).
"""

from __future__ import annotations

import numpy as np

from engine.aicore.tensor import Buffer
from engine.trace.detail import NO_SLOT

from .index import INIT_SLOT


def core_tiles(replay, c: int, rows: np.ndarray, times: np.ndarray, tensors: dict[str, int]) -> list[list[list]]:
    """For each step (its trace row in ``rows``, its start in ``times``): the tiles of the GM tensors named in
    ``tensors`` that core ``c`` holds, ``[tensor index, buffer, row, col, rows, cols]`` in buffer order then
    queue and slot order (what ``_tiles_of(replay.core_state(c, row, time), tensors)`` lists)."""
    index, t = replay.index, replay.trace
    lane = index.cores[c].block_lane
    if lane < 0:
        return [[] for _ in range(len(rows))]
    lane_rows = index.lane_rows[lane]
    k = np.searchsorted(lane_rows, rows, side="right") - 1
    blocks = np.where(k >= 0, lane_rows[np.maximum(k, 0)], -1)
    queues = index.queue_index(c)
    inits = {
        key // 1024: effects.last_many(times, rows).tolist()
        for key, effects in sorted(queues.items())
        if key % 1024 == INIT_SLOT
    }
    writers = index.writer_index(c)
    found: dict[int, list[int]] = {}  # id(effects) -> its last row at each step
    plans: dict[tuple, list] = {}  # the queues' layout -> its slots in order: (buffer name, last writer by step)
    named: dict[int, list | None] = {}  # writer row -> the tile it wrote, as listed (None: not a named tensor's)

    def plan(layout: tuple) -> list:
        by_buffer: dict[int, list] = {}
        for queue, row in layout:
            init = t.detail_of(row)
            slots = by_buffer.setdefault(init.buf, [])
            tbuf = init.container == "TBuf"
            for slot in range(init.num):
                effects = writers.get((init.buf, queue & 0xFFFF, (NO_SLOT if tbuf else slot) & 0xFFFF))
                if effects is not None:
                    if id(effects) not in found:
                        found[id(effects)] = effects.last_many(times, rows).tolist()
                    slots.append((Buffer(init.buf).name, found[id(effects)]))
        return [slot for _buf, slots in sorted(by_buffer.items()) for slot in slots]

    out: list[list[list]] = []
    for i, block in enumerate(blocks.tolist()):
        if block < 0:
            out.append([])
            continue
        layout = tuple((q, at[i]) for q, at in inits.items() if at[i] >= block)
        slots = plans.get(layout)
        if slots is None:
            slots = plans[layout] = plan(layout)
        step = []
        for name, last in slots:
            writer = last[i]
            if writer < block:
                continue
            if writer not in named:
                tile = replay.tiles.tile_of(c, writer)
                ok = tile is not None and tile.tensor in tensors
                named[writer] = [tensors[tile.tensor], tile.row, tile.col, tile.rows, tile.cols] if ok else None
            tile = named[writer]
            if tile is not None:
                step.append([tile[0], name, *tile[1:]])
        out.append(step)
    return out


__all__ = ("core_tiles",)
