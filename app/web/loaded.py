"""One run loaded for playing in a web worker: its replay, its frame source, what a page shows about it, and
the frame windows already rendered (what :mod:`.render` draws from and :class:`.runs.Runs` keeps)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from app.present import Replay
from app.present.frames import FrameSource
from app.present.walkthrough import Stop
from app.server.store import RunSpec
from engine.trace.locations import CoreRef
from lessons.catalog import Lesson

WINDOWS_KEPT = 24  # rendered frame windows kept per run


@dataclass
class Loaded:
    """One run ready to play: its replay, its frame source, what a page shows about it."""

    key: str
    spec: RunSpec
    replay: Replay
    source: FrameSource
    outline: dict
    lesson: Lesson | None = None
    stops: tuple[Stop, ...] = ()  # per lesson step: its replay step, or None with why
    windows: OrderedDict = field(default_factory=OrderedDict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    note: tuple | None = None  # what happened to its stored file (a message key and its values), for the page
    exercise: Lesson | None = None  # the lesson whose exercise this run is (a trainee's code), if it is one

    @property
    def events(self) -> int:
        return len(self.replay.trace)

    def core(self, label) -> CoreRef | None:
        """The run's core a browser names by its label (a menu's value, a clicked cell), None when the run
        has no such core (the label is looked up among the run's cores, never parsed)."""
        try:
            return self.replay.core_named(label) if isinstance(label, str) else None
        except KeyError:
            return None

    def window(self, key: tuple, build: Callable[[], dict]) -> dict:
        """A rendered window of frames, built once (``key``: first, count, core, lang, breakpoints)."""
        with self.lock:
            found = self.windows.get(key)
            if found is not None:
                self.windows.move_to_end(key)
                return found
        built = build()
        with self.lock:
            self.windows[key] = built
            while len(self.windows) > WINDOWS_KEPT:
                self.windows.popitem(last=False)
        return built


__all__ = ("WINDOWS_KEPT", "Loaded")
