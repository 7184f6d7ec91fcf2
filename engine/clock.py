"""The deterministic event core (after simpy's ``core.py``).

A heap of ``(time, seq, callback, arg)``: ``seq`` increases monotonically, so events at the same
integer time run in the order they were scheduled (FIFO) and every run of a scenario is identical.
``step()`` is public: tests, lessons and UIs single-step through it.
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heappop, heappush
from typing import Any


class EventCore:
    __slots__ = ("_heap", "_seq", "now", "processed")

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, Callable[[Any], None], Any]] = []
        self._seq = 0
        self.now = 0
        self.processed = 0

    def schedule(self, time: int, callback: Callable[[Any], None], arg: Any = None) -> None:
        if time < self.now:
            raise ValueError(f"cannot schedule an event at {time} ps, before now ({self.now} ps)")
        heappush(self._heap, (time, self._seq, callback, arg))
        self._seq += 1

    def step(self) -> bool:
        """Process the next event; False when there was none."""
        if not self._heap:
            return False
        time, _seq, callback, arg = heappop(self._heap)
        self.now = time
        self.processed += 1
        callback(arg)
        return True

    def run_until_time(self, time: int) -> None:
        """Process every event scheduled at or before ``time``."""
        heap = self._heap
        while heap and heap[0][0] <= time:
            self.step()

    def run_until(self, done: Callable[[], bool]) -> bool:
        """Step until ``done()`` holds (True) or nothing is left to process (False)."""
        while not done():
            if not self.step():
                return done()
        return True

    def pending(self) -> int:
        return len(self._heap)

    def pending_events(self) -> list[tuple[int, Callable[[Any], None], Any]]:
        """The pending events in the order they will run, as ``(time, callback, arg)``."""
        return [(time, callback, arg) for time, _seq, callback, arg in sorted(self._heap, key=_order)]

    def replace_pending(self, events: list[tuple[int, Callable[[Any], None], Any]]) -> None:
        """Replace every pending event by ``events`` (``(time, callback, arg)``, scheduled in that order):
        how a fast path that has worked out the device's next state moves its events on."""
        self._heap.clear()
        for time, callback, arg in events:
            self.schedule(time, callback, arg)


def _order(entry: tuple) -> tuple[int, int]:
    return entry[0], entry[1]
