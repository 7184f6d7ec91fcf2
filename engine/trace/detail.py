"""Typed details of trace rows: what an event means, as data (never parsed back out of its name).

A trace row is small and uniform (times, lane, kind, name, bytes, cause, source line); what varies
between kinds of event lives here, in records interned once per trace and referenced by the row's
``detail`` column (``-1``: none). Identical details are stored once: the 10,000th stamped copy of a
base block points at the same queue records as the first.

* :class:`Rect` — a 2-D window of bytes: a tile of a GM tensor, or of an on-chip buffer slot.
* :class:`Instr` — a kernel instruction: what it computes or moves, from where to where; the Cube's moves
  carry how they rearrange data (:class:`Nd2Nz`, :class:`Load2D`, :class:`Load3D`, :class:`Fixpipe`).
* :class:`QueueOp` — a ``TPipe``/``TQue``/``TBuf`` event: ``init_buffer``, ``alloc_tensor``,
  ``enque``, ``deque``, ``free_tensor``, ``TBuf.get``, with the queue, slot, offset and length, and the
  hardware flag it implies (a row of kind FLAG_SET / FLAG_WAIT) or none (a row of kind BUFFER).
* :class:`Flag` — a hand-written ``set_flag`` / ``wait_flag``; :class:`CrossFlag` — a cross-core flag.
* :class:`TaskInfo` — a stream task: its submit time, stream, kind, event, bytes, flops.
* :class:`HostWait` — what a blocked host call waits for; :class:`HostWork` — host computation.
* :class:`Mark` — a user's mark (``sim.mark`` / ``asc.mark``); :class:`Phase` — where a run's work and
  teardown begin; :class:`Block` — an SPMD block's index.
* :class:`Issue` — the scalar unit issuing a run of instructions (a row on a core's SCALAR lane).
"""

from __future__ import annotations

from enum import IntEnum
from types import MappingProxyType
from typing import NamedTuple

NO_SLOT = 255
GM = 0  # the buffer code of global memory (engine.aicore.tensor.Buffer.GM)


class QueueOpKind(IntEnum):
    INIT = 0  # init_buffer: the queue's slots are carved out of its buffer
    ALLOC = 1  # alloc_tensor
    ENQUE = 2
    DEQUE = 3
    FREE = 4  # free_tensor
    GET = 5  # TBuf.get


class Rect(NamedTuple):
    """A window of ``rows`` runs of ``row_bytes`` bytes, ``stride`` bytes apart, from byte ``start``.

    GM: ``buf`` is 0 and ``owner`` the allocation's ident (``start`` counts from the allocation's
    first byte). On chip: ``buf`` is the buffer code (L1, L0A, ... UB), ``owner`` the queue or TBuf
    of the block, ``slot`` its slot (``NO_SLOT`` for a TBuf), ``start`` counts from the buffer's first
    byte. A 1-D range has ``rows == 1``.
    """

    buf: int
    owner: int
    slot: int
    start: int
    rows: int
    row_bytes: int
    stride: int
    dtype: str
    position: str = ""  # TPosition name (GM, VECIN, A1, ...): for labels

    @property
    def end(self) -> int:
        """One past the last byte."""
        return self.start + (self.rows - 1) * self.stride + self.row_bytes

    @property
    def itemsize(self) -> int:
        return _ITEMSIZE[self.dtype]

    @property
    def cols(self) -> int:
        return self.row_bytes // self.itemsize

    def cell(self) -> tuple[int, int]:
        """(row, column) of the first element in a row-major matrix ``stride`` bytes wide."""
        row, col_bytes = divmod(self.start, self.stride)
        return row, col_bytes // self.itemsize


class Instr(NamedTuple):
    """A kernel instruction: ``op`` writes ``dst`` from ``srcs``."""

    op: str  # "data_copy", "data_copy_pad", "load_data", "mmad", "fixpipe", "add", "muls", ...
    dst: Rect | None
    srcs: tuple[Rect, ...]
    flops: int = 0
    params: tuple = ()  # mmad: (m, n, k, init); muls/adds/duplicate: (scalar,); the Cube's moves: a record below


