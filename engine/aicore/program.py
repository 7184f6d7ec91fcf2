"""A block's program: the instructions its kernel code issued, in program order.

Each instruction is one tuple (cheap to append, cheap to iterate in the scheduler)::

    (pipe, op, cost_ps, rate, key, nbytes, flops, name, src, trace_kind, detail)

``detail`` is the trace's id of the instruction's typed meaning (:mod:`engine.trace.detail`).

``op`` says how the scheduler treats it:

* ``LOCAL``    runs on its pipe for ``cost_ps``;
* ``GM_READ``  an MTE2 read of GM: ``cost_ps`` of fixed set-up, then ``nbytes`` at up to ``rate``
  bytes/ps, sharing L2 or HBM bandwidth with every other core (``key`` names the GM tile for L2);
* ``GM_WRITE`` an MTE3/FIX write to GM, sharing HBM bandwidth;
* ``SET`` / ``WAIT`` a hardware flag (``key`` names ``(src pipe, dst pipe, event id)``);
* ``BARRIER``  ``pipe_barrier(PIPE_ALL)``: every pipe drains;
* ``XSET`` / ``XWAIT`` a cross-core flag between the AIC and the AIVs of a mixed kernel's group
  (``key`` is the flag id);
* ``NOTE``     a buffer event that implies no hardware work (``init_buffer``, the first
  ``alloc_tensor`` of a slot, a ``TBuf.get``, a user's mark): it takes no time and no issue slot and
  is placed when its pipe reaches it, so the trace can say when a slot changed hands.
"""

from __future__ import annotations

import heapq
from collections import defaultdict, deque

import numpy as np

from .pipes import N_PIPES

LOCAL, GM_READ, GM_WRITE, SET, WAIT, BARRIER, XSET, XWAIT, NOTE = range(9)


def cross_peers(role: int, n: int) -> range:
    """The roles a core's cross-core sets reach and its waits take sets from: the AIC (role 0) pairs
    with every AIV of its group (roles 1..n-1), an AIV with the AIC."""
    return range(1, n) if role == 0 else range(1)


# tuple positions
PIPE, OP, COST, RATE, KEY, NBYTES, FLOPS, NAME, SRC, TKIND, DETAIL = range(11)


class Template:
    """A run of instructions recorded once and appended again and again (see ``kernels/matmul_fast``).

    Holds the instructions, their static trace columns and their scheduling columns, so stamping a
    copy costs a few list extends; only the GM tile keys of reads and the details of GM moves (their
    tiles) change from copy to copy.
    """

    __slots__ = ("columns", "flag_counts", "instrs", "moves", "reads", "sched", "totals")

    def __init__(self, instrs: list[tuple]) -> None:
        self.instrs = instrs
        self.columns, self.totals = columns_of(instrs)
        self.flag_counts = flag_counts(instrs)
        self.sched = sched_of(instrs)
        self.reads = [i for i, ins in enumerate(instrs) if ins[OP] == GM_READ]
        self.moves = np.array([i for i, ins in enumerate(instrs) if ins[OP] in (GM_READ, GM_WRITE)], dtype=np.intp)


