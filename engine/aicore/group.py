"""Mixed kernels: one block runs on a group of 1 AIC + 2 AIV cores that signal each other.

The kernel function runs three times per block — as the AIC (``ascend_is_aic()``) and as each AIV
(``ascend_is_aiv()``, ``get_subblockidx()`` 0 or 1) — and the three synchronise with cross-core
flags: ``cross_core_set_flag(id)`` on the AIC reaches both AIVs, on an AIV it reaches the AIC;
``cross_core_wait_flag(id)`` on an AIV takes one set of the AIC, on the AIC one set of each AIV.

While recording, the three run as threads that take turns (a baton: exactly one runs at a time, in a
fixed order), so data one core produces before a set is really there when another reads it after
the wait, and every run is identical. A wait no set can ever satisfy is a deadlock, diagnosed.
Races between the three are found afterwards over their programs (``race.check_group_races``);
the timing comes from the scheduler, which replays the cross-core flags at simulated time.
"""

from __future__ import annotations

import threading
from collections import defaultdict

from .dispatch import KernelFault
from .program import cross_peers


class _Aborted(BaseException):
    """Unwinds a core's kernel code when another core of the group failed."""


class GroupRecorder:
    def __init__(self, contexts: list, body, args: tuple) -> None:
        self.ctxs = contexts
        self.body = body
        self.args = args
        self.n = len(contexts)
        self.cond = threading.Condition()
        self.turn = 0
        self.done = [False] * self.n
        self.waiting: list[int | None] = [None] * self.n
        self.where = [""] * self.n  # source line of each core's pending wait
        self.sets: dict[tuple[int, int, int], int] = defaultdict(int)  # (flag, sender, receiver) -> sets
        self.taken: dict[tuple[int, int, int], int] = defaultdict(int)  # ... -> sets consumed by waits
        self.failure: BaseException | None = None
        self.aborted = False
        for role, ctx in enumerate(contexts):
            ctx.group = self
            ctx.role = role

    # -- running ----------------------------------------------------------------------------------
    def run(self) -> None:
        threads = [threading.Thread(target=self._main, args=(i,), daemon=True) for i in range(self.n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if self.failure is not None:
            raise self.failure

    def _main(self, i: int) -> None:
        with self.cond:
            self.cond.wait_for(lambda: self.turn == i or self.aborted)
        try:
            if not self.aborted:
                with self.ctxs[i]:
                    self.body(*self.args)
        except _Aborted:
            pass
        except BaseException as exc:  # handed to the launching thread
            with self.cond:
                if self.failure is None:
                    self.failure = exc
                self.aborted = True
                self.cond.notify_all()
        with self.cond:
            self.done[i] = True
            self._pass(i)

    def _satisfiable(self, i: int) -> bool:
        flag = self.waiting[i]
        return all(self.sets[(flag, s, i)] > self.taken[(flag, s, i)] for s in cross_peers(i, self.n))

    def _pass(self, i: int) -> None:
        """Hand the baton to the next core that can run (called with the lock held)."""
        if self.aborted:
            self.cond.notify_all()
            return
        for k in range(1, self.n + 1):
            j = (i + k) % self.n
            if not self.done[j] and (self.waiting[j] is None or self._satisfiable(j)):
                self.turn = j
                self.cond.notify_all()
                return
        if not all(self.done):
            lines = [
                f"  {ctx.core.label}: "
                + (
                    "finished"
                    if self.done[j]
                    else f"waits at cross_core_wait_flag({self.waiting[j]}) ({self.where[j]})"
                )
                for j, ctx in enumerate(self.ctxs)
            ]
            lines_zh = [
                f"  {ctx.core.label}: "
                + ("已完成" if self.done[j] else f"等待在 cross_core_wait_flag({self.waiting[j]})（{self.where[j]}）")
                for j, ctx in enumerate(self.ctxs)
            ]
            self.failure = KernelFault(
                0,
                "deadlock",
                f"deadlock in block {self.ctxs[0].block_idx}: its cores wait for cross-core flags that no core "
                "of the group will set any more:\n" + "\n".join(lines),
                f"块 {self.ctxs[0].block_idx} 死锁：它的各个核在等待组内再也没有核会 set 的跨核 flag：\n"
                + "\n".join(lines_zh),
                {"block": self.ctxs[0].block_idx},
            )
            self.aborted = True
        self.cond.notify_all()

    # -- cross-core flags (called from kernel code, on the core's own thread) ------------------------
    def cross_set(self, i: int, flag: int) -> None:
        with self.cond:
            for r in cross_peers(i, self.n):
                self.sets[(flag, i, r)] += 1

    def cross_wait(self, i: int, flag: int, where: str) -> None:
        with self.cond:
            self.waiting[i] = flag
            self.where[i] = where
            if not self._satisfiable(i):
                self._pass(i)
                self.cond.wait_for(lambda: (self.turn == i and self._satisfiable(i)) or self.aborted)
            if self.aborted:
                raise _Aborted
            self.waiting[i] = None
            for s in cross_peers(i, self.n):
                self.taken[(flag, s, i)] += 1
