"""What a buffer slot holds after its last write, as the core view shows it: the tile (a slot of L0A loaded a
row of fractals at a time shows the whole tile), since when (the slot's last ``alloc_tensor``) and in which
layout; memoised per write, since a step's core view asks it of every slot of every core."""

from __future__ import annotations

import numpy as np

from engine.aicore.tensor import Buffer
from engine.trace.detail import NO_SLOT, QueueOpKind

from .index import TraceIndex
from .tiles import TileResolver

_CUBE_BUFFERS = frozenset(b.value for b in (Buffer.L1, Buffer.L0A, Buffer.L0B, Buffer.L0C))
_MEMO = 65536


class HeldTiles:
    def __init__(self, index: TraceIndex, tiles: TileResolver) -> None:
        self.index = index
        self.tiles = tiles
        self._since: dict[tuple, int] = {}  # (core, queue, slot, writer) -> the slot's alloc before it, or -1
        self._held: dict[tuple, tuple] = {}  # (core, queue, slot, writer, block row) -> what the slot holds
        self._allocs: dict[tuple, np.ndarray] = {}  # (core, queue index key) -> its alloc_tensor rows, ascending

    def held(self, c: int, buf: int, queue: int, slot: int, writer: int, block_row: int) -> tuple:
        """(tile dict, the row after which it was written, its format's value) of a slot last written at
        ``writer``; (None, ``block_row``, None) before any write."""
        if writer < 0:
            return None, block_row, None
        key = (c, queue, slot, writer, block_row)
        found = self._held.get(key)
        if found is None:
            since = self.since(c, queue, slot, writer, block_row)
            fmt = self.tiles.slot_format(c, writer, since) if buf in _CUBE_BUFFERS else None
            found = (_tile(self.tiles.slot_tile(c, writer, since)), since, fmt.value if fmt is not None else None)
            if len(self._held) > _MEMO:
                self._held.clear()
            self._held[key] = found
        return found

    def since(self, c: int, queue: int, slot: int, writer: int, block_row: int) -> int:
        """The row after which the content of a slot last written at ``writer`` was written: the slot's last
        ``alloc_tensor`` before it (a TBuf: the block's start)."""
        key = (c, queue, slot, writer)
        found = self._since.get(key)
        if found is None:
            allocs = self._alloc_rows(c, queue * 1024 + (NO_SLOT if slot < 0 else slot))
            i = int(allocs.searchsorted(writer)) - 1  # the last alloc before the write
            found = int(allocs[i]) if i >= 0 else -1
            if len(self._since) > _MEMO:
                self._since.clear()
            self._since[key] = found
        return max(block_row, found)

    def _alloc_rows(self, c: int, key: int) -> np.ndarray:
        """The ``alloc_tensor`` rows of one queue slot of core ``c`` (its queue index ``key``), ascending: found
        once, so a seek asks a binary search, not a scan of every operation on the slot."""
        found = self._allocs.get((c, key))
        if found is None:
            effects = self.index.queue_index(c).get(key)
            rows = effects.rows if effects is not None else np.empty(0, np.int64)
            found = np.sort(rows[self.index.tables.q_op[self.index.dindex[rows]] == QueueOpKind.ALLOC])
            self._allocs[(c, key)] = found
        return found


def _tile(ref) -> dict | None:
    return ref.to_dict() if ref is not None else None


__all__ = ("HeldTiles",)