class Program:
    """Instructions of one block, as recorded runs of tuples and stamped templates, in order."""

    __slots__ = (
        "_columns",
        "_records",
        "_sets",
        "_totals",
        "_waits",
        "block",
        "forward_waits",
        "length",
        "max_flag_key",
        "segments",
    )

    def __init__(self, block: int) -> None:
        self.block = block
        self._columns: dict[str, np.ndarray] | None = None
        self._totals = (0, 0)  # flops, bytes moved to or from GM (with the columns)
        self._records: list[tuple] = []  # the open recorded run
        # ("rec", tuples) or ("tpl", template, keys of its reads, details of its GM moves)
        self.segments: list[tuple] = []
        self.length = 0
        self.max_flag_key = -1
        self.forward_waits = False  # a wait_flag precedes its set_flag in program order
        self._sets: dict[int, int] = defaultdict(int)
        self._waits: dict[int, int] = defaultdict(int)

    def add(self, instr: tuple) -> int:
        op = instr[OP]
        if op in (SET, WAIT):
            key = instr[KEY]
            if key > self.max_flag_key:
                self.max_flag_key = key
            if op == SET:
                self._sets[key] += 1
            else:
                self._waits[key] += 1
                if self._waits[key] > self._sets[key]:
                    self.forward_waits = True
        if not self._records:
            self.segments.append(("rec", self._records))
        self._records.append(instr)
        self.length += 1
        return self.length - 1

    def stamp(self, template: Template, read_keys: list[int], move_details: list[int]) -> None:
        """Append a copy of ``template`` whose GM reads use ``read_keys`` and whose GM moves (reads and
        writes, in order) have the details ``move_details`` (its sets and waits balance)."""
        for key, (sets, waits) in template.flag_counts.items():
            self._sets[key] += sets
            self._waits[key] += waits
            if key > self.max_flag_key:
                self.max_flag_key = key
        self._records = []
        self.segments.append(("tpl", template, read_keys, move_details))
        self.length += len(template.instrs)

    def tail(self, count: int) -> list[tuple]:
        """The last ``count`` instructions (stamped copies among them rebuilt)."""
        if count <= len(self._records):
            return self._records[len(self._records) - count :]
        parts, have = [], 0
        for seg in reversed(self.segments):
            if have >= count:
                break
            parts.append(_instrs_of(seg))
            have += len(parts[-1])
        out = [ins for part in reversed(parts) for ins in part]
        return out[len(out) - count :]

    @property
    def instrs(self) -> list[tuple]:
        """Every instruction as a tuple (stamped copies rebuilt: use for checks and diagnoses, not hot paths)."""
        return [ins for seg in self.segments for ins in _instrs_of(seg)]

    def __len__(self) -> int:
        return self.length

    def sched_segments(self) -> list[tuple]:
        """What the scheduler's hot loop reads, segment by segment, without copying templates:
        ``(pipe, op, cost, rate, key, nbytes, read_keys, template)`` column lists, where ``read_keys`` maps a
        position to the GM tile key of that copy of a template and ``template`` is the template (both None for
        recorded runs)."""
        out = []
        for seg in self.segments:
            if seg[0] == "rec":
                out.append((*sched_of(seg[1]), None, None))
            else:
                template, keys = seg[1], seg[2]
                out.append((*template.sched, dict(zip(template.reads, keys, strict=True)), template))
        return out

    def columns(self) -> dict[str, np.ndarray]:
        """The static per-instruction columns a block's rows are made of (see :func:`columns_of`; computed once per
        program)."""
        if self._columns is None or len(self._columns["pipe"]) != self.length:
            found = [columns_of(seg[1]) if seg[0] == "rec" else _stamped_columns(seg) for seg in self.segments]
            parts = [cols for cols, _totals in found] or [columns_of([])[0]]
            self._columns = (
                parts[0] if len(parts) == 1 else {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
            )
            self._totals = (sum(t[0] for _c, t in found), sum(t[1] for _c, t in found))
        return self._columns

    def totals(self) -> tuple[int, int]:
        """(flops, bytes moved to or from GM) of every instruction."""
        self.columns()
        return self._totals


def _instrs_of(seg: tuple) -> list[tuple]:
    """A segment's instructions: a recorded run's, or a stamped copy's rebuilt (its GM reads' keys and moves'
    details in place)."""
    if seg[0] == "rec":
        return seg[1]
    template, keys, details = seg[1], seg[2], seg[3]
    copy = list(template.instrs)
    for pos, key in zip(template.reads, keys, strict=True):
        ins = copy[pos]
        copy[pos] = (*ins[:KEY], key, *ins[KEY + 1 :])
    for pos, detail in zip(template.moves.tolist(), details, strict=True):
        copy[pos] = (*copy[pos][:DETAIL], detail)
    return copy


def _stamped_columns(seg: tuple) -> tuple[dict[str, np.ndarray], tuple[int, int]]:
    """A template's columns with this copy's GM-move details (the other columns are shared), and its totals."""
    template, details = seg[1], seg[3]
    if not len(template.moves):
        return template.columns, template.totals
    cols = dict(template.columns)
    detail = cols["detail"].copy()
    detail[template.moves] = details
    cols["detail"] = detail
    return cols, template.totals


def sched_of(instrs: list[tuple]) -> tuple[list, ...]:
    if not instrs:
        return ([], [], [], [], [], [])
    cols = list(zip(*instrs, strict=True))
    return (list(cols[PIPE]), list(cols[OP]), list(cols[COST]), list(cols[RATE]), list(cols[KEY]), list(cols[NBYTES]))


def flag_counts(instrs: list[tuple]) -> dict[int, tuple[int, int]]:
    """Per flag key: how many sets and waits ``instrs`` contain."""
    counts: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for ins in instrs:
        if ins[OP] == SET:
            counts[ins[KEY]][0] += 1
        elif ins[OP] == WAIT:
            counts[ins[KEY]][1] += 1
    return {k: (v[0], v[1]) for k, v in counts.items()}


_TRACE_COLUMNS = (  # (name, tuple position, type)
    ("pipe", PIPE, np.uint8),
    ("op", OP, np.uint8),
    ("tkind", TKIND, np.uint8),
    ("name", NAME, np.int16),
    ("nbytes", NBYTES, np.int64),
    ("src", SRC, np.int32),
    ("detail", DETAIL, np.int32),
)


def columns_of(instrs: list[tuple]) -> tuple[dict[str, np.ndarray], tuple[int, int]]:
    """The per-instruction columns of ``instrs`` and their totals: (flops, bytes moved to or from GM). The trace
    keeps ``tkind``, ``name``, ``nbytes``, ``src`` and ``detail`` as they are (its own types: no copy); ``pipe``
    becomes the core's lanes and ``op`` tells the NOTE rows apart."""
    if not instrs:
        return {name: np.zeros(0, dtype=dtype) for name, _at, dtype in _TRACE_COLUMNS}, (0, 0)
    cols = list(zip(*instrs, strict=True))
    out = {name: np.array(cols[at], dtype=dtype) for name, at, dtype in _TRACE_COLUMNS}
    moves = (out["op"] == GM_READ) | (out["op"] == GM_WRITE)
    return out, (int(sum(cols[FLOPS])), int(out["nbytes"][moves].sum()))


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
