"""Playback: where a trainee is in a replayed run, and how each move changes it, for both UIs.

A :class:`Playback` holds the current event (a replay step) and which lesson step is narrated, and
knows every move a player offers: one event on or back, first and last, seek, the next or previous
event of a kind, the next or previous lesson step, and one tick of play that stops at a breakpoint.
The web (``app/web``) ships its answers to the browser as data; the TUI calls it directly; so a
lesson reads the same in both.

The lesson step narrated at an event is the last lesson step whose anchor (the replay step its
selector resolved to) is at or before the event. Anchors must be in non-decreasing order (checked
when a lesson loads, :func:`app.present.walkthrough.lesson_stops`), so the narration never moves
backwards while the event moves forward. When several lesson steps share one anchor, the rule
names the last of them; a lesson step chosen explicitly (a button, ``n``/``p``) is shown instead
until the event moves.

Play speed is :func:`speed_tick`: a nominal speed in events per second becomes (milliseconds
between ticks, events per tick) with ticks at least :data:`MIN_INTERVAL_MS` apart, exact for every
speed in :data:`SPEEDS`.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass

SPEEDS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000)  # events per second a player offers
DEFAULT_SPEED = 10  # events per second
MIN_INTERVAL_MS = 20  # the shortest time between two ticks of play (50 redraws a second at most)


def speed_tick(speed: int) -> tuple[int, int]:
    """(milliseconds between ticks, events per tick) that play ``speed`` events per second.

    The fewest events per tick whose interval is a whole number of milliseconds and at least
    :data:`MIN_INTERVAL_MS`, trying the fewest events per tick and twice that: 50/s is 20 ms x 1, 200/s
    is 20 ms x 4. A speed neither fits exactly (7/s) gets the nearest whole interval (143 ms x 1).
    """
    speed = max(1, int(speed))
    least = max(1, math.ceil(speed * MIN_INTERVAL_MS / 1000))
    for per_tick in (least, 2 * least):
        if (1000 * per_tick) % speed == 0:
            return 1000 * per_tick // speed, per_tick
    return max(MIN_INTERVAL_MS, round(1000 * least / speed)), least


def speed_table(speeds: Sequence[int] = SPEEDS) -> dict[str, list[int]]:
    """:func:`speed_tick` of each speed, keyed by the speed as text (JSON-able, for the browser)."""
    return {str(s): list(speed_tick(s)) for s in speeds}


class AnchorOrderError(ValueError):
    """A lesson's anchors go backwards: a later lesson step points at an earlier event."""


def check_anchors(anchors: Sequence[int | None]) -> None:
    """Raise :class:`AnchorOrderError` naming the first lesson step whose anchor lies before an earlier one's."""
    seen: tuple[int, int] | None = None  # (lesson step, anchor) of the last resolved one
    for k, a in enumerate(anchors):
        if a is None:
            continue
        if seen is not None and a < seen[1]:
            raise AnchorOrderError(
                f"lesson step {k + 1} points at event {a + 1}, before lesson step {seen[0] + 1}'s event {seen[1] + 1}: "
                "lesson steps must point at events in order"
            )
        seen = (k, a)


def lesson_step_at(anchors: Sequence[int | None], step: int) -> int:
    """The lesson step narrated at ``step`` by the rule alone: the last one whose anchor is <= ``step`` (-1: none)."""
    resolved = [(a, k) for k, a in enumerate(anchors) if a is not None]
    i = bisect_right([a for a, _k in resolved], step)
    return resolved[i - 1][1] if i else -1


def lesson_steps(anchors: Sequence[int | None], first: int, count: int) -> list[int]:
    """:func:`lesson_step_at` of each step in ``first .. first + count - 1`` (what the browser shows at each)."""
    resolved = [(a, k) for k, a in enumerate(anchors) if a is not None]
    keys = [a for a, _k in resolved]
    out = []
    for step in range(first, first + count):
        i = bisect_right(keys, step)
        out.append(resolved[i - 1][1] if i else -1)
    return out


def lesson_nav(anchors: Sequence[int | None], direction: int) -> list[int | None]:
    """For each current lesson step ``k`` (index ``k + 1``: ``-1`` is "before the first"), the lesson step the
    next (``direction`` +1) or previous (-1) button goes to, skipping those that resolved to nothing (None: none)."""
    out: list[int | None] = []
    for current in range(-1, len(anchors)):
        k = current + direction
        while 0 <= k < len(anchors) and anchors[k] is None:
            k += direction
        out.append(k if 0 <= k < len(anchors) else None)
    return out


