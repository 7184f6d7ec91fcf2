"""Thin widgets: each holds one view-model (a reactive attribute) and draws it; none computes state."""

from .buffers import BuffersView
from .code import CodeView
from .cores import CoresView
from .keybar import KeyBar
from .metrics import MetricsView
from .narration import NarrationView
from .pane import Pane
from .status import StatusBar
from .timeline import TimelineView

__all__ = (
    "BuffersView",
    "CodeView",
    "CoresView",
    "KeyBar",
    "MetricsView",
    "NarrationView",
    "Pane",
    "StatusBar",
    "TimelineView",
)
