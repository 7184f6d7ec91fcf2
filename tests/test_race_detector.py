"""The race detector's indexed accesses against the plain list it replaced (kept here as the oracle).

The detector keeps each region's accesses per lane in epoch order and checks only the suffix a pipe
has not seen; the oracle scans every remembered access and prunes the same way. Both must report the
same races, in the same order, on random single-core programs and random AIC + 2 AIV groups (flags,
barriers, cross-core flags, overlapping and disjoint ranges, pruning and the cap on unsynchronised
accesses included).
"""

import random

import pytest

from engine.aicore import race
from engine.aicore.pipes import N_PIPES
from engine.aicore.program import BARRIER, KEY, LOCAL, OP, PIPE, SET, WAIT, XSET, XWAIT
from engine.trace.detail import NO_SLOT, Rect


class ListDetector(race.RaceDetector):
    """The detector as it was: one list of accesses per region, scanned whole on every access."""

    def access(self, pipe, epoch, region, where, lo, hi, write, desc, src) -> None:
        if hi <= lo:
            return
        mine = self.clock[pipe]
        entries = self._accesses.setdefault(region, [])
        for other_pipe, other_epoch, olo, ohi, owrite, odesc, osrc in entries:
            if other_pipe == pipe or (not write and not owrite) or ohi <= lo or olo >= hi:
                continue
            if other_epoch <= mine[other_pipe]:
                continue
            self._report(write, owrite, where, lo, hi, olo, ohi, pipe, other_pipe, desc, odesc, src, osrc)
        entries.append((pipe, epoch, lo, hi, write, desc, src))
        if len(entries) > race._PRUNE_AT:
            self._prune_list(entries)

    def _prune_list(self, entries) -> None:
        pruned = self.__dict__.setdefault("_pruned", {})
        if self._started < 2 or pruned.get(id(entries)) != self._learned:
            pruned[id(entries)] = self._learned
            active = [p for p in range(self.n) if self.epoch[p]] or list(range(self.n))
            floor = [min(self.clock[p][q] for p in active) for q in range(self.n)]
            entries[:] = [e for e in entries if e[1] > floor[e[0]]]
        if len(entries) > 4 * race._PRUNE_AT:
            del entries[: len(entries) - 2 * race._PRUNE_AT]


def _program(rng: random.Random, n: int, pipes: int, flags: int, regions: int, group: bool, sync: float):
    instrs, accesses = [], []
    for i in range(n):
        r, p = rng.random(), rng.randrange(pipes)
        if r < sync:
            op = SET
        elif r < 2 * sync:
            op = WAIT
        elif r < 2 * sync + 0.02:
            op = BARRIER
        elif group and r < 2 * sync + 0.06:
            op = XSET
        elif group and r < 2 * sync + 0.10:
            op = XWAIT
        else:
            op = LOCAL
        ins = [0] * 11
        ins[PIPE], ins[OP], ins[KEY] = p, op, rng.randrange(flags)
        instrs.append(tuple(ins))
        if op == LOCAL and rng.random() < 0.9:

            def rect(p=p):
                k = rng.randrange(regions)
                lo = rng.randrange(200) if rng.random() < 0.3 else 1000 * p + rng.randrange(200)
                size = rng.randrange(60)
                return Rect(k, 7 if k == 0 else 1, rng.choice([NO_SLOT, 0, 1]), lo, 1, size, size, "float16", "VECIN")

            reads = tuple(rect() for _ in range(rng.randrange(3)))
            writes = tuple(rect() for _ in range(rng.randrange(2)))
            accesses.append((reads, writes, f"ins{i}", f"line{i}"))
        else:
            accesses.append(None)
    return instrs, accesses


def _both(monkeypatch, check, *args):
    """The races ``check(*args)`` reports with the detector, then with the oracle (as text, to compare)."""
    ours = [repr(r) for r in check(*args)]
    with monkeypatch.context() as m:
        m.setattr(race, "RaceDetector", ListDetector)
        theirs = [repr(r) for r in check(*args)]
    return ours, theirs


@pytest.mark.parametrize("seed", range(4))
def test_the_indexed_detector_reports_what_the_plain_scan_reports(seed, monkeypatch):
    rng = random.Random(seed)
    found = 0
    for _ in range(60):
        pipes = rng.choice([2, 3, N_PIPES])
        n = rng.choice([30, 150, 600])
        if rng.random() < 0.6:
            sync = rng.choice([0.0, 0.05, 0.15, 0.3, 0.4])
            instrs, accesses = _program(rng, n, pipes, rng.choice([1, 3]), rng.choice([1, 2, 4]), False, sync)
            ours, theirs = _both(monkeypatch, race.check_races, instrs, accesses)
        else:
            members = [(*_program(rng, n, pipes, 2, 3, True, 0.15), None) for _ in range(3)]
            labels = ["AIC 0", "AIV 0", "AIV 1"]
            try:
                ours, theirs = _both(monkeypatch, race.check_group_races, members, labels)
            except Exception as exc:  # a group whose cross-core flags never meet: both must refuse alike
                with monkeypatch.context() as m:
                    m.setattr(race, "RaceDetector", ListDetector)
                    with pytest.raises(type(exc)):
                        race.check_group_races(members, labels)
                continue
        assert ours == theirs
        found += bool(ours)
    assert found > 10  # the programs do race: the comparison is not between empty lists