@dataclass
class Playback:
    """The current event of a run of ``n`` events and the lesson step narrated (see the module docstring).

    ``anchors``: each lesson step's replay step (None: it resolved to nothing), non-decreasing.
    """

    n: int
    anchors: tuple[int | None, ...] = ()
    step: int = 0
    chosen: int | None = None  # a lesson step picked explicitly, shown while the event stays on its anchor
    playing: bool = False
    speed: int = DEFAULT_SPEED

    def __post_init__(self) -> None:
        self.anchors = tuple(self.anchors)
        check_anchors(self.anchors)
        self.step = self._clamp(self.step)

    @property
    def last(self) -> int:
        return max(0, self.n - 1)

    def _clamp(self, step: int) -> int:
        return min(max(0, int(step)), self.last)

    # -- the lesson step ---------------------------------------------------------------------------
    @property
    def lesson_step(self) -> int:
        """The lesson step narrated now (-1: before the first anchor, or no lesson)."""
        if self.chosen is not None and self.anchors[self.chosen] == self.step:
            return self.chosen
        return lesson_step_at(self.anchors, self.step)

    def choose(self, k: int) -> bool:
        """Go to lesson step ``k`` (a button): its anchor becomes the event; False if it resolved to nothing."""
        if not 0 <= k < len(self.anchors) or self.anchors[k] is None:
            return False
        self.playing = False
        self.step, self.chosen = self.anchors[k], k
        return True

    def lesson(self, direction: int) -> bool:
        """The next (+1) or previous (-1) lesson step that resolved; False if there is none."""
        target = lesson_nav(self.anchors, direction)[self.lesson_step + 1]
        return target is not None and self.choose(target)

    def can_lesson(self, direction: int) -> bool:
        return bool(self.anchors) and lesson_nav(self.anchors, direction)[self.lesson_step + 1] is not None

    # -- events --------------------------------------------------------------------------------------
    def seek(self, step: int) -> int:
        """Move to ``step`` (clamped to the run); an explicit lesson-step choice lasts only while the event stays."""
        step = self._clamp(step)
        if step != self.step:
            self.chosen = None
        self.step = step
        return step

    def move(self, delta: int) -> int:
        self.playing = False
        return self.seek(self.step + delta)

    def first(self) -> int:
        self.playing = False
        return self.seek(0)

    def end(self) -> int:
        self.playing = False
        return self.seek(self.last)

    def can_move(self, delta: int) -> bool:
        return 0 <= self.step + delta <= self.last

    def of_kind(self, find: Callable[[int, bool], int | None], forward: bool) -> int | None:
        """Go to ``find(step, forward)`` (the next or previous event of a kind, e.g. ``Replay.next_of_kind``)."""
        found = find(self.step, forward)
        if found is not None:
            self.playing = False
            self.seek(found)
        return found

    # -- play ----------------------------------------------------------------------------------------
    def tick_of(self) -> tuple[int, int]:
        """(milliseconds between ticks, events per tick) at the current speed."""
        return speed_tick(self.speed)

    def toggle_play(self) -> bool:
        """Start (from the first event when at the last) or stop playing; returns whether it plays."""
        self.playing = not self.playing
        if self.playing and self.step >= self.last:
            self.seek(0)
        return self.playing

    def tick(self, next_break: Callable[[int], int | None] = lambda _s: None, limit: int | None = None) -> str:
        """One tick of play: on by the speed's events per tick, stopping at the first breakpoint after the step
        (``next_break(step)``) or at the end, not beyond ``limit`` (the browser's loaded window).

        Returns why play stopped ("breakpoint", "end") or "" while it goes on.
        """
        if not self.playing:
            return ""
        target = min(self.last, self.step + self.tick_of()[1])
        if limit is not None:
            target = min(target, limit)
        hit = next_break(self.step)
        why = ""
        if hit is not None and self.step < hit <= target:
            target, why = hit, "breakpoint"
        elif target >= self.last:
            why = "end"
        self.seek(target)
        if why:
            self.playing = False
        return why


__all__ = (
    "DEFAULT_SPEED",
    "MIN_INTERVAL_MS",
    "SPEEDS",
    "AnchorOrderError",
    "Playback",
    "check_anchors",
    "lesson_nav",
    "lesson_step_at",
    "lesson_steps",
    "speed_table",
    "speed_tick",
)
