"""The scalar unit: what issuing each instruction costs it, and the rows that show its work.

Every instruction of a block passes through the scalar unit, in program order: it computes the
instruction's addresses and parameters (address arithmetic, loop control, the set-up of a DataCopy
or an Mmad) and dispatches it into its pipe's queue. That work is what msprof reports as
``aic_scalar_time`` / ``aiv_scalar_time``. The pipes run in parallel with the scalar unit and with each
other, so issuing costs time only where it holds an instruction back: an instruction starts no earlier
than it was issued (:mod:`engine.aicore.dispatch`). While the pipes have work queued, the scalar unit
runs ahead of them; a block whose instructions are many and small (tiny tiles, many short vector
instructions) keeps it busier than any pipe, and the block becomes scalar-bound, as on hardware.

The cost of issuing one instruction depends on what it is (``[scalar]`` in the profile, cycles per
instruction): :func:`issue_table` turns it into picoseconds per ``(op, pipe)``. The scheduler records
the scalar unit's busy intervals and :func:`issue_rows` turns them into trace rows on the core's
SCALAR lane (kind COMPUTE, detail :class:`~engine.trace.detail.Issue` with the number of instructions issued).
Work a kernel asks for explicitly (``asc.scalar_work``, the Matmul API's iteration logic) is an
instruction of its own on the S pipe.
"""

from __future__ import annotations

from array import array

import numpy as np

from ..trace import Kind, Trace
from ..trace.detail import Issue
from .pipes import N_PIPES, Pipe
from .program import BARRIER, GM_READ, GM_WRITE, LOCAL, NOTE, SET, WAIT, XSET, XWAIT

ISSUE_NAME = "issue"  # the trace name of the scalar unit's issue rows


def issue_table(scalar, ps_per_cycle: float, gm_to_l1: bool) -> list[list[int]]:
    """Picoseconds the scalar unit spends issuing one instruction, indexed ``[op][pipe]``.

    ``gm_to_l1``: the core's GM reads go to L1 (a Cube kernel's ND -> NZ copies), else to UB.
    """

    def ps(cycles: int) -> int:
        return round(cycles * ps_per_cycle)

    flag = [ps(scalar.flag)] * N_PIPES
    local = [ps(scalar.copy_ub)] * N_PIPES
    local[Pipe.S] = 0  # scalar work is its own instruction: its cost is its duration
    local[Pipe.V] = ps(scalar.vector)
    local[Pipe.M] = ps(scalar.mmad)
    local[Pipe.MTE1] = ps(scalar.load_l0)
    local[Pipe.FIX] = ps(scalar.fixpipe)
    read = [ps(scalar.copy_l1 if gm_to_l1 else scalar.copy_ub)] * N_PIPES
    write = [ps(scalar.copy_ub)] * N_PIPES
    write[Pipe.FIX] = ps(scalar.fixpipe)
    table = [[0] * N_PIPES for _ in range(max(BARRIER, GM_READ, GM_WRITE, LOCAL, NOTE, SET, WAIT, XSET, XWAIT) + 1)]
    table[LOCAL], table[GM_READ], table[GM_WRITE] = local, read, write
    for op in (SET, WAIT, BARRIER, XSET, XWAIT):
        table[op] = flag
    return table


def new_marks() -> array:
    """The busy intervals of one block's scalar unit, flat: start, end, first position, end position."""
    return array("q")


def issue_rows(trace: Trace, marks: array, notes: np.ndarray, lane: int, cause: int) -> None:
    """Append one SCALAR row per busy interval in ``marks``; ``notes``: the positions of the block's NOTE rows
    (in the order its instructions were timed), which issue nothing, to count the instructions each interval
    issued."""
    if not marks:
        return
    m = np.frombuffer(marks, dtype=np.int64).reshape(-1, 4)
    counts = m[:, 3] - m[:, 2] - (np.searchsorted(notes, m[:, 3]) - np.searchsorted(notes, m[:, 2]))
    n = len(m)
    trace.extend(
        start=m[:, 0].copy(),
        end=m[:, 1].copy(),
        lane=np.full(n, lane, dtype=np.int16),
        kind=np.full(n, Kind.COMPUTE, dtype=np.uint8),
        name=np.full(n, trace.name(ISSUE_NAME), dtype=np.int16),
        detail=np.array([trace.detail(Issue(int(k))) for k in counts], dtype=np.int32),
        cause=np.full(n, cause, dtype=np.int32),
    )
