"""What all cores share: the L2 cache and the bandwidth of L2 and HBM.

**L2.** GM tiles that cores read (``GM_READ`` instructions) are remembered in an LRU of the
profile's L2 capacity, keyed by the exact tile (allocation, first byte, rows, row bytes, stride).
A read of a tile that is resident is an L2 hit: L2 bandwidth and L2 latency. Any other read is a
miss: HBM bandwidth and HBM latency, and the tile is inserted (evicting the least recently used).
Latency delays when the data has arrived (what a later ``set_flag`` waits for), not the pipe:
the DMA engine streams the next request meanwhile, as real MTEs keep several reads in flight.
Partial overlaps between differently shaped tiles count as misses (conservative). Writing an
allocation from the host, a device copy or a kernel drops its tiles (no stale data).

**Bandwidth.** Each link (L2, HBM) has the profile's bandwidth, shared by the transfers using it.
A transfer's rate is fixed when it starts: the per-core rate of its path, or the link's bandwidth
divided by the number of transfers on the link at that moment (itself included), whichever is
lower. Writes to GM are written through to HBM. This is what makes many cores loading at once
slow each other down, and a cold start (every core missing L2) slower than the steady state.
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from heapq import heappop, heappush

from ..profile import Profile

L2_LINK, HBM_LINK = 0, 1


class SharedMemorySystem:
    """L2 residency and link occupancy for one device (lives as long as the device)."""

    def __init__(self, profile: Profile) -> None:
        chip = profile.chip
        ps_per_cycle = profile.ps_per_cycle
        self.capacity = chip.l2_bytes
        self.used = 0
        self.lru: OrderedDict[int, int] = OrderedDict()  # tile key -> bytes
        self.by_alloc: dict[tuple, set[int]] = defaultdict(set)
        self.key_alloc: dict[int, tuple] = {}
        self._keys: dict[tuple, int] = {}
        self._specs: list[tuple] = []
        self.link_bytes_per_ps = (chip.l2_gbps * 1e9 / 1e12, chip.hbm_gbps * 1e9 / 1e12)
        self.latency_ps = (
            round(profile.compute.gm_l2_latency_cycles * ps_per_cycle),
            round(profile.compute.gm_hbm_latency_cycles * ps_per_cycle),
        )
        self._active: tuple[list[int], list[int]] = ([], [])
        self._horizon = [0, 0]
        self.hits = 0
        self.misses = 0
        self.hit_bytes = 0
        self.miss_bytes = 0
        self.write_bytes = 0

    def tile_key(self, alloc_id: tuple, offset: int, rows: int, row_bytes: int, stride: int) -> int:
        spec = (alloc_id, offset, rows, row_bytes, stride)
        key = self._keys.get(spec)
        if key is None:
            key = self._keys[spec] = len(self._keys)
            self._specs.append(spec)
            self.key_alloc[key] = alloc_id
        return key

    def key_spec(self, key: int) -> tuple:
        """``(alloc, offset, rows, row_bytes, stride)`` of a tile key."""
        return self._specs[key]

    def invalidate(self, alloc_id: tuple) -> None:
        for key in self.by_alloc.pop(alloc_id, ()):
            size = self.lru.pop(key, None)
            if size is not None:
                self.used -= size

    def _occupancy(self, link: int, start: int) -> int:
        """Transfers on ``link`` still running at ``start`` (ends at or before it are retired)."""
        active = self._active[link]
        if start > self._horizon[link]:
            self._horizon[link] = start
            while active and active[0] <= start:
                heappop(active)
        return len(active)

    def read(self, key: int, nbytes: int, start: int, max_rate: float) -> tuple[int, int]:
        """``(busy, latency)`` in ps of a GM read starting at ``start`` (busy excludes the fixed set-up).

        The pipe streams the data for ``busy``; the data has arrived ``latency`` later.
        """
        lru = self.lru
        if key in lru:
            lru.move_to_end(key)
            link = L2_LINK
            self.hits += 1
            self.hit_bytes += nbytes
        else:
            link = HBM_LINK
            self.misses += 1
            self.miss_bytes += nbytes
            if nbytes <= self.capacity:
                while self.used + nbytes > self.capacity:
                    old, size = lru.popitem(last=False)
                    self.used -= size
                    self.by_alloc[self.key_alloc[old]].discard(old)
                lru[key] = nbytes
                self.used += nbytes
                self.by_alloc[self.key_alloc[key]].add(key)
        return self._transfer(link, nbytes, start, max_rate), self.latency_ps[link]

    def write(self, nbytes: int, start: int, max_rate: float) -> int:
        """Busy time (ps) of a GM write (posted: done when streamed out)."""
        self.write_bytes += nbytes
        return self._transfer(HBM_LINK, nbytes, start, max_rate)

    def _transfer(self, link: int, nbytes: int, start: int, max_rate: float) -> int:
        sharers = self._occupancy(link, start) + 1
        rate = min(max_rate, self.link_bytes_per_ps[link] / sharers)
        duration = max(1, round(nbytes / rate))
        heappush(self._active[link], start + duration)
        return duration

    def stats(self) -> dict:
        total = self.hits + self.misses
        return {
            "l2_hits": self.hits,
            "l2_misses": self.misses,
            "l2_hit_rate": round(self.hits / total, 4) if total else None,
            "l2_hit_bytes": self.hit_bytes,
            "hbm_read_bytes": self.miss_bytes,
            "hbm_write_bytes": self.write_bytes,
        }
