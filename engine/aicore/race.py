"""Race detection inside a block: happens-before over the pipes, with vector clocks.

Instructions on one pipe are ordered (in-order pipe). Across pipes, only ``set_flag`` ->
``wait_flag`` pairs (including the ones ``TQue`` issues) and ``pipe_barrier(PIPE_ALL)`` order
them. Every instruction's reads and writes of a buffer range (or a GM range) are checked against
earlier accesses by *other* pipes: if one of the two writes and neither is ordered before the
other, it is a race (read-after-write, write-after-read or write-after-write). The simulator
computes the numbers in program order, so a racy kernel would still "work" here: that is exactly
why the race is reported, naming both instructions, their pipes, the range and the source lines.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass

from .pipes import LANE_NAMES, N_PIPES

_PRUNE_AT = 48


@dataclass(frozen=True)
class Race:
    kind: str  # "read-after-write", "write-after-read", "write-after-write"
    region: str
    lo: int
    hi: int
    first: str  # description of the earlier instruction
    first_pipe: str
    first_src: str
    second: str
    second_pipe: str
    second_src: str

    def message(self) -> str:
        return (
            f"{self.kind} race on {self.region}[{self.lo}:{self.hi}): {self.second} on {self.second_pipe} "
            f"({self.second_src}) is not ordered after {self.first} on {self.first_pipe} ({self.first_src}); "
            f"add set_flag/wait_flag (or use a TQue) between them"
        )


class RaceDetector:
    """Vector clocks of the pipes of one block, and the accesses still worth checking."""

    def __init__(self) -> None:
        self.epoch = [0] * N_PIPES
        self.clock = [[0] * N_PIPES for _ in range(N_PIPES)]
        self._flags: dict[int, deque[list[int]]] = defaultdict(deque)
        self._accesses: dict[tuple, list[tuple]] = defaultdict(list)
        self.races: list[Race] = []
        self._seen: set[tuple] = set()

    def tick(self, pipe: int) -> int:
        self.epoch[pipe] += 1
        self.clock[pipe][pipe] = self.epoch[pipe]
        return self.epoch[pipe]

    def set_flag(self, pipe: int, key: int) -> None:
        self._flags[key].append(list(self.clock[pipe]))

    def wait_flag(self, pipe: int, key: int) -> None:
        queue = self._flags.get(key)
        if queue:
            snapshot = queue.popleft()
            mine = self.clock[pipe]
            for q in range(N_PIPES):
                mine[q] = max(mine[q], snapshot[q])

    def barrier(self) -> None:
        merged = [max(c[q] for c in self.clock) for q in range(N_PIPES)]
        for p in range(N_PIPES):
            self.clock[p] = list(merged)

    def access(
        self, pipe: int, epoch: int, region: tuple, label: str, lo: int, hi: int, write: bool, desc: str, src: str
    ) -> None:
        """Check ``[lo, hi)`` of ``region`` against unordered accesses of other pipes, then remember it."""
        if hi <= lo:
            return
        mine = self.clock[pipe]
        entries = self._accesses[region]
        for other_pipe, other_epoch, olo, ohi, owrite, odesc, osrc in entries:
            if other_pipe == pipe or (not write and not owrite) or ohi <= lo or olo >= hi:
                continue
            if other_epoch <= mine[other_pipe]:
                continue  # ordered before us
            kind = "write-after-write" if write and owrite else ("read-after-write" if owrite else "write-after-read")
            key = (osrc, src, kind)
            if key in self._seen:
                continue
            self._seen.add(key)
            self.races.append(
                Race(
                    kind,
                    label,
                    max(lo, olo),
                    min(hi, ohi),
                    odesc,
                    LANE_NAMES[other_pipe],
                    osrc,
                    desc,
                    LANE_NAMES[pipe],
                    src,
                )
            )
        entries.append((pipe, epoch, lo, hi, write, desc, src))
        if len(entries) > _PRUNE_AT:
            self._prune(entries)

    def _prune(self, entries: list[tuple]) -> None:
        """Drop accesses every pipe is already ordered after: nothing can race with them any more."""
        active = [p for p in range(N_PIPES) if self.epoch[p]] or list(range(N_PIPES))
        floor = [min(self.clock[p][q] for p in active) for q in range(N_PIPES)]
        entries[:] = [e for e in entries if e[1] > floor[e[0]]]
        if len(entries) > 4 * _PRUNE_AT:  # unsynchronised pipes never retire accesses: keep the newest
            del entries[: len(entries) - 2 * _PRUNE_AT]


def check_races(instrs: list[tuple], accesses: list[tuple], order: list[int] | None = None) -> list[Race]:
    """Run the happens-before check over a block's instructions in ``order`` (default: program order)."""
    from .program import BARRIER, KEY, OP, PIPE, SET, WAIT

    det = RaceDetector()
    for i in order if order is not None else range(len(instrs)):
        ins = instrs[i]
        pipe, op = ins[PIPE], ins[OP]
        if op == BARRIER:
            det.barrier()
            continue
        epoch = det.tick(pipe)
        if op == SET:
            det.set_flag(pipe, ins[KEY])
        elif op == WAIT:
            det.wait_flag(pipe, ins[KEY])
        if accesses[i] is None:  # a stamped copy of an instruction already checked in its template
            continue
        reads, writes, name, src = accesses[i]
        for region, label, lo, hi in reads:
            det.access(pipe, epoch, region, label, lo, hi, False, name, src)
        for region, label, lo, hi in writes:
            det.access(pipe, epoch, region, label, lo, hi, True, name, src)
    return det.races
