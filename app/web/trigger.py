"""What a callback reads of the request Dash is answering (``dash.ctx``), as a parameter a test can give.

A callback that depends on which input fired takes it as ``trigger`` (keyword only) and one that fills a
pattern of outputs takes them as ``outputs``; both default to :data:`FROM_DASH`, which reads them from
``dash.ctx`` as Dash calls the callback. A test calls the callback as a plain function and passes what the
page would have sent (``trigger="jump-next"``, ``trigger={"type": "bp-del", "i": 0}``).
"""

from __future__ import annotations

from dash import ctx


class _FromDash:
    """The default of ``trigger`` and ``outputs``: read from ``dash.ctx`` (only there inside a callback)."""

    def __repr__(self) -> str:
        return "FROM_DASH"


FROM_DASH = _FromDash()


def triggered(trigger):
    """The id of the input that fired: ``trigger`` as given, or ``dash.ctx.triggered_id`` for :data:`FROM_DASH`."""
    return ctx.triggered_id if trigger is FROM_DASH else trigger


def outputs_of(outputs) -> list:
    """The outputs a pattern-matching callback fills: as given, or ``dash.ctx.outputs_list`` for :data:`FROM_DASH`."""
    return ctx.outputs_list if outputs is FROM_DASH else outputs


__all__ = ("FROM_DASH", "outputs_of", "triggered")
