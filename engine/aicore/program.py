"""A block's program: the instructions its kernel code issued, in program order.

Each instruction is one tuple (cheap to append, cheap to iterate in the scheduler)::

    (pipe, op, cost_ps, rate, key, nbytes, flops, name, src, buf, slot, trace_kind)

``op`` says how the scheduler treats it:

* ``LOCAL``    runs on its pipe for ``cost_ps``;
* ``GM_READ``  an MTE2 read of GM: ``cost_ps`` of fixed set-up, then ``nbytes`` at up to ``rate``
  bytes/ps, sharing L2 or HBM bandwidth with every other core (``key`` names the GM tile for L2);
* ``GM_WRITE`` an MTE3/FIX write to GM, sharing HBM bandwidth;
* ``SET`` / ``WAIT`` a hardware flag (``key`` names ``(src pipe, dst pipe, event id)``);
* ``BARRIER``  ``pipe_barrier(PIPE_ALL)``: every pipe drains.
"""

from __future__ import annotations

import heapq
from collections import defaultdict, deque

import numpy as np

from .pipes import N_PIPES

LOCAL, GM_READ, GM_WRITE, SET, WAIT, BARRIER = range(6)

# tuple positions
PIPE, OP, COST, RATE, KEY, NBYTES, FLOPS, NAME, SRC, BUF, SLOT, TKIND = range(12)


class Program:
    """Instructions of one block plus what the scheduler needs to know about their flags."""

    __slots__ = ("_columns", "_segments", "_sets", "_waits", "block", "forward_waits", "instrs")

    def __init__(self, block: int) -> None:
        self.block = block
        self._columns: dict[str, np.ndarray] | None = None
        self._segments: list[tuple[int, dict]] = []  # (first index, cached columns) of stamped runs
        self.instrs: list[tuple] = []
        self.forward_waits = False  # a wait_flag precedes its set_flag in program order
        self._sets: dict[int, int] = defaultdict(int)
        self._waits: dict[int, int] = defaultdict(int)

    def add(self, instr: tuple) -> int:
        op = instr[OP]
        if op == SET:
            self._sets[instr[KEY]] += 1
        elif op == WAIT:
            key = instr[KEY]
            self._waits[key] += 1
            if self._waits[key] > self._sets[key]:
                self.forward_waits = True
        self.instrs.append(instr)
        return len(self.instrs) - 1

    def extend(self, instrs: list[tuple], flag_counts: dict[int, tuple[int, int]], columns: dict | None = None) -> None:
        """Append a run of instructions whose sets and waits per key are ``flag_counts`` (balanced).

        ``columns`` may give the run's static trace columns, computed once for a template.
        """
        for key, (sets, waits) in flag_counts.items():
            self._sets[key] += sets
            self._waits[key] += waits
        if columns is not None:
            self._segments.append((len(self.instrs), columns))
        self.instrs.extend(instrs)

    def unmatched_waits(self) -> dict[int, int]:
        """Flag keys whose waits outnumber their sets: key -> number of waits that can never end."""
        return {k: w - self._sets[k] for k, w in self._waits.items() if w > self._sets[k]}

    def __len__(self) -> int:
        return len(self.instrs)

    def columns(self) -> dict[str, np.ndarray]:
        """The static per-instruction columns the trace needs (computed once per program)."""
        if self._columns is None or len(self._columns["pipe"]) != len(self.instrs):
            parts = []
            at = 0
            for first, cols in self._segments:
                if first > at:
                    parts.append(columns_of(self.instrs[at:first]))
                parts.append(cols)
                at = first + len(cols["pipe"])
            if at < len(self.instrs) or not parts:
                parts.append(columns_of(self.instrs[at:]))
            self._columns = (
                parts[0] if len(parts) == 1 else {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
            )
        return self._columns


def columns_of(instrs: list[tuple]) -> dict[str, np.ndarray]:
    if not instrs:
        empty = np.zeros(0, dtype=np.int64)
        return dict.fromkeys(("pipe", "op", "tkind", "name", "nbytes", "flops", "src", "buf", "slot"), empty)
    cols = list(zip(*instrs, strict=True))
    return {
        "pipe": np.array(cols[PIPE], dtype=np.intp),
        "op": np.array(cols[OP], dtype=np.uint8),
        "tkind": np.array(cols[TKIND], dtype=np.uint8),
        "name": np.array(cols[NAME], dtype=np.int16),
        "nbytes": np.array(cols[NBYTES], dtype=np.int64),
        "flops": np.array(cols[FLOPS], dtype=np.int64),
        "src": np.array(cols[SRC], dtype=np.int32),
        "buf": np.array(cols[BUF], dtype=np.uint8),
        "slot": np.array(cols[SLOT], dtype=np.uint8),
    }


def topological_order(instrs: list[tuple]) -> tuple[list[int], list[int]]:
    """An execution order honouring pipe order, set->wait pairs and barriers.

    Used only for blocks where a wait comes before its set in program order (legal on hardware:
    the waiting pipe blocks while the scalar unit goes on issuing). Returns ``(order, stuck)``:
    ``stuck`` lists instructions that can never run (a wait cycle, or a wait with no set).
    Ties go to the earliest instruction in program order.
    """
    n = len(instrs)
    preds = [0] * n
    succ: list[list[int]] = [[] for _ in range(n)]
    last_on_pipe = [-1] * N_PIPES
    free_sets: dict[int, deque[int]] = defaultdict(deque)
    pending_waits: dict[int, deque[int]] = defaultdict(deque)
    since_barrier: list[int] = []

    def edge(a: int, b: int) -> None:
        succ[a].append(b)
        preds[b] += 1

    for i, ins in enumerate(instrs):
        op = ins[OP]
        if op == BARRIER:
            for j in since_barrier:
                edge(j, i)
            since_barrier = []
            last_on_pipe = [i] * N_PIPES
            continue
        p = ins[PIPE]
        if last_on_pipe[p] >= 0:
            edge(last_on_pipe[p], i)
        last_on_pipe[p] = i
        since_barrier.append(i)
        key = ins[KEY]
        if op == SET:
            if pending_waits[key]:
                succ[i].append(pending_waits[key].popleft())  # its pred count already holds this set
            else:
                free_sets[key].append(i)
        elif op == WAIT:
            if free_sets[key]:
                edge(free_sets[key].popleft(), i)
            else:
                pending_waits[key].append(i)
                preds[i] += 1  # held until a later set releases it (never, if none comes)
    order: list[int] = []
    heap = [i for i in range(n) if preds[i] == 0]
    heapq.heapify(heap)
    while heap:
        i = heapq.heappop(heap)
        order.append(i)
        for j in succ[i]:
            preds[j] -= 1
            if preds[j] == 0:
                heapq.heappush(heap, j)
    done = set(order)
    return order, [i for i in range(n) if i not in done]


def flag_counts(instrs: list[tuple]) -> dict[int, tuple[int, int]]:
    """Per flag key: how many sets and waits ``instrs`` contain."""
    counts: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for ins in instrs:
        if ins[OP] == SET:
            counts[ins[KEY]][0] += 1
        elif ins[OP] == WAIT:
            counts[ins[KEY]][1] += 1
    return {k: (v[0], v[1]) for k, v in counts.items()}
