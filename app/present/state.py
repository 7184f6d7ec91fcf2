"""The state of a run at one step, as plain data: what the host, streams, engines and cores are doing.

Produced by :meth:`app.present.replay.Replay.state_at`; every field is a plain value or a typed
reference (a :class:`~engine.trace.locations.CoreRef`, a :class:`~engine.trace.locations.SourceLine`, a
:class:`~app.present.vocabulary.SlotStatus`), so view-models turn it into JSON without knowing the
engine (:meth:`State.to_dict` gives references as their fields). Times are picoseconds.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from engine.trace.locations import CoreRef, SourceLine
from engine.trace.schema import Lane

from .vocabulary import SlotStatus


@dataclass(frozen=True)
class Event:
    """One trace row as a trainee reads it."""

    row: int
    kind: str  # engine.trace.Kind name: CALL, COPY, MOVE, COMPUTE, FLAG_WAIT, ...
    name: str
    lane: Lane  # its lane, typed (app/present/lanes.py names it in either language)
    lane_kind: str
    core: CoreRef | None  # the core whose lane it is on (None: host, streams, engines, the kernel lane)
    start: int
    end: int
    nbytes: int
    flops: int
    src: SourceLine | None  # the code that issued it
    detail: dict = field(default_factory=dict)  # the typed detail's fields (with its type as "type")
    name_zh: str = ""  # its name in Chinese, where it is words rather than an API (app.present.event_names)

    def named(self, lang: str) -> str:
        return self.name_zh if lang == "zh" and self.name_zh else self.name


@dataclass(frozen=True)
class HostState:
    call: str | None  # the API call in progress
    call_row: int
    src: SourceLine | None  # the line that made the call
    blocked: bool
    waiting_on: str | None  # HostWait.on: stream, event, copy, pageable, room, device
    waiting_target: int
    since: int


@dataclass(frozen=True)
class Task:
    task: int  # submission number
    name: str
    kind: str  # COPY, KERNEL, RECORD, WAIT
    submit: int
    start: int  # -1: not started
    end: int


@dataclass(frozen=True)
class StreamState:
    ident: int  # the stream's number (0: the default stream)
    pending: list[Task]  # submitted, not started (the first few)
    pending_count: int
    running: Task | None
    done: int


@dataclass(frozen=True)
class EngineState:
    direction: str
    unit: int
    copy: Task | None
    bytes_done: int
    bytes_total: int


@dataclass(frozen=True)
class PipeState:
    pipe: str  # SCALAR, VECTOR, CUBE, MTE1, MTE2, MTE3, FIXP
    busy: bool
    row: int  # the last instruction that started on it (-1: none yet)
    name: str
    kind: str  # its Kind name (MOVE, COMPUTE, FLAG_WAIT, ...)
    src: SourceLine | None
    start: int
    end: int
    name_zh: str = ""  # the instruction's name in Chinese, where it is words (app.present.event_names)

    def named(self, lang: str) -> str:
        return self.name_zh if lang == "zh" and self.name_zh else self.name


@dataclass(frozen=True)
class SlotState:
    queue: int
    position: str
    slot: int  # -1 for a TBuf
    offset: int
    length: int
    state: SlotStatus
    tile: dict | None  # TileRef.to_dict() of what it holds, None if nothing yet
    writer: int  # the row that last wrote it (-1: none)
    since: int = -1  # the row after which what it holds was written (its last alloc_tensor, or the block's start)
    format: str | None = None  # a slot of L1 / L0 holding one tile's fractals: its Format's value (NZ, ZZ ...)


@dataclass(frozen=True)
class BufferState:
    name: str  # L1, L0A, L0B, L0C, UB
    capacity: int
    used: int  # bytes carved out by init_buffer in the running block
    slots: list[SlotState]


@dataclass(frozen=True)
class CoreState:
    core: CoreRef
    block: int | None  # get_block_idx() of the block it runs (or ran last)
    active: bool  # a block is running
    pipes: list[PipeState]
    buffers: list[BufferState]


@dataclass(frozen=True)
class State:
    step: int
    row: int
    time: int
    event: Event
    host: HostState
    streams: list[StreamState]
    engines: list[EngineState]
    cores: list[CoreState]

    def to_dict(self) -> dict:
        return asdict(self)
