"""Why a kernel cannot go on, in words: the scheduler's fault and the messages of its deadlocks.

Each names the block, the core, the instruction (its name, pipe and source line) and what it waits
for, so a trainee can find the line to fix (:mod:`engine.aicore.dispatch` raises them).
"""

from __future__ import annotations

from ..trace import Trace
from .pipes import LANE_NAMES
from .program import KEY, NAME, OP, PIPE, SET, SRC, WAIT


class KernelFault(Exception):
    """A kernel cannot go on (deadlock, exception on the core); carries an ACL code, a finding kind and the
    message in English and Chinese (``message_zh``, required: written from the same facts where it is raised)."""

    def __init__(self, code: int, kind: str, message: str, message_zh: str, details: dict | None = None):
        super().__init__(message)
        self.code = code
        self.kind = kind
        self.message_zh = message_zh
        self.details = details or {}


def src_text(trace: Trace, ins: tuple) -> str:
    return trace.srcs.items[ins[SRC]] if ins[SRC] >= 0 else "?"


def describe(trace: Trace, ins: tuple) -> str:
    return f"{trace.names.items[ins[NAME]]} on {LANE_NAMES[ins[PIPE]]} ({src_text(trace, ins)})"


def describe_zh(trace: Trace, ins: tuple) -> str:
    return f"{LANE_NAMES[ins[PIPE]]} 上的 {trace.names.items[ins[NAME]]}（{src_text(trace, ins)}）"


def unmatched_message(trace: Trace, run, i: int, since: int) -> tuple[str, str]:
    """(English, Chinese)."""
    instrs = run.program.instrs
    if run.order is not None:
        instrs = [instrs[j] for j in run.order]
    ins = instrs[i]
    sets = sum(1 for x in instrs if x[OP] == SET and x[KEY] == ins[KEY])
    waits = sum(1 for x in instrs if x[OP] == WAIT and x[KEY] == ins[KEY])
    pipe = LANE_NAMES[ins[0]]
    return (
        f"deadlock in block {run.block} on {run.core.label}: {describe(trace, ins)} waits since "
        f"{since / 1e6:.3f} us for a flag that is never set: this block sets it {sets} time(s) and waits "
        f"for it {waits} time(s). The pipe {pipe} stops here and everything after it on that "
        "pipe never runs (the hardware would hit the AI core timeout).",
        f"{run.core.label} 上的块 {run.block} 死锁：{describe_zh(trace, ins)} 从 {since / 1e6:.3f} us 起等待一个"
        f"永远不会被 set 的 flag：本块 set 它 {sets} 次，却 wait 它 {waits} 次。{pipe} 流水线停在这里，"
        "其后的指令都不会执行（硬件会触发 AI Core 超时）。",
    )


def stuck_message(trace: Trace, core, block: int, instrs: list[tuple], stuck: list[int]) -> tuple[str, str]:
    """(English, Chinese)."""
    waits = [instrs[i] for i in stuck if instrs[i][OP] == WAIT]
    lines = [f"deadlock in block {block} on {core.label}: these waits can never be satisfied:"]
    lines_zh = [f"{core.label} 上的块 {block} 死锁：以下等待永远无法满足："]
    for ins in waits[:6]:
        lines.append(f"  {describe(trace, ins)}")
        lines_zh.append(f"  {describe_zh(trace, ins)}")
    lines.append(
        "each pipe blocks at its wait, and the set_flag that would release it sits behind another blocked wait "
        "(a cycle), or no set_flag for it exists."
    )
    lines_zh.append(
        "每条流水线都阻塞在自己的 wait 上，而能释放它的 set_flag 排在另一个被阻塞的 wait 之后（形成环），"
        "或者根本不存在。"
    )
    return "\n".join(lines), "\n".join(lines_zh)


def cross_message(stuck: list) -> tuple[str, str]:
    """Cannot happen for programs the group recorder accepted; kept so a scheduler bug ends loudly, not silently.
    (English, Chinese)."""
    lines = ["deadlock: cores wait for cross-core flags nobody sets:"]
    lines_zh = ["死锁：各核在等待没有任何核会 set 的跨核 flag："]
    for run in stuck:
        lines.append(f"  {run.core.label} (block {run.block}) waits for cross-core flag {run.waiting}")
        lines_zh.append(f"  {run.core.label}（块 {run.block}）等待跨核 flag {run.waiting}")
    return "\n".join(lines), "\n".join(lines_zh)
