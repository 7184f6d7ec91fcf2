"""Race detection inside a block: happens-before over the pipes, with vector clocks.

Instructions on one pipe are ordered (in-order pipe). Across pipes, only ``set_flag`` ->
``wait_flag`` pairs (including the ones ``TQue`` issues) and ``pipe_barrier(PIPE_ALL)`` order
them. Every instruction's reads and writes of a buffer range (or a GM range) are checked against
earlier accesses by *other* pipes: if one of the two writes and neither is ordered before the
other, it is a race (read-after-write, write-after-read or write-after-write). The simulator
computes the numbers in program order, so a racy kernel would still "work" here: that is exactly
why the race is reported, naming both instructions, their pipes, the range and the source lines.

A mixed kernel's block runs on three cores (1 AIC + 2 AIV); :func:`check_group_races` checks them
together, with one clock lane per (core, pipe): cross-core flags order the cores (a set snapshots
its pipe's clock, a wait merges it into every pipe of the waiting core, since the wait holds every
instruction after it). Local buffers belong to one core; GM is shared by all three.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict, deque
from dataclasses import dataclass

from ..trace.detail import GM, NO_SLOT, Rect
from ..trace.findings import RACE_KIND_ZH
from .pipes import LANE_NAMES, N_PIPES
from .program import BARRIER, KEY, OP, PIPE, SET, WAIT, XSET, XWAIT, cross_peers
from .tensor import Buffer

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

    def message_zh(self) -> str:
        return (
            f"{self.region}[{self.lo}:{self.hi}) 上的{RACE_KIND_ZH.get(self.kind, self.kind)}数据竞争："
            f"{self.second_pipe} 上的 {self.second}（{self.second_src}）没有被排在 {self.first_pipe} 上的 "
            f"{self.first}（{self.first_src}）之后；请在两者之间加上 set_flag/wait_flag（或使用 TQue）"
        )


class RaceDetector:
    """Vector clocks of the pipes of one block (or of every core of a group), and the accesses still worth checking."""

    def __init__(self, lane_names: list[str] | None = None) -> None:
        self.names = lane_names or list(LANE_NAMES[:N_PIPES])
        n = self.n = len(self.names)
        self.epoch = [0] * n
        self.clock = [[0] * n for _ in range(n)]
        self._flags: dict[int, deque[list[int]]] = defaultdict(deque)
        self._accesses: dict[tuple, _Accesses] = {}
        self.races: list[Race] = []
        self._seen: set[tuple] = set()
        # bumped whenever a pipe learns of another's past (or starts): only then can a prune drop anything
        self._learned = 0
        self._started = 0  # pipes that issued something

    def tick(self, pipe: int) -> int:
        if not self.epoch[pipe]:
            self._learned += 1
            self._started += 1
        self.epoch[pipe] += 1
        self.clock[pipe][pipe] = self.epoch[pipe]
        return self.epoch[pipe]

    def set_flag(self, pipe: int, key: int) -> None:
        self._flags[key].append(list(self.clock[pipe]))

    def wait_flag(self, pipe: int, key: int) -> None:
        queue = self._flags.get(key)
        if queue:
            self.merge((pipe,), queue.popleft())

    def barrier(self, lanes: range | None = None) -> None:
        """``pipe_barrier(PIPE_ALL)``: the given lanes (default all) are ordered after each other's past."""
        lanes = range(self.n) if lanes is None else lanes
        self._learned += 1
        merged = [max(self.clock[p][q] for p in lanes) for q in range(self.n)]
        for p in lanes:
            self.clock[p] = list(merged)

    def merge(self, lanes, snapshot: list[int]) -> None:
        """Order every later instruction on ``lanes`` after ``snapshot`` (a wait: in-core on one lane,
        cross-core on every lane of the core)."""
        self._learned += 1
        for p in lanes:
            mine = self.clock[p]
            for q in range(self.n):
                if snapshot[q] > mine[q]:
                    mine[q] = snapshot[q]

    def access(
        self, pipe: int, epoch: int, region: tuple, where: Rect, lo: int, hi: int, write: bool, desc: str, src: str
    ) -> None:
        """Check ``[lo, hi)`` of ``region`` (``where`` names it in a report) against unordered accesses of
        other pipes, then remember it."""
        if hi <= lo:
            return
        mine = self.clock[pipe]
        lanes = self._accesses.get(region)
        if lanes is None:
            lanes = self._accesses[region] = _Accesses()
        hits = None
        for other_pipe, (epochs, items) in lanes.by_lane.items():
            # a lane's epochs only grow: the accesses it made that this pipe has not seen are a suffix
            if other_pipe == pipe or not epochs or epochs[-1] <= mine[other_pipe]:
                continue
            for item in items[bisect_right(epochs, mine[other_pipe]) :]:
                if (write or item[3]) and item[2] > lo and item[1] < hi:
                    if hits is None:
                        hits = []
                    hits.append((*item, other_pipe))
        if hits is not None:
            hits.sort()  # in the order the accesses were made
            for _seq, olo, ohi, owrite, odesc, osrc, other_pipe in hits:
                self._report(write, owrite, where, lo, hi, olo, ohi, pipe, other_pipe, desc, odesc, src, osrc)
        lanes.add(pipe, epoch, (lanes.seq, lo, hi, write, desc, src))
        if lanes.count > _PRUNE_AT:
            self._prune(lanes)

    def _report(self, write, owrite, where, lo, hi, olo, ohi, pipe, other_pipe, desc, odesc, src, osrc) -> None:
        kind = "write-after-write" if write and owrite else ("read-after-write" if owrite else "write-after-read")
        key = (osrc, src, kind)
        if key in self._seen:
            return
        self._seen.add(key)
        self.races.append(
            Race(
                kind,
                region_label(where),
                max(lo, olo),
                min(hi, ohi),
                odesc,
                self.names[other_pipe],
                osrc,
                desc,
                self.names[pipe],
                src,
            )
        )

    def _prune(self, lanes: _Accesses) -> None:
        """Drop accesses every pipe is already ordered after: nothing can race with them any more.

        Skipped when two or more pipes run and none learned anything since this region was last pruned:
        the accesses that survived then still would, and newer ones carry their pipe's latest epoch, which
        no other pipe knows yet. (With one pipe running, its own accesses are all behind it: always pruned.)
        """
        if self._started < 2 or lanes.pruned_at != self._learned:
            lanes.pruned_at = self._learned
            active = [p for p in range(self.n) if self.epoch[p]] or list(range(self.n))
            clock = self.clock
            for q in lanes.by_lane:
                lanes.drop_upto(q, min(clock[p][q] for p in active))
        if lanes.count > 4 * _PRUNE_AT:  # unsynchronised pipes never retire accesses: keep the newest
            lanes.keep_newest(2 * _PRUNE_AT)


