"""A finished run, stepped event by event: the presenter both UIs draw from.

``Replay(result)`` numbers the run's rows (start-time order) as steps — all of them, or those a
:class:`StepFilter` keeps (a lesson may step only the host, the streams and core 0). The state at a
step is everything the rows up to and including it say: the event at that step has happened (its
buffer changes are visible) and whatever started before and has not ended is still running.
Every question is answered from :class:`~app.present.index.TraceIndex` groups by binary search,
so stepping back, forward or to the millionth event costs the same.

Nothing here imports a UI; nothing here reads engine internals, only the run's ``RunResult``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

import engine
from engine.aicore.pipes import LANE_NAMES
from engine.aicore.tensor import Buffer
from engine.device.stream import TaskKind
from engine.simulation import RunResult
from engine.trace import DIRECTIONS, Kind, LaneKind
from engine.trace.detail import NO_SLOT, HostWait, Mark, QueueOp
from engine.trace.locations import CoreRef, SourceLine

from . import state as S
from .event_names import event_name
from .held import HeldTiles
from .index import INIT_SLOT, TraceIndex, last_at_or_before
from .tiles import TileResolver
from .vocabulary import SlotStatus

_PENDING_SHOWN = 8


@dataclass(frozen=True)
class StepFilter:
    """Which rows are steps: event kinds, lane kinds and cores (:class:`CoreRef`); None keeps everything.

    Rows on lanes of no core (host, streams, engines, the kernel lane) are kept whatever ``cores`` says.
    """

    kinds: frozenset | None = None
    lane_kinds: frozenset | None = None
    cores: frozenset | None = None

    def __post_init__(self) -> None:
        if self.cores is not None and not all(isinstance(c, CoreRef) for c in self.cores):
            raise TypeError(f"StepFilter cores are CoreRef (CoreRef('AIC', 0)), got {sorted(map(repr, self.cores))}")

    def rows(self, t) -> np.ndarray:
        keep = np.ones(len(t), dtype=bool)
        if self.kinds is not None:
            keep &= np.isin(t.kind, [int(k) for k in self.kinds])
        if self.lane_kinds is not None:
            keep &= t.rows_on(*self.lane_kinds)
        if self.cores is not None:
            lane_ok = t.lane_mask(lambda lane: lane.core < 0 or CoreRef.of_lane(lane) in self.cores)
            keep &= lane_ok[t.lane]
        return np.flatnonzero(keep)


@dataclass(frozen=True)
class Breakpoint:
    """Stop at rows of this event kind, on this core, at this source line, or at this user mark (any that is set)."""

    kind: str | None = None  # a Kind name
    core: CoreRef | None = None
    src: SourceLine | None = None
    mark: str | None = None  # a mark's label ("" = any mark)

    def __post_init__(self) -> None:
        # a name where a reference belongs would match nothing, silently: refused
        if self.core is not None and not isinstance(self.core, CoreRef):
            raise TypeError(f"a breakpoint's core is a CoreRef (CoreRef('AIC', 0)), got {self.core!r}")
        if self.src is not None and not isinstance(self.src, SourceLine):
            raise TypeError(f"a breakpoint's src is a SourceLine (SourceLine('kernel.py', 42)), got {self.src!r}")

    def rows(self, replay: Replay) -> np.ndarray:
        t = replay.trace
        keep = np.ones(len(t), dtype=bool)
        if self.kind is not None:
            keep &= t.kind == Kind[self.kind]
        if self.core is not None:
            keep &= t.lane_mask(lambda lane: CoreRef.of_lane(lane) == self.core)[t.lane]
        if self.src is not None:
            ids = [i for i, s in enumerate(replay.index.sources) if s == self.src]
            keep &= np.isin(t.src, ids)
        if self.mark is not None:
            keep &= t.rows_with(lambda d: isinstance(d, Mark) and (not self.mark or d.label == self.mark))
        return np.flatnonzero(keep)


class Replay:
    """Steps, state at any step, tile names and values, navigation and breakpoints of one run."""

    def __init__(
        self,
        result: RunResult,
        inputs: dict[str, np.ndarray] | None = None,
        step_filter: StepFilter | None = None,
        context: dict | None = None,
        sources: dict[str, str] | None = None,
    ) -> None:
        """``inputs``: the named arrays the program copied to the device (for tile values); ``context``:
        what the analysis should know (the scenario's parameters); ``sources``: file texts by the path
        the trace names them with (default: read from the installed package)."""
        self.result = result
        self.context = context or {}
        self._sources = dict(sources or {})
        self._report = None
        self.trace = t = result.trace
        self.index = TraceIndex(t)
        self.filter = step_filter or StepFilter()
        self.steps = self.filter.rows(t)
        self.breakpoints: list[Breakpoint] = []
        self._bp_rows: np.ndarray | None = None
        self.tiles = TileResolver(t, self.index, result.gm, _gm_bytes(result, inputs), result.gm_labels)
        self.held = HeldTiles(self.index, self.tiles)
        self._task_names = None
        self._kind_rows: dict[tuple, np.ndarray] = {}
        # per run, not per step: the host's calls and waits, each stream's task mask, the copy engines' lanes
        host_lanes = t.lanes_of(LaneKind.HOST)
        host = self.index.lane_rows[host_lanes[0]] if host_lanes else np.zeros(0, dtype=np.int64)
        self._host_calls = host[t.kind[host] == Kind.CALL]
        self._host_waits = host[t.kind[host] == Kind.WAIT]
        self._stream_tasks = [(t.lanes[i], t.tasks["stream"] == t.lanes[i].unit) for i in t.lanes_of(LaneKind.STREAM)]
        self._engine_lanes = t.lanes_of(LaneKind.COPY_ENGINE)

    # -- steps ------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.steps)

    def row(self, step: int) -> int:
        if not 0 <= step < len(self.steps):
            raise IndexError(f"step {step} is outside 0..{len(self.steps) - 1}")
        return int(self.steps[step])

    def step_of_row(self, row: int) -> int:
        """The last step at or before trace row ``row`` (0 if none)."""
        return max(0, int(np.searchsorted(self.steps, row, side="right")) - 1)

    def next_where(self, step: int, rows: np.ndarray, forward: bool = True) -> int | None:
        """The next (or previous) step after ``step`` whose row is among ``rows`` (ascending), or None."""
        here = self.row(step)
        if forward:
            i = int(np.searchsorted(rows, here, side="right"))
            candidates = rows[i:]
        else:
            i = int(np.searchsorted(rows, here, side="left"))
            candidates = rows[:i][::-1]
        for r in candidates[:1024]:
            s = int(np.searchsorted(self.steps, r))
            if s < len(self.steps) and self.steps[s] == r:
                return s
        kept = np.intersect1d(candidates, self.steps, assume_unique=True)
        if not len(kept):
            return None
        return int(np.searchsorted(self.steps, kept[0] if forward else kept[-1]))

    def next_of_kind(self, step: int, kind: str, forward: bool = True, core: CoreRef | None = None) -> int | None:
        """The next (previous) step after ``step`` whose event is of ``kind`` (on ``core``);
        each (kind, core)'s rows are found once (UIs ask on every redraw)."""
        rows = self._kind_rows.get((kind, core))
        if rows is None:
            rows = self._kind_rows[(kind, core)] = Breakpoint(kind=kind, core=core).rows(self)
        return self.next_where(step, rows, forward)

    # -- breakpoints --------------------------------------------------------------------------------
    def toggle_breakpoint(self, bp: Breakpoint) -> bool:
        """Set ``bp`` (True) or clear it if it was set (False)."""
        self._bp_rows = None
        if bp in self.breakpoints:
            self.breakpoints.remove(bp)
            return False
        self.breakpoints.append(bp)
        return True

    def breakpoint_rows(self) -> np.ndarray:
        if self._bp_rows is None:
            parts = [bp.rows(self) for bp in self.breakpoints]
            self._bp_rows = np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)
        return self._bp_rows

    def next_breakpoint(self, step: int) -> int | None:
        return self.next_where(step, self.breakpoint_rows())

    # -- one event ----------------------------------------------------------------------------------
    def event(self, step: int) -> S.Event:
        return self.event_at_row(self.row(step))

    def event_at_row(self, row: int) -> S.Event:
        t = self.trace
        lane = t.lanes[int(t.lane[row])]
        detail = t.detail_of(row)
        return S.Event(
            row,
            Kind(int(t.kind[row])).name,
            t.names[int(t.name[row])],
            lane,
            LaneKind(lane.kind).name,
            CoreRef.of_lane(lane),
            int(t.start[row]),
            int(t.end[row]),
            int(t.columns["nbytes"][row]),
            int(t.flops[row]),
            self.index.source_of(row),
            _detail_dict(detail),
            event_name(t, row, "zh"),
        )

    def source_line(self, step: int) -> SourceLine | None:
        return self.event(step).src

    # -- the state ----------------------------------------------------------------------------------
    def state_at(self, step: int) -> S.State:
        row = self.row(step)
        time = int(self.trace.start[row])
        return S.State(
            step,
            row,
            time,
            self.event_at_row(row),
            self.host_state(row, time),
            self.streams_state(row, time),
            self.engines_state(row, time),
            [self.core_state(c, row, time) for c in range(len(self.index.cores))],
        )

    def _running(self, lane_rows: np.ndarray, row: int, time: int) -> int:
        """The row on a lane that has started by ``row`` and not ended at ``time`` (-1: idle)."""
        last = last_at_or_before(lane_rows, row)
        if last < 0:
            return -1
        return last if last == row or self.trace.end[last] > time else -1

    def host_state(self, row: int, time: int) -> S.HostState:
        t = self.trace
        call = self._running(self._host_calls, row, time)
        wait = self._running(self._host_waits, row, time)
        on = t.detail_of(wait) if wait >= 0 else None
        return S.HostState(
            t.names[int(t.name[call])] if call >= 0 else None,
            call,
            self.index.source_of(call) if call >= 0 else None,
            wait >= 0,
            on.on if isinstance(on, HostWait) else None,
            on.target if isinstance(on, HostWait) else -1,
            int(t.start[wait]) if wait >= 0 else -1,
        )

    def _task(self, i: int) -> S.Task:
        t = self.trace
        _rows, start, end = self.index.tasks()
        names = self._names_of_tasks()
        return S.Task(
            int(t.tasks["seq"][i]),
            names[i],
            TaskKind(int(t.tasks["kind"][i])).name,
            int(t.tasks["submit"][i]),
            int(start[i]),
            int(end[i]),
        )

    def _names_of_tasks(self) -> list[str]:
        if self._task_names is None:
            t = self.trace
            task_row, _start, _end = self.index.tasks()
            self._task_names = [t.names[int(t.name[r])] if r >= 0 else "" for r in task_row]
        return self._task_names

    def streams_state(self, row: int, time: int) -> list[S.StreamState]:
        t = self.trace
        task_row, _start, end = self.index.tasks()
        seen = (task_row >= 0) & (task_row <= row)
        running = seen & ((end > time) | (task_row == row))
        submitted = t.tasks["submit"] <= time
        out = []
        for lane, mine in self._stream_tasks:
            pending = np.flatnonzero(mine & submitted & ~seen)
            now = np.flatnonzero(mine & running)
            out.append(
                S.StreamState(
                    lane.unit,
                    [self._task(int(i)) for i in pending[:_PENDING_SHOWN]],
                    len(pending),
                    self._task(int(now[-1])) if len(now) else None,
                    int((mine & seen & ~running).sum()),
                )
            )
        return out

    def engines_state(self, row: int, time: int) -> list[S.EngineState]:
        t = self.trace
        out = []
        task = self.index.task_of_row
        for lane_id in self._engine_lanes:
            lane = t.lanes[lane_id]
            r = self._running(self.index.lane_rows[lane_id], row, time)
            copy = done = total = 0
            if r >= 0:
                copy = self._task(int(task[r])) if task[r] >= 0 else None
                total = int(t.columns["nbytes"][r])
                span = max(1, int(t.end[r] - t.start[r]))
                done = total * min(span, max(0, time - int(t.start[r]))) // span
            out.append(S.EngineState(lane.direction, lane.unit, copy or None, done, total))
        return out

    def core_state(self, c: int, row: int, time: int | None = None) -> S.CoreState:
        t = self.trace
        time = int(t.start[row]) if time is None else time
        core = self.index.cores[c]
        block_row = self.index.block_at(c, row)
        block = t.detail_of(block_row).index if block_row >= 0 else None
        active = block_row >= 0 and int(t.end[block_row]) > time
        pipes = []
        for pipe, lane in sorted(core.pipes.items()):
            r = last_at_or_before(self.index.lane_rows[lane], row)
            busy = r >= 0 and (r == row or int(t.end[r]) > time)
            pipes.append(
                S.PipeState(
                    LANE_NAMES[pipe],
                    busy,
                    r,
                    t.names[int(t.name[r])] if r >= 0 else "",
                    Kind(int(t.kind[r])).name if r >= 0 else "",
                    self.index.source_of(r) if r >= 0 else None,
                    int(t.start[r]) if r >= 0 else -1,
                    int(t.end[r]) if r >= 0 else -1,
                    event_name(t, r, "zh") if r >= 0 else "",
                )
            )
        return S.CoreState(core.ref, block, active, pipes, self._buffers(c, row, block_row))

    def _buffers(self, c: int, row: int, block_row: int) -> list[S.BufferState]:
        """Every queue and TBuf of the block running on core ``c`` (or that ran last), slot by slot."""
        t = self.trace
        if block_row < 0:
            return []
        queues = self.index.queue_index(c)
        layout: dict[int, QueueOp] = {}
        time = int(t.start[row])
        for key, effects in queues.items():
            if key % 1024 == INIT_SLOT:
                init = effects.last(time, row)
                if init >= block_row:
                    layout[key // 1024] = t.detail_of(init)
        by_buffer: dict[int, list[S.SlotState]] = {}
        used: dict[int, int] = {}
        for queue, init in sorted(layout.items()):
            used[init.buf] = used.get(init.buf, 0) + init.num * init.length
            slots = by_buffer.setdefault(init.buf, [])
            tbuf = init.container == "TBuf"
            for slot in range(init.num):
                slot_id = -1 if tbuf else slot
                effects = queues.get(queue * 1024 + (NO_SLOT if tbuf else slot))
                last = effects.last(time, row) if effects is not None else -1
                state = SlotStatus.after(t.detail_of(last).op) if last >= block_row else SlotStatus.FREE
                offset = init.offset + slot * init.length
                writer = self._slot_writer(c, init.buf, queue, slot_id, time, row, block_row)
                tile, since, fmt = self.held.held(c, init.buf, queue, slot_id, writer, block_row)
                slots.append(
                    S.SlotState(queue, init.position, slot_id, offset, init.length, state, tile, writer, since, fmt)
                )
        profile = self.result.profile.buffers
        capacity = {"L1": profile.l1, "L0A": profile.l0a, "L0B": profile.l0b, "L0C": profile.l0c, "UB": profile.ub}
        return [
            S.BufferState(Buffer(buf).name, capacity.get(Buffer(buf).name, 0), used[buf], slots)
            for buf, slots in sorted(by_buffer.items())
        ]

    def _slot_writer(self, c: int, buf: int, queue: int, slot: int, time: int, row: int, block_row: int) -> int:
        """The write into a slot that had landed by (``time``, ``row``), within the block of ``block_row``."""
        effects = self.index.writer_index(c).get((buf, queue & 0xFFFF, (NO_SLOT if slot < 0 else slot) & 0xFFFF))
        if effects is None:
            return -1
        w = effects.last(time, row)
        return w if w >= block_row else -1

    # -- analysis and sources --------------------------------------------------------------------------
    def report(self):
        """The profiler/debugger report of the run (computed once; no re-runs)."""
        if self._report is None:
            from engine.analysis import analyze

            self._report = analyze(self.result, self.context, None)
        return self._report

    def source(self, path: str) -> str | None:
        """The text of a source file named in the trace ("engine/kernels/matmul.py"), or None."""
        if path not in self._sources:
            base = Path(engine.__file__).resolve().parent.parent
            file = (base / path).resolve()
            ok = file.is_file() and base in file.parents
            self._sources[path] = file.read_text(encoding="utf-8", errors="replace") if ok else None
        return self._sources[path]

    # -- tiles --------------------------------------------------------------------------------------
    def slot(self, step: int, core: CoreRef, buffer: str, queue: int, slot: int) -> S.SlotState:
        """One slot of one core's buffer at ``step``."""
        c = self.index.core_index(core)
        state = self.core_state(c, self.row(step))
        for b in state.buffers:
            if b.name == buffer:
                for s in b.slots:
                    if s.queue == queue and s.slot == slot:
                        return s
        raise KeyError(f"{core.label} has no {buffer} queue {queue} slot {slot} at step {step}")

    def tile_values(self, step: int, core: CoreRef, buffer: str, queue: int, slot: int) -> np.ndarray:
        """The real numbers in a slot at ``step`` (rows x cols of the tile its last write put there)."""
        s = self.slot(step, core, buffer, queue, slot)
        if s.writer < 0:
            raise LookupError(f"{core.label} {buffer} queue {queue} slot {slot} holds nothing yet at step {step}")
        return self.slot_values(core, s)

    def slot_values(self, core: CoreRef, slot: S.SlotState) -> np.ndarray:
        """The real numbers of a slot state already looked up (:meth:`slot`) that holds a tile: the tile as a
        matrix (a slot of L1 / L0 keeps it in fractals: :meth:`slot_fractals` says how)."""
        content = self.slot_fractals(core, slot, with_values=True)
        if content is not None:
            return content.values
        return self.tiles.values(self.index.core_index(core), slot.writer)

    def slot_fractals(self, core: CoreRef, slot: S.SlotState, with_values: bool = False):
        """How a slot of L1 / L0 holds its tile (:class:`app.present.fractals.SlotFractals`), or None (row-major
        data, a UB slot, nothing written)."""
        if slot.writer < 0 or slot.format is None:
            return None
        return self.tiles.slot_content(self.index.core_index(core), slot.writer, slot.since, with_values)

    def core_named(self, label: str) -> CoreRef:
        """The run's core a UI names by its label (a menu's value, a clicked cell): a lookup among the
        run's cores, never a parse. KeyError when the run has no such core."""
        for core in self.index.cores:
            if core.ref.label == label:
                return core.ref
        raise KeyError(f"no core {label!r} in this run")


def _tile(ref) -> dict | None:
    return ref.to_dict() if ref is not None else None


def _detail_dict(d) -> dict:
    if d is None:
        return {}
    out = {"type": type(d).__name__}
    for k, v in d._asdict().items():
        out[k] = v._asdict() if hasattr(v, "_asdict") else ([x._asdict() for x in v] if k == "srcs" else v)
    if out["type"] == "TaskInfo" and isinstance(out.get("direction"), int):
        out["direction"] = DIRECTIONS[out["direction"]]
    return out


def _gm_bytes(result: RunResult, inputs: dict[str, np.ndarray] | None) -> dict[int, np.ndarray] | None:
    """Initial GM bytes per allocation from the named input arrays (None: no inputs, no values)."""
    if inputs is None:
        return None
    out = {}
    for ident, info in result.gm.items():
        array = inputs.get(info.name)
        if array is None:
            continue
        data = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        out[ident] = np.concatenate([np.zeros(info.offset, dtype=np.uint8), data]) if info.offset else data.copy()
    return out
