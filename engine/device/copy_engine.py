"""Copy engines (DMA) and the host link's cost model.

Each direction (host to device, device to host, device to device) has ``copy_engines_*`` engines
from the profile, shared by all streams. A copy waits at the head of its stream, then for a free
engine; among waiting copies an engine takes the highest-priority stream first, then the earliest
submitted. Host to device and device to host use different engines, so they overlap each other and
compute; two host-to-device copies on different streams share one engine and run one after the other.

Copy time over the host link comes from the profile's (MiB, GB/s) points: the time of a transfer is
interpolated linearly in size between the two nearest measured points (and extrapolated from the end
pair outside them), so the fixed start-up cost hidden in small transfers is kept.
"""

from __future__ import annotations

from bisect import bisect_left
from heapq import heappop, heappush

from ..profiles.profile import Profile

MIB = 1 << 20

H2D, D2H, D2D, H2H = "H2D", "D2H", "D2D", "H2H"


def _time_s(points: tuple[tuple[float, float], ...], nbytes: int) -> float:
    sizes = [p[0] * MIB for p in points]
    times = [p[0] * MIB / (p[1] * 1e9) for p in points]
    i = bisect_left(sizes, nbytes)
    i = min(max(i, 1), len(sizes) - 1)
    x0, x1, t0, t1 = sizes[i - 1], sizes[i], times[i - 1], times[i]
    t = t0 + (t1 - t0) * (nbytes - x0) / (x1 - x0)
    # never faster than the best bandwidth the table shows
    best = max(p[1] for p in points) * 1e9
    return max(t, nbytes / best)


class LinkModel:
    """Copy durations in picoseconds for one profile (pure functions of size and memory kind)."""

    def __init__(self, profile: Profile) -> None:
        h = profile.host
        self._tables = {
            (H2D, True): h.h2d_pinned,
            (H2D, False): h.h2d_pageable,
            (D2H, True): h.d2h_pinned,
            (D2H, False): h.d2h_pageable,
        }
        self._d2d = h.d2d_gbps * 1e9
        self._h2h = h.h2h_gbps * 1e9
        self._cache: dict[tuple[str, bool, int], int] = {}

    def duration(self, direction: str, pinned: bool, nbytes: int) -> int:
        key = (direction, pinned, nbytes)
        ps = self._cache.get(key)
        if ps is None:
            if direction in (H2D, D2H):
                seconds = _time_s(self._tables[(direction, pinned)], nbytes)
            elif direction == D2D:
                seconds = nbytes / self._d2d
            else:
                seconds = nbytes / self._h2h
            ps = max(1, round(seconds * 1e12))
            if len(self._cache) < 4096:
                self._cache[key] = ps
        return ps


class CopyEnginePool:
    """The engines of one direction: a free list and a queue of copies waiting for one."""

    __slots__ = ("direction", "free", "lanes", "waiting")

    def __init__(self, direction: str, lanes: list[int]) -> None:
        self.direction = direction
        self.lanes = lanes
        self.free = list(range(len(lanes)))  # a heap: the lowest-numbered free engine goes first
        self.waiting: list[tuple[int, int, object]] = []

    def request(self, priority: int, seq: int, task: object) -> None:
        heappush(self.waiting, (priority, seq, task))

    def grant(self):
        """Pop (unit, task) while an engine is free and a copy waits, else None."""
        if self.free and self.waiting:
            return heappop(self.free), heappop(self.waiting)[2]
        return None

    def release(self, unit: int) -> None:
        heappush(self.free, unit)
