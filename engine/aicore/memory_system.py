"""What all cores share: the L2 cache and the bandwidth of L2 and HBM; and how one core's MTE reads GM.

**L2.** GM tiles that cores read (``GM_READ`` instructions) are remembered in an LRU of the
profile's L2 capacity, keyed by the exact tile (allocation, first byte, rows, row bytes, stride).
A read of a tile that is resident is an L2 hit: L2 bandwidth and L2 latency. Any other read is a
miss: HBM bandwidth (and L2's, which every GM byte crosses) and HBM latency, and the tile is
inserted (evicting the least recently used).
Partial overlaps between differently shaped tiles count as misses (conservative). Writing an
allocation from the host, a device copy or a kernel drops its tiles (no stale data).

**Requests.** An MTE reads GM in requests of at most ``compute.gm_request_bytes`` (512 B) that
never cross a row of the tile nor a 512-byte boundary of GM, and issues them one after the other:
its per-core path rate (MSOP's GM->L1 / GM->UB maximum) is reached with whole requests only. A tile
of 128-byte rows (an ND matrix read 64 fp16 columns at a time, as a Cube kernel's A or transposed B
with ``stepK = 1``) costs a whole request per row and moves at a quarter of the path rate; this is
why the Matmul API's "big packages" (``stepKa``/``stepKb`` > 1) speed MTE2 up on real hardware.

**Latency.** An MTE instruction holds its pipe until its last byte has landed (msprof counts that
time as the pipe's busy time): a read takes its streaming time plus the first-byte latency of L2
or HBM. Writes are posted: done when streamed out.

**Bandwidth.** Each link (L2, HBM) carries bytes at the profile's bandwidth for all cores together,
as a fluid queue: each transfer is carried after the bytes the link already owes. A transfer ends
when both the core has streamed it at its path rate and the link has carried it. So one core alone
runs at its path rate, and many cores loading at once share the link and never get more than its
bandwidth together. Writes to GM are written through L2 to HBM. This is what makes many cores
loading at once slow each other down, and a cold start (every core missing L2) slower than the
steady state.

Transfers of different cores reach the links in the order they start (the scheduler times them in
that order). Within one core the scheduler times instructions in program order, and a transfer can
start before one that precedes it in the program: a double-buffered kernel's load of tile i + 1 is
issued after the store of tile i but starts while V still computes tile i. Such a transfer is carried
in the capacity the link left idle after its start (the link remembers its recent idle gaps) and
never delays what was already timed; it waits behind owed bytes only where the link was busy.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict, defaultdict

from ..profiles.profile import Profile

L2_LINK, HBM_LINK = 0, 1
KEPT_GAPS = 64  # idle gaps a link remembers (ASSUMPTION: a core's program order runs at most a few tiles ahead)


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
        self._request_bytes: list[int] = []  # per tile key: bytes the MTE streams, in whole requests
        self.request = profile.compute.gm_request_bytes
        self._ps_per_byte = (1e12 / (chip.l2_gbps * 1e9), 1e12 / (chip.hbm_gbps * 1e9))
        self.latency_ps = (
            round(profile.compute.gm_l2_latency_cycles * ps_per_cycle),
            round(profile.compute.gm_hbm_latency_cycles * ps_per_cycle),
        )
        self._link_free = [0, 0]  # per link: when it has carried every byte it owes
        self._gaps = ([], [])  # per link: its recent idle gaps before _link_free, as [start, end] in time order
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
            self._request_bytes.append(self.request * requests(offset, rows, row_bytes, stride, self.request))
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

    def read(self, key: int, nbytes: int, start: int, max_rate: float) -> int:
        """Busy time (ps) of a GM read starting at ``start``: streaming, then the first-byte latency.

        The core's path streams the tile in whole requests at ``max_rate``; the link carries ``nbytes``.
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
        streamed = max(nbytes, self._request_bytes[key])
        return self._transfer(link, nbytes, streamed, start, max_rate) + self.latency_ps[link]

    def write(self, nbytes: int, start: int, max_rate: float) -> int:
        """Busy time (ps) of a GM write (posted: done when streamed out)."""
        self.write_bytes += nbytes
        return self._transfer(HBM_LINK, nbytes, nbytes, start, max_rate)

    def _transfer(self, link: int, nbytes: int, streamed: int, start: int, max_rate: float) -> int:
        """The core streams ``streamed`` bytes (whole requests) at ``max_rate``; L2 (and HBM for a miss or a
        write) carries ``nbytes`` after the bytes it already owes; the latest of these ends the transfer.
        (Called for every GM transfer: written for speed.)"""
        end = round(streamed / max_rate)
        carried = self._carry(0, start, round(nbytes * self._ps_per_byte[0])) - start  # every GM byte crosses L2 ...
        if carried > end:
            end = carried
        if link:  # ... misses and writes HBM too
            carried = self._carry(1, start, round(nbytes * self._ps_per_byte[1])) - start
            if carried > end:
                end = carried
        return end if end > 0 else 1

    def _carry(self, link: int, start: int, busy: int) -> int:
        """When ``link`` has carried ``busy`` ps of bytes that arrive at ``start``: at once on an idle link,
        after the owed bytes on a busy one, or in the link's idle gaps after ``start`` when earlier
        transfers were timed before this one although they start later (see the module docstring)."""
        free = self._link_free
        owed = free[link]
        if start >= owed:  # the common case: the link is idle or exactly caught up
            if start > owed:
                self._remember_gap(link, owed, start)
            free[link] = start + busy
            return start + busy
        gaps = self._gaps[link]
        if not gaps or gaps[-1][1] <= start:
            free[link] = owed + busy
            return owed + busy
        i = bisect_right(gaps, start, key=lambda gap: gap[1])  # the first gap ending after start
        while i < len(gaps) and busy > 0:
            gap = gaps[i]
            at = gap[0] if gap[0] > start else start
            used = gap[1] - at if gap[1] - at < busy else busy
            busy -= used
            done = at + used
            if at > gap[0]:  # the gap's head stays idle
                if done < gap[1]:
                    gaps.insert(i + 1, [done, gap[1]])
                gap[1] = at
                i += 1
            elif done < gap[1]:
                gap[0] = done
            else:
                del gaps[i]
            if busy == 0:
                return done
        free[link] = owed + busy
        return owed + busy

    def _remember_gap(self, link: int, begin: int, end: int) -> None:
        gaps = self._gaps[link]
        gaps.append([begin, end])
        if len(gaps) > 2 * KEPT_GAPS:
            del gaps[:KEPT_GAPS]

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


def requests(offset: int, rows: int, row_bytes: int, stride: int, request: int) -> int:
    """GM requests of at most ``request`` bytes that read a tile: none crosses a row end or a
    ``request``-aligned boundary (offsets count from the allocation, which starts aligned)."""
    if rows <= 1 or stride == row_bytes:  # one contiguous run
        return -(-(offset % request + rows * row_bytes) // request)
    if stride % request == 0:  # every row starts at the same place within a request
        return rows * -(-(offset % request + row_bytes) // request)
    return sum(-(-((offset + r * stride) % request + row_bytes) // request) for r in range(rows))