class Nd2Nz(NamedTuple):
    """``DataCopy`` GM -> L1 with ``Nd2NzParams``: ``n x d`` elements of GM (the source Rect) became NZ, the
    destination Rect's rows being its columns of fractals, ``rows`` rows each (``n`` padded), ``c0_stride``
    32-byte rows apart."""

    n: int
    d: int
    rows: int
    c0_stride: int


class Load2D(NamedTuple):
    """``LoadData`` with ``LoadData2DParams``: ``repeat`` 512-byte fractals, in order, each transposed or not."""

    repeat: int
    transpose: bool


class Load3D(NamedTuple):
    """``LoadData`` with ``LoadData3DParamsV2`` (the matmul use): a ``rows x cols`` window of an NZ matrix (the
    source Rect: one row per column of fractals) into one row of fractals, ``order`` ``"ZZ"`` (L0A), ``"ZN"``
    (L0B) or ``"ZZ_T"`` (L0A, transposed)."""

    rows: int
    cols: int
    order: str


class Fixpipe(NamedTuple):
    """``Fixpipe``: ``m x n`` of an NZ matrix in L0C (its columns of fractals ``src_stride`` rows apart) to the
    destination, as ND rows ``dst_stride`` elements apart (``nz2nd``) or as NZ; ``relu`` on the way."""

    m: int
    n: int
    src_stride: int
    dst_stride: int
    nz2nd: bool
    relu: bool


def touches_gm(d) -> bool:
    """Is ``d`` an instruction that reads or writes GM (an MTE2 load, an MTE3 or fixpipe store)?"""
    return isinstance(d, Instr) and ((d.dst is not None and d.dst.buf == GM) or any(r.buf == GM for r in d.srcs))


class QueueOp(NamedTuple):
    op: int  # QueueOpKind
    queue: int  # the queue's (or TBuf's) number in its block, in init_buffer order
    position: str  # TPosition name: VECIN, A1, CO1, ...
    buf: int  # buffer code
    slot: int  # NO_SLOT for INIT (all slots) and TBuf
    offset: int  # byte offset in the buffer (INIT: of the first slot)
    length: int  # bytes (INIT: of each slot)
    num: int = 1  # INIT: slot count
    flag_src: int = -1  # the implied hardware flag, if any: producer -> consumer pipes
    flag_dst: int = -1
    purpose: str = ""  # "data" (enque/deque) or "free" (free_tensor/alloc_tensor)
    container: str = "TQue"  # "TQue" or "TBuf"


class Flag(NamedTuple):
    src_pipe: int
    dst_pipe: int
    event_id: int


class CrossFlag(NamedTuple):
    flag: int
    mode: int


class TaskInfo(NamedTuple):
    """A stream task; the row's start and end are when it ran, ``submit`` when the host queued it."""

    task: int  # submission sequence number (unique per run)
    stream: int
    kind: int  # engine.device.stream.TaskKind
    submit: int
    event: int = -1  # RECORD / WAIT: the event's ident
    direction: str = ""  # COPY: H2D, D2H, D2D
    flops: int = 0


class HostWait(NamedTuple):
    """A blocked host call: ``on`` is "stream", "event", "copy" (a synchronous memcpy), "pageable" (an
    async copy of pageable memory, staged through a pinned buffer), "room" (a full stream) or "device"."""

    on: str
    target: int = -1  # stream / event ident or task number


class HostWork(NamedTuple):
    """Host computation the program does between API calls: ``what`` is "tiling", "check", ...; ``name_zh``:
    its name in Chinese (the trace names it in English)."""

    what: str
    name_zh: str = ""


class Mark(NamedTuple):
    label: str


class Phase(NamedTuple):
    """The start of a run's phase: "work" (the first copy or kernel is queued) or "teardown" (the last one ended)."""

    name: str


class Block(NamedTuple):
    """One SPMD block on a core's BLOCK lane: its ``get_block_idx()``."""

    index: int


class Issue(NamedTuple):
    """The scalar unit computing and dispatching ``instructions`` instructions, one after the other."""

    instructions: int


Detail = Rect | Instr | QueueOp | Flag | CrossFlag | TaskInfo | HostWait | HostWork | Mark | Phase | Block | Issue

_ITEMSIZE = MappingProxyType({"float16": 2, "float32": 4, "int32": 4, "int16": 2, "int8": 1, "uint8": 1, "bfloat16": 2})
