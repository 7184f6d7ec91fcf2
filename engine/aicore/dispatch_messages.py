"""Why a kernel cannot go on, in words: the messages of the scheduler's deadlock faults.

Each names the block, the core, the instruction (its name, pipe and source line) and what it waits
for, so a trainee can find the line to fix (:mod:`engine.aicore.dispatch` raises them).
"""

from __future__ import annotations

from ..trace import Trace
from .pipes import LANE_NAMES
from .program import KEY, NAME, OP, PIPE, SET, SRC, WAIT


def src_text(trace: Trace, ins: tuple) -> str:
    return trace.srcs.items[ins[SRC]] if ins[SRC] >= 0 else "?"


def describe(trace: Trace, ins: tuple) -> str:
    return f"{trace.names.items[ins[NAME]]} on {LANE_NAMES[ins[PIPE]]} ({src_text(trace, ins)})"


def unmatched_message(trace: Trace, run, i: int, since: int) -> str:
    instrs = run.program.instrs
    if run.order is not None:
        instrs = [instrs[j] for j in run.order]
    ins = instrs[i]
    sets = sum(1 for x in instrs if x[OP] == SET and x[KEY] == ins[KEY])
    waits = sum(1 for x in instrs if x[OP] == WAIT and x[KEY] == ins[KEY])
    return (
        f"deadlock in block {run.block} on {run.core.label}: {describe(trace, ins)} waits since "
        f"{since / 1e6:.3f} us for a flag that is never set: this block sets it {sets} time(s) and waits "
        f"for it {waits} time(s). The pipe {LANE_NAMES[ins[0]]} stops here and everything after it on that "
        "pipe never runs (the hardware would hit the AI core timeout)."
    )


def stuck_message(trace: Trace, core, block: int, instrs: list[tuple], stuck: list[int]) -> str:
    waits = [instrs[i] for i in stuck if instrs[i][OP] == WAIT]
    lines = [f"deadlock in block {block} on {core.label}: these waits can never be satisfied:"]
    for ins in waits[:6]:
        lines.append(f"  {describe(trace, ins)}")
    lines.append(
        "each pipe blocks at its wait, and the set_flag that would release it sits behind another blocked wait "
        "(a cycle), or no set_flag for it exists."
    )
    return "\n".join(lines)


def cross_message(stuck: list) -> str:
    """Cannot happen for programs the group recorder accepted; kept so a scheduler bug ends loudly, not silently."""
    lines = ["deadlock: cores wait for cross-core flags nobody sets:"]
    for run in stuck:
        lines.append(f"  {run.core.label} (block {run.block}) waits for cross-core flag {run.waiting}")
    return "\n".join(lines)
