"""The words both UIs draw with, each defined once: what a core is doing and what a buffer slot holds.

Each is an enum whose value is its word (the message key's suffix: ``activity.cube``, ``state.in use``);
a member carries how every front end shows it: a one-letter ``code`` (the browser's grid, sent as one
character per core per step), a ``glyph`` (the terminal), a ``css`` class (the browser) and a ``style``
(the terminal's component class). Values are ``str``, so view-models stay JSON.
"""

from __future__ import annotations

from enum import StrEnum
from types import MappingProxyType

from engine.trace.detail import QueueOpKind


class Activity(StrEnum):
    """What a core is doing at a step, for colouring (:func:`app.present.views.activity`)."""

    code: str
    glyph: str

    def __new__(cls, word: str, code: str, glyph: str) -> Activity:
        member = str.__new__(cls, word)
        member._value_ = word
        member.code = code
        member.glyph = glyph
        return member

    CUBE = ("cube", "c", "C")
    VECTOR = ("vector", "v", "V")
    LOAD = ("load", "l", "L")
    STORE = ("store", "s", "S")
    WAIT = ("wait", "w", "W")
    BUSY = ("busy", "b", "B")  # running a block, no pipe working
    IDLE = ("idle", "i", "·")

    @property
    def css(self) -> str:
        """The browser's class (its code): a grid cell, a legend key and a core's header (``act c``) wear it."""
        return self.code

    @property
    def style(self) -> str:
        """The terminal's component class (``core--cube``)."""
        return f"core--{self.value}"


# which pipe's work names a core's activity, first match wins (MOVE or COMPUTE on it)
PIPE_ACTIVITY = (
    ("CUBE", Activity.CUBE),
    ("VECTOR", Activity.VECTOR),
    ("MTE2", Activity.LOAD),
    ("MTE1", Activity.LOAD),
    ("FIXP", Activity.STORE),
    ("MTE3", Activity.STORE),
)


class SlotStatus(StrEnum):
    """What a queue slot (or a TBuf) holds at a step: the last queue operation on it in the running block."""

    glyph: str
    css: str

    def __new__(cls, word: str, glyph: str, css: str) -> SlotStatus:
        member = str.__new__(cls, word)
        member._value_ = word
        member.glyph = glyph
        member.css = css
        return member

    FREE = ("free", "○", "free")
    ALLOCATED = ("allocated", "◔", "alloc")
    ENQUEUED = ("enqueued", "●", "ready")
    DEQUEUED = ("dequeued", "◑", "inuse")
    IN_USE = ("in use", "◕", "inuse")  # a TBuf handed out by get

    @property
    def style(self) -> str:
        """The terminal's component class (``slot--in-use``)."""
        return "slot--" + self.value.replace(" ", "-")

    @classmethod
    def after(cls, op: int) -> SlotStatus:
        """The status a queue operation leaves its slot in."""
        return _AFTER.get(op, cls.FREE)


_AFTER = MappingProxyType(
    {
        QueueOpKind.ALLOC: SlotStatus.ALLOCATED,
        QueueOpKind.ENQUE: SlotStatus.ENQUEUED,
        QueueOpKind.DEQUE: SlotStatus.DEQUEUED,
        QueueOpKind.FREE: SlotStatus.FREE,
        QueueOpKind.GET: SlotStatus.IN_USE,
    }
)

__all__ = ("PIPE_ACTIVITY", "Activity", "SlotStatus")