class _Accesses:
    """The remembered accesses of one region, per lane in the lane's epoch order:
    ``by_lane[lane] = (epochs, items)``, an item ``(seq, lo, hi, write, desc, src)``; ``seq`` orders
    the accesses of all lanes as they were made."""

    __slots__ = ("by_lane", "count", "pruned_at", "seq")

    def __init__(self) -> None:
        self.by_lane: dict[int, tuple[list[int], list[tuple]]] = {}
        self.count = 0
        self.seq = 0
        self.pruned_at = -1

    def add(self, lane: int, epoch: int, item: tuple) -> None:
        found = self.by_lane.get(lane)
        if found is None:
            found = self.by_lane[lane] = ([], [])
        found[0].append(epoch)
        found[1].append(item)
        self.count += 1
        self.seq += 1

    def drop_upto(self, lane: int, epoch: int) -> None:
        """Forget the lane's accesses at or before ``epoch``."""
        epochs, items = self.by_lane[lane]
        cut = bisect_right(epochs, epoch)
        if cut:
            del epochs[:cut], items[:cut]
            self.count -= cut

    def keep_newest(self, count: int) -> None:
        first = sorted(item[0] for _epochs, items in self.by_lane.values() for item in items)[-count]
        for epochs, items in self.by_lane.values():
            cut = bisect_left([item[0] for item in items], first)
            del epochs[:cut], items[:cut]
        self.count = count


def check_races(instrs: list[tuple], accesses: list[tuple], order: list[int] | None = None) -> list[Race]:
    """Run the happens-before check over a block's instructions in ``order`` (default: program order)."""
    return check_group_races([(instrs, accesses, order)], None)


def check_group_races(members: list[tuple], core_labels: list[str] | None) -> list[Race]:
    """Races among the cores of one group; ``members[role] = (instrs, accesses, order or None)``.

    Role 0 is the AIC: its cross-core sets reach every AIV and its waits take one set of each AIV;
    an AIV's sets reach the AIC. The programs are replayed in an order the cross-core flags allow
    (each core runs until a wait whose sets have not been replayed yet).
    """
    n = len(members)
    names = None if core_labels is None else [f"{c} {LANE_NAMES[p]}" for c in core_labels for p in range(N_PIPES)]
    det = RaceDetector(names)
    queues: dict[tuple[int, int, int], deque[list[int]]] = defaultdict(deque)  # (flag, sender, receiver)
    orders = [list(order) if order is not None else range(len(instrs)) for instrs, _acc, order in members]
    cursor = [0] * n

    progress = True
    while progress:
        progress = False
        for role, (instrs, accesses, _order) in enumerate(members):
            base = role * N_PIPES
            lanes = range(base, base + N_PIPES)
            order = orders[role]
            while cursor[role] < len(order):
                i = order[cursor[role]]
                ins = instrs[i]
                op, lane = ins[OP], base + ins[PIPE]
                if op == XWAIT:
                    keys = [(ins[KEY], s, role) for s in cross_peers(role, n)]
                    if not all(queues[k] for k in keys):
                        break
                    for k in keys:
                        det.merge(lanes, queues[k].popleft())
                cursor[role] += 1
                progress = True
                if op == BARRIER:
                    det.barrier(lanes)
                    continue
                epoch = det.tick(lane)
                if op == SET:
                    det.set_flag(lane, (role, ins[KEY]))
                elif op == WAIT:
                    det.wait_flag(lane, (role, ins[KEY]))
                elif op == XSET:
                    for r in cross_peers(role, n):
                        queues[(ins[KEY], role, r)].append(list(det.clock[lane]))
                if accesses[i] is None:
                    continue
                reads, writes, name, src = accesses[i]
                for r in reads:
                    det.access(lane, epoch, _region(r, role), r, r.start, r.end, False, name, src)
                for r in writes:
                    det.access(lane, epoch, _region(r, role), r, r.start, r.end, True, name, src)
    return det.races


def _region(r: Rect, role: int) -> tuple:
    """What a rectangle is checked within: a GM allocation (shared by a group's cores), or a local
    buffer of one core."""
    return (GM, r.owner) if r.buf == GM else (r.buf, role)


def region_label(r: Rect) -> str:
    """How a report names a rectangle's region: ``GM#3``, ``UB(VECIN slot 1)``."""
    if r.buf == GM:
        return f"GM#{r.owner}"
    slot = f" slot {r.slot}" if r.slot != NO_SLOT else ""
    return f"{Buffer(r.buf).name}({r.position}{slot})"
