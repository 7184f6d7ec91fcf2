"""The trace's schema: what a row and a stream task are made of, and the kinds of rows and lanes.

:class:`Kind` says what a row is (a host call, a wait, a copy, a kernel instruction...), :class:`LaneKind`
and :class:`Lane` what a lane is (the host thread, a stream, a copy engine, one pipe of one AI core) as
data. ``COLUMNS`` are a row's stored columns with their types; ``TASK_COLUMNS`` those of the task table
(a row whose ``detail`` is ``TASK_DETAIL + i`` shows stream task ``i``). :mod:`engine.trace` (the writer)
and :mod:`engine.trace.data` (the reader) share them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from types import MappingProxyType

import numpy as np

PS_PER_US = 1_000_000


class Kind(IntEnum):
    CALL = 0  # a host API call
    WAIT = 1  # something blocked: host in a synchronize, a stream on an event, a pipe on a flag
    COPY = 2  # a host-link or device copy (bytes)
    KERNEL = 3  # a kernel on a stream / on the core array
    MARK = 4  # an instant: event recorded, kernel launched
    MOVE = 5  # an on-chip transfer on an MTE or FIX pipe (bytes)
    COMPUTE = 6  # Cube, Vector or Scalar work (flops)
    FLAG_SET = 7
    FLAG_WAIT = 8
    BARRIER = 9
    BLOCK = 10  # one SPMD block running on a core
    ERROR = 11  # a failed call or a detected problem (a finding)
    HOST_WORK = 12  # host-side computation the user asked for (tiling, numerics check)
    BUFFER = 13  # an on-chip buffer event that implies no hardware flag (init_buffer, alloc_tensor, TBuf.get...)


class LaneKind(IntEnum):
    HOST = 0  # the host thread
    STREAM = 1  # a device stream (its tasks)
    COPY_ENGINE = 2  # a DMA engine of the host link or device
    KERNELS = 3  # the AI-core array: one bar per kernel
    PIPE = 4  # one pipe of one AI core
    BLOCK = 5  # the SPMD blocks one AI core ran
    OTHER = 6


# (column name, array typecode, numpy dtype)
COLUMNS = (
    ("start", "q", np.int64),
    ("end", "q", np.int64),
    ("nbytes", "q", np.int64),
    ("cause", "i", np.int32),
    ("src", "i", np.int32),
    ("detail", "i", np.int32),
    ("name", "h", np.int16),
    ("lane", "h", np.int16),
    ("kind", "B", np.uint8),
)
COLUMN_NAMES = tuple(c[0] for c in COLUMNS)
COLUMN_DTYPES = MappingProxyType({c[0]: np.dtype(c[2]) for c in COLUMNS})
DERIVED_COLUMNS = ("flops", "buf", "slot")
BYTES_PER_ROW = sum(np.dtype(c[2]).itemsize for c in COLUMNS)

# Stream tasks are many (a pipeline of 10,000 batches has 40,000) and each is unique, so they are not
# detail records but rows of a columnar task table; a row's ``detail`` of TASK_DETAIL + i names task i.
TASK_DETAIL = 1 << 30
TASK_COLUMNS = (
    ("seq", np.int32),  # submission number, unique in the run
    ("stream", np.int16),
    ("kind", np.uint8),  # engine.device.stream.TaskKind
    ("submit", np.int64),  # when the host queued it (ps)
    ("event", np.int32),  # RECORD / WAIT: the event's ident, else -1
    ("direction", np.uint8),  # COPY: index in DIRECTIONS
    ("flops", np.int64),  # KERNEL: its flops
)
DIRECTIONS = ("", "H2D", "D2H", "D2D", "H2H")


@dataclass(frozen=True)
class Lane:
    """A horizontal track of the timeline: ``process`` groups lanes (Host, Device streams, AIC 3...).

    ``kind`` says what the lane is; ``core`` (the physical core's number), ``core_type`` ("AIC" or
    "AIV"), ``pipe`` (an ``aicore.pipes.Pipe`` value), ``unit`` (a stream's or engine's number) and
    ``direction`` (H2D, D2H, D2D for engines) say which, as data. -1 / "" where they do not apply.
    """

    process: str
    thread: str
    sort: int  # order of the process in a viewer
    kind: int = LaneKind.OTHER
    core: int = -1
    core_type: str = ""
    pipe: int = -1
    unit: int = -1
    direction: str = ""

    @property
    def label(self) -> str:
        return f"{self.process}/{self.thread}"
