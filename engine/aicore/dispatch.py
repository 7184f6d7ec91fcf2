"""SPMD dispatch and the per-core pipe scheduler.

Blocks go to cores dynamically: every core takes the next block as soon as it finishes the
previous one, so more blocks than cores run in waves and unequal blocks leave a tail. When a core
takes block ``b``, the kernel's Python code runs for ``b`` (recording its program and doing the
numerics), then the program is timed on that core:

* instructions are dispatched by the scalar unit in program order; issuing each costs it the cycles
  the profile's ``[scalar]`` section gives its kind (:mod:`engine.aicore.scalar_unit`), and an
  instruction starts no earlier than it was issued. The scalar unit runs ahead of the pipes (their
  queues hold what it issued), so its cost shows only where it holds an instruction back;
* each runs on its pipe, in order within the pipe, in parallel across pipes:
  ``start = max(dispatch time, pipe free, flag set time)``;
* ``set_flag`` fires when its pipe reaches it; ``wait_flag`` holds its pipe until the matching
  set fired (flags count: the k-th wait on a key takes the k-th set);
* GM reads and writes share L2/HBM bandwidth with all cores (see ``memory_system``).

The idea that keeps this fast: a core's instructions only interact with other cores through the
shared links, so each core is timed on its own, straight through its program, and only GM
transfers and block boundaries go through one global heap ordered by time. A transfer's share
of bandwidth is decided when it starts, from the transfers that started before it.
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Callable
from heapq import heappop, heappush
from itertools import count

import numpy as np

from ..trace import Kind, LaneKind, Trace
from ..trace.locations import CoreRef
from .cross_flags import cross_set, cross_take
from .dispatch_messages import KernelFault, cross_message, stuck_message, unmatched_message
from .memory_system import SharedMemorySystem
from .pipes import LANE_NAMES, N_PIPES, Pipe
from .program import (
    BARRIER,
    GM_READ,
    LOCAL,
    NOTE,
    SET,
    WAIT,
    XSET,
    XWAIT,
    Program,
    sched_of,
    topological_order,
)
from .scalar_unit import issue_rows, new_marks
from .steady import UNKNOWN, Placements, StretchMemo, place_rows

_NEXT_BLOCK, _SHARED = 0, 1  # what a heap event is: a group takes its next block, a core goes on
_PROGRESS_EVERY = 4096  # scheduler steps between progress reports (Trace.progress)

AIC_PIPES = (Pipe.S, Pipe.M, Pipe.MTE1, Pipe.MTE2, Pipe.FIX)
AIV_PIPES = (Pipe.S, Pipe.V, Pipe.MTE2, Pipe.MTE3)


class PhysicalCore:
    """Trace lanes of one physical core ("AIC 3", "AIV 17"): ``kind`` is "AIC" or "AIV"."""

    def __init__(self, trace: Trace, kind: str, ident: int, pipes: tuple[Pipe, ...], sort: int) -> None:
        self.kind = kind
        self.ident = ident
        self.label = label = CoreRef(kind, ident).label
        self.pipes = pipes
        self.lanes = np.full(N_PIPES, -1, dtype=np.int16)
        for p in pipes:
            self.lanes[p] = trace.lane(
                label, LANE_NAMES[p], sort, LaneKind.PIPE, core=ident, core_type=kind, pipe=int(p)
            )
        self.block_lane = trace.lane(label, "BLOCK", sort, LaneKind.BLOCK, core=ident, core_type=kind)


class _CoreRun:
    __slots__ = (
        "base",
        "block",
        "block_start",
        "core",
        "cursor",
        "ends",
        "flags",
        "group",
        "itab",
        "marks",
        "offsets",
        "order",
        "pending_state",
        "pipe_done",
        "pipe_free",
        "placed",
        "program",
        "role",
        "seg",
        "segs",
        "slot",
        "starts",
        "stretches",
        "timeline",
        "waiting",
    )

    def __init__(self, slot: int, core: PhysicalCore) -> None:
        self.slot = slot
        self.core = core
        self.program: Program | None = None
        self.waiting: int | None = None  # a cross-core flag this run is parked on
        self.role = 0  # 0: the AIC of a group (or a lone core); 1, 2: its AIVs


class _Group:
    """The cores that run one block together: one core, or 1 AIC + 2 AIV for a mixed kernel."""

    __slots__ = ("end", "index", "queues", "remaining", "runs")

    def __init__(self, index: int) -> None:
        self.index = index
        self.runs: list[_CoreRun] = []
        self.remaining = 0
        self.end = 0
        self.queues: dict[tuple[int, int, int], deque] = {}  # (flag, receiver role, sender role) -> set times


class KernelScheduler:
    """Times one kernel's blocks on its cores; appends every instruction to the trace."""

    def __init__(
        self,
        trace: Trace,
        memory: SharedMemorySystem,
        ps_per_cycle: float,
        issue: dict[str, list[list[int]]],  # core kind ("AIC", "AIV") -> ps to issue an instruction, [op][pipe]
        flag_cycles: int,
        cross_flag_cycles: int,
        cross_flag_max_count: int,
        groups: list[tuple[PhysicalCore, ...]],
        block_dim: int,
        record_block: Callable[[int, int], list[Program]],
        cause: int,
        block_name: Callable[[int], tuple[int, int]],  # block -> (trace name id, detail id)
        memo: bool = True,  # place repeated stretches of stamped templates by shifting (exact; see .steady)
    ) -> None:
        self.trace = trace
        self.memory = memory
        self.flag_ps = max(1, round(flag_cycles * ps_per_cycle))
        self.cross_ps = max(1, round(cross_flag_cycles * ps_per_cycle))
        self.cross_max = cross_flag_max_count
        self.block_dim = block_dim
        self.groups = [_Group(i) for i in range(min(block_dim, len(groups)))]
        self.memo = StretchMemo() if memo else None
        self.runs: list[_CoreRun] = []
        for group, cores in zip(self.groups, groups, strict=False):
            for role, core in enumerate(cores):
                run = _CoreRun(len(self.runs), core)
                run.group = group
                run.role = role
                run.itab = issue[core.kind]
                run.stretches = self.memo.table(run.itab) if self.memo is not None else None
                group.runs.append(run)
                self.runs.append(run)
        self.record_block = record_block
        self.cause = cause
        self.block_name = block_name
        self.instructions = 0
        self.block_spans: list[tuple[int, int, int, int]] = []  # (block, core slot, start, end)
        self._heap: list[tuple[int, int, int, int]] = []
        self._order = count()  # ties in time go in the order pushed
        self._next_block = 0

    def run(self, start: int) -> int:
        """Run every block; return the time the last one ends."""
        for group in self.groups[: self.block_dim]:
            self._push(start, _NEXT_BLOCK, group.index)
        end = start
        heap = self._heap
        countdown = _PROGRESS_EVERY
        while heap:
            countdown -= 1
            if not countdown:
                countdown = _PROGRESS_EVERY
                if self.trace.on_progress is not None:
                    self.trace.progress(self._timed())
            time, _seq, what, slot = heappop(heap)
            if what == _NEXT_BLOCK:
                end = max(end, time)
                if self._next_block < self.block_dim:
                    self._begin_block(self.groups[slot], time)
            else:  # a GM transfer's turn, or a run released by a cross-core flag
                next(self.runs[slot].timeline, None)
        stuck = [run for run in self.runs if run.waiting is not None]
        if stuck:
            raise KernelFault(0, "deadlock", *cross_message(stuck), {"block": stuck[0].block})
        return end

    def let_go(self) -> None:
        """Let go of the per-core state once the kernel has ended (the blocks' programs, the stretch memo): each
        run and its group refer to each other, so it would wait for a full garbage collection, held through the
        trace's freeze."""
        for group in self.groups:
            group.runs, group.queues = [], {}
        for run in self.runs:
            run.group = run.program = run.stretches = run.timeline = None
        self.runs, self.memo, self._heap = [], None, []

    def _timed(self) -> int:
        """Instructions timed and not yet appended to the trace (for progress reports)."""
        return sum(run.base + run.cursor for run in self.runs if run.program is not None and run.starts is not None)

    def release(self, when: int, run: _CoreRun) -> None:
        """``run`` goes on at ``when`` (a cross-core flag it waited for has arrived)."""
        self._push(when, _SHARED, run.slot)

    def _push(self, time: int, what: int, slot: int) -> None:
        heappush(self._heap, (time, next(self._order), what, slot))

    def _begin_block(self, group: _Group, time: int) -> None:
        block = self._next_block
        self._next_block += 1
        programs = self.record_block(block, group.index)
        if self.trace.on_progress is not None:  # counting the timed rows walks every core
            self.trace.progress(self._timed())
        group.remaining = len(group.runs)
        group.queues.clear()
        for run, program in zip(group.runs, programs, strict=True):
            self._load(run, program, block, time)
        for run in group.runs:
            next(run.timeline, None)

    def _load(self, run: _CoreRun, program: Program, block: int, time: int) -> None:
        order = None
        if program.forward_waits:
            instrs = program.instrs
            order, stuck = topological_order(instrs)
            if stuck:
                raise KernelFault(
                    0, "deadlock", *stuck_message(self.trace, run.core, block, instrs, stuck), {"block": block}
                )
            segs = [(*sched_of([instrs[i] for i in order]), None, None)]
        else:
            segs = program.sched_segments()
        run.program = program
        run.segs = segs
        run.seg = 0
        run.base = 0
        run.order = order
        run.block = block
        run.block_start = time
        run.cursor = 0
        run.marks = new_marks()  # the scalar unit's busy intervals: start, end, first and end position
        run.pipe_free = [time] * N_PIPES
        run.pipe_done = [time] * N_PIPES
        run.flags = [deque() for _ in range(program.max_flag_key + 1)]  # flag keys are small ints: a list
        run.waiting = None
        # typed arrays per segment, filled by position: no lists of ints, no index arithmetic
        run.starts = [array("q", bytes(8 * len(seg[0]))) for seg in segs]
        run.ends = [array("q", bytes(8 * len(seg[0]))) for seg in segs]
        run.offsets = np.cumsum([0, *(len(seg[0]) for seg in segs[:-1])]).tolist()  # each segment's first row
        run.placed = Placements()  # stretches the memo placed (their rows are written with the block's)
        run.pending_state = None  # (stretch, entry, reference) of a placed stretch whose state is partly pending
        run.timeline = self._timeline(run)

    def _timeline(self, run: _CoreRun):
        """Time the block's instructions in program order: a generator, paused at each GM transfer until its
        turn on the shared links comes (the heap resumes it), and at a cross-core wait whose flag is not set.

        The hot loop of the simulator: column lists indexed by position, plain comparisons instead of
        max(), locals instead of attributes, kept in the generator's frame across its pauses (each of these
        measurably matters here). ``issue`` is when the scalar unit has issued everything so far; it is busy
        from ``sc0`` on until it must wait (for scalar work, a barrier or a cross-core flag), and that
        interval goes to ``marks``. A stamped template's stretch entered in a state met before is placed by
        the memo (:mod:`.steady`); ``won`` says whether the issue time decided a start in the stretch being
        timed.
        """
        issue = sc0 = run.block_start
        sp0 = 0
        pipe_free = run.pipe_free
        pipe_done = run.pipe_done
        flags = run.flags
        tab = run.itab
        t_set, t_wait, t_local = tab[SET], tab[WAIT], tab[LOCAL]
        marks = run.marks
        flag_ps = self.flag_ps
        stretches = run.stretches
        memo = self.memo
        read, write = self.memory.read, self.memory.write
        heap, order, slot = self._heap, self._order, run.slot
        op_set, op_wait, op_local, op_note = SET, WAIT, LOCAL, NOTE  # locals: the fastest lookups
        b = 0
        for seg, (pipes, ops, costs, rates, keys, sizes, read_keys, template) in enumerate(run.segs):
            run.seg = seg
            starts = run.starts[seg]
            ends = run.ends[seg]
            n = len(pipes)
            first = 0
            while True:  # from the start, or from after a GM transfer, to the next transfer or the segment's end
                stop = n
                stretch = None
                won = False
                if template is not None and stretches is not None and first < n:
                    stretch = stretches.get((template, first), UNKNOWN)
                    if stretch is UNKNOWN:
                        stretch = memo.find(stretches, template, first, ops, pipes, keys, tab)
                    if stretch is not None:
                        found = memo.enter(run, stretch, issue)
                        if found is None:  # met before: placed, shifted
                            issue += stretch.cost
                            first = stretch.end
                            stretch = None
                        else:  # timed below, then remembered if the issue time decided nothing
                            ref, state = found
                            stop = stretch.end
                            at = issue - ref
                moved = -1
                while True:
                    for i in range(first, stop):
                        op = ops[i]
                        p = pipes[i]
                        # the frequent kinds first, each complete (pipe_done[p] >= pipe_free[p] always holds)
                        if op == op_set:  # fires once everything earlier on the pipe is done (data arrived)
                            issue += t_set[p]
                            s = pipe_done[p]
                            if issue > s:
                                s = issue
                                won = True
                            e = s + flag_ps
                            flags[keys[i]].append(e)
                            pipe_free[p] = pipe_done[p] = e
                        elif op == op_wait:
                            issue += t_wait[p]
                            s = pipe_free[p]
                            if issue > s:
                                s = issue
                                won = True
                            queue = flags[keys[i]]
                            if not queue:
                                raise KernelFault(
                                    0, "deadlock", *unmatched_message(self.trace, run, b + i, s), {"block": run.block}
                                )
                            e = queue.popleft()
                            e = (e if e > s else s) + flag_ps
                            pipe_free[p] = e
                            if e > pipe_done[p]:
                                pipe_done[p] = e
                        elif op == op_local:
                            issue += t_local[p]
                            s = pipe_free[p]
                            if issue > s:
                                s = issue
                                won = True
                            e = s + costs[i]
                            pipe_free[p] = e
                            if e > pipe_done[p]:
                                pipe_done[p] = e
                        elif op == op_note:  # a buffer event: no time, no issue slot, placed where its pipe is
                            s = pipe_free[p]
                            if issue > s:
                                s = issue
                                won = True
                            starts[i] = s
                            ends[i] = s
                            continue
                        else:
                            issue += tab[op][p]
                            s = pipe_free[p]
                            if issue > s:
                                s = issue
                            if op == BARRIER:
                                s = max(*pipe_done, *pipe_free, issue)
                                e = s + flag_ps
                                for q in range(N_PIPES):
                                    pipe_free[q] = e
                                    pipe_done[q] = e
                                if issue > sc0:  # the scalar unit waits for every pipe to drain
                                    marks.extend((sc0, issue, sp0, b + i + 1))
                                issue = sc0 = e
                                sp0 = b + i + 1
                            elif op == XSET:  # cross-core flag: fires once the pipe's earlier work is done
                                d = pipe_done[p]
                                if d > s:
                                    s = d
                                e = s + flag_ps
                                cross_set(self, run, keys[i], e + self.cross_ps, b + i)
                            elif op == XWAIT:  # holds every later instruction (ADK CrossCoreWaitFlag), not its pipe
                                fired = cross_take(run, keys[i])
                                while fired is None:  # the other core has not set it yet: park until it does
                                    run.cursor, run.base, run.waiting = i, b, keys[i]
                                    yield
                                    fired = cross_take(run, keys[i])
                                e = (fired if fired > s else s) + flag_ps
                                if issue > sc0:  # the scalar unit waits for the other core
                                    marks.extend((sc0, issue, sp0, b + i + 1))
                                issue = sc0 = e
                                sp0 = b + i + 1
                            else:  # GM_READ / GM_WRITE: take a turn on the shared links, in time order
                                run.cursor, run.base = i, b
                                heappush(heap, (s, next(order), _SHARED, slot))
                                yield
                                if op == GM_READ:
                                    key = keys[i] if read_keys is None else read_keys[i]
                                    e = s + costs[i] + read(key, sizes[i], s, rates[i])
                                else:
                                    e = s + costs[i] + write(sizes[i], s, rates[i])
                                pipe_free[p] = e
                                if e > pipe_done[p]:
                                    pipe_done[p] = e
                                starts[i] = s
                                ends[i] = e
                                moved = i
                                break
                            pipe_free[p] = e
                            if e > pipe_done[p]:
                                pipe_done[p] = e
                        if not p:  # scalar work holds the dispatcher
                            if issue > sc0:
                                marks.extend((sc0, issue, sp0, b + i + 1))
                            issue = sc0 = e
                            sp0 = b + i + 1
                        starts[i] = s
                        ends[i] = e
                    if stretch is None:
                        break
                    if not won:
                        stretch.keep(memo, state, at, ref, pipe_free, pipe_done, flags, starts, ends)
                    first, stop, stretch = stop, n, None
                if moved < 0:
                    break
                first = moved + 1
            b += n
        if issue > sc0:
            marks.extend((sc0, issue, sp0, b))
        run.cursor = run.base = b
        self._finish_block(run)

    def _finish_block(self, run: _CoreRun) -> None:
        StretchMemo.settle(run)  # (nothing is pending here: a placed stretch's successor is in its template)
        end = max(run.pipe_done)
        # the block's row first: among rows starting at the same instant it then comes before its instructions
        name, detail = self.block_name(run.block)
        self.trace.add(run.block_start, end, run.core.block_lane, Kind.BLOCK, name, cause=self.cause, detail=detail)
        self._flush(run)
        self.block_spans.append((run.block, run.slot, run.block_start, end))
        group = run.group
        group.end = max(group.end, end) if group.remaining < len(group.runs) else end
        group.remaining -= 1
        if group.remaining == 0:  # the group takes the next block when all its cores are done
            self._push(group.end, _NEXT_BLOCK, group.index)

    def _flush(self, run: _CoreRun) -> None:
        """Append the block's instructions to the trace as columns."""
        if not run.cursor:
            return
        cols = run.program.columns()
        if run.order is not None:
            idx = np.asarray(run.order)
            cols = {k: v[idx] for k, v in cols.items()}
        n = run.cursor
        notes = np.flatnonzero(cols["op"][:n] == NOTE)  # they issue nothing
        self.instructions += n - len(notes)
        starts, ends = _joined(run.starts, n), _joined(run.ends, n)
        place_rows(starts, ends, run.placed)
        self.trace.extend(
            start=starts,
            end=ends,
            lane=run.core.lanes[cols["pipe"][:n]],
            kind=cols["tkind"][:n],
            name=cols["name"][:n],
            nbytes=cols["nbytes"][:n],
            src=cols["src"][:n],
            detail=cols["detail"][:n],
            cause=np.full(n, self.cause, dtype=np.int32),
        )
        issue_rows(self.trace, run.marks, notes, int(run.core.lanes[Pipe.S]), self.cause)
        run.starts = run.ends = run.marks = run.placed = None  # the trace owns the arrays now


def _joined(parts: list[array], n: int) -> np.ndarray:
    """The first ``n`` values of per-segment typed arrays, as one int64 array."""
    if len(parts) == 1:
        return np.frombuffer(parts[0], dtype=np.int64, count=n)
    return np.concatenate([np.frombuffer(p, dtype=np.int64) for p in parts])[:n]
