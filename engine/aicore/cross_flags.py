"""Cross-core flags of a mixed kernel's group (1 AIC + 2 AIV), at simulated time.

``CrossCoreSetFlag`` on the AIC reaches both AIVs of its group, on an AIV it reaches the AIC; a
``CrossCoreWaitFlag`` takes one set from each core that sends to it (the AIC waits for both AIVs).
Each (flag, receiver, sender) holds its set times in a queue; the scheduler
(:mod:`engine.aicore.dispatch`) parks a core whose wait finds a queue empty and releases it when
the set arrives. A queue holding more sets than the flag's counter is a kernel error (ADK).
"""

from __future__ import annotations

from collections import deque

from ..host.acl_codes import ACL_ERROR_RT_AICORE_EXCEPTION
from .dispatch_messages import KernelFault, describe, describe_zh
from .program import cross_peers


def cross_set(scheduler, run, flag: int, when: int, at: int) -> None:
    """``run``'s set of ``flag`` (its instruction ``at``) reaches its peers at ``when``; a peer parked on the
    flag is released (``scheduler.release``) once every set it waits for is there."""
    group = run.group
    for receiver in (group.runs[r] for r in cross_peers(run.role, len(group.runs))):
        queue = group.queues.setdefault((flag, receiver.role, run.role), deque())
        queue.append(when)
        limit = scheduler.cross_max
        if len(queue) > limit:
            ins = run.program.instrs[at]
            trace = scheduler.trace
            raise KernelFault(
                ACL_ERROR_RT_AICORE_EXCEPTION,
                "kernel-error",
                f"block {run.block}: {describe(trace, ins)} in {run.core.label} is set number "
                f"{len(queue)} of cross-core flag {flag} that {receiver.core.label} has not waited for yet; "
                f"a flag's counter holds at most {limit} sets (ADK CrossCoreSetFlag)",
                f"块 {run.block}: {run.core.label} 中的 {describe_zh(trace, ins)} 是跨核 flag {flag} 的第 "
                f"{len(queue)} 次 set，而 {receiver.core.label} 尚未等待它；一个 flag 的计数器最多容纳 "
                f"{limit} 次 set（ADK CrossCoreSetFlag）",
                {"block": run.block},
            )
        if receiver.waiting == flag and _ready(receiver, flag):
            receiver.waiting = None
            scheduler.release(when, receiver)


def _ready(run, flag: int) -> bool:
    queues = run.group.queues
    return all(queues.get((flag, run.role, sender)) for sender in cross_peers(run.role, len(run.group.runs)))


def cross_take(run, flag: int) -> int | None:
    """Consume one set of ``flag`` from each sender (the AIC waits for both AIVs) and return when the last
    arrived; None if one is missing."""
    if not _ready(run, flag):
        return None
    queues = run.group.queues
    return max(queues[(flag, run.role, s)].popleft() for s in cross_peers(run.role, len(run.group.runs)))
