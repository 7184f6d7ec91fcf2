"""The block whose kernel code is running now, for the free functions of pyasc (``asc.data_copy(...)``) that
have no handle to a simulator: a ``contextvars.ContextVar`` a :class:`~engine.aicore.context.BlockContext`
sets only while its Python code runs and resets right after (nothing is shared between simulations; threads
and async tasks each see their own, or none)."""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .context import BlockContext

RUNNING: ContextVar[BlockContext | None] = ContextVar("ascendsim_block", default=None)


def current() -> BlockContext:
    """The running block's context (RuntimeError outside a kernel launched on a simulation)."""
    ctx = RUNNING.get()
    if ctx is None:
        raise RuntimeError("this kernel API can only be called inside a kernel launched on a simulation")
    return ctx


__all__ = ("RUNNING", "current")
