"""The trace and what it records: every event of a run as a row, and what each row means.

``writer`` appends rows during a run (:class:`Trace`); ``data`` is the finished trace the analysis, the
exports and the UIs read (:class:`TraceData`); ``schema`` says what a row, a lane and a stream task are
made of; ``order`` keeps a fast run's rows in a call-by-call run's order. ``detail`` holds the typed
details of rows (what a buffer event or a copy means, as data), ``locations`` which core and which source
line, ``findings`` the problems a run detected, ``source_files`` which frames are the simulator's own.
``codec`` turns a finished run into plain data and back, ``chrome`` exports Chrome trace-event JSON, and
``intervals`` is the interval arithmetic the readers share.

This package re-exports the names most code needs: ``from engine.trace import Kind, TraceData``.
"""

from .data import Columns, TraceData, detail_table
from .detail import NO_SLOT
from .schema import (
    BYTES_PER_ROW,
    COLUMN_DTYPES,
    COLUMN_NAMES,
    COLUMNS,
    DERIVED_COLUMNS,
    DIRECTIONS,
    PS_PER_US,
    TASK_COLUMNS,
    TASK_DETAIL,
    Kind,
    Lane,
    LaneKind,
)
from .writer import Interner, Trace

__all__ = (
    "BYTES_PER_ROW",
    "COLUMNS",
    "COLUMN_DTYPES",
    "COLUMN_NAMES",
    "DERIVED_COLUMNS",
    "DIRECTIONS",
    "NO_SLOT",
    "PS_PER_US",
    "TASK_COLUMNS",
    "TASK_DETAIL",
    "Columns",
    "Interner",
    "Kind",
    "Lane",
    "LaneKind",
    "Trace",
    "TraceData",
    "detail_table",
)
