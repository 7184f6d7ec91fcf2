"""Steady state: a stretch of a core's program timed once, then placed again by shifting it in time.

Between two GM transfers a block runs stretches of flags and local instructions (a K step's
``wait, load_data, set, wait, mmad, set, ...``) that only read and write the core's own pipes and
flags. Timing them is a max-plus computation: every start is the latest of a few earlier times (a
pipe free, a flag set, the scalar unit's issue time) and every end a start plus a constant. Such a
computation commutes with a shift: if everything it reads is ``d`` later, everything it writes is
``d`` later. So when a stretch of a stamped template (the same instructions, the same costs) is
entered in the same state *relative to one of its times* as before, its rows and the state it leaves
are the earlier ones shifted, exactly; the scheduler then places them with a few additions instead
of timing the instructions one by one (an 8192^3 matmul's K loops are about nine tenths such stretches).

**The key.** What a stretch reads: the free and done times of the pipes its instructions run on,
and the set times waiting in the flag queues they set or wait on (with their lengths). These,
relative to the first pipe's free time, are its key. A set time that one of the stretch's own waits
takes counts as no earlier than the waiting pipe is free at the stretch's start: that wait starts no
earlier, so an earlier set time cannot change what it does (this lets a flag set long ago match).
The scalar unit's issue time is read too, but it only advances by a constant (the stretch's issue
costs) and matters only where it is later than what an instruction waits for; a stretch is
remembered only when that never happened, and placed again only when the issue time is no later,
relative to the reference, than in a run that remembered or confirmed it: then it never mattered there.

**The chain.** Building a key reads every value the stretch reads, which costs about as much as
timing a third of it. In a steady K loop the next stretch's state is the state this one left, moved
only by the few instructions in between (a GM read, a flag): so a placed stretch leaves the values
those instructions touch written and keeps the others *pending* (the shifted values of its entry,
written only when something else needs them), and the next stretch is looked up by the previous
entry, the shift between the two references and the values the instructions in between left. That
determines its whole state, so the entry found is the one its key would find.

Stretches hold no GM transfer, no barrier, no cross-core flag and no scalar work (those end a
stretch: they read the shared links, every pipe, the other cores or the scalar unit's busy
intervals), and only stamped templates are memoised (their instructions are one object, reused).
``tests/test_steady_state.py`` compares every row, finding and end time with the memo off.
"""

from __future__ import annotations

from itertools import chain, repeat
from operator import itemgetter, sub

import numpy as np

from .pipes import N_PIPES
from .program import BARRIER, GM_READ, GM_WRITE, LOCAL, NOTE, SET, WAIT

MIN_STRETCH = 8  # instructions: a shorter stretch is timed one by one (a lookup costs about as much)
MAX_ENTRIES = 1 << 15  # remembered states per kernel launch (about 1 KB each); later ones are timed, not kept
MAX_LINKS = 64  # successors remembered per entry
_NO_FLOOR = N_PIPES  # index of the 0 appended to the pipes' free times: a queued set time no wait of the stretch takes
UNKNOWN = object()  # a table entry not looked for yet


def _getter(indices: list[int]):
    """``itemgetter`` that always returns a tuple (also for zero or one index)."""
    if len(indices) > 1:
        return itemgetter(*indices)
    if indices:
        i = indices[0]
        return lambda seq: (seq[i],)
    return lambda seq: ()


def _touched(ops: list, pipes: list, keys: list, span: range) -> tuple[set[int], set[int]]:
    """The pipes and flag keys that instructions ``span`` read or write."""
    touched_pipes, touched_flags = set(), set()
    for i in span:
        if ops[i] == BARRIER:
            touched_pipes.update(range(N_PIPES))
        else:
            touched_pipes.add(pipes[i])
        if ops[i] in (SET, WAIT):
            touched_flags.add(keys[i])
    return touched_pipes, touched_flags


class Entry:
    """What a stretch did from one relative state: its rows and the state it left, relative to the reference;
    the state is split as the stretch splits it (written at once, left pending)."""

    __slots__ = ("ends", "later", "links", "now", "slack", "starts")

    def __init__(self, slack: int, starts: np.ndarray, ends: np.ndarray, now: tuple, later: tuple) -> None:
        self.slack = slack  # the latest issue time (relative) at which the scalar unit is known not to matter
        self.starts = starts
        self.ends = ends
        self.now = now  # ([(pipe, free, done)], [(flag key, set times)])
        self.later = later  # the same, for what stays pending
        self.links: dict[tuple, Entry] = {}  # (next stretch, its chain key) -> its entry


class Stretch:
    """Instructions ``[start, end)`` of a template that the memo may place: what they read and cost to issue,
    and what the instructions up to the next stretch (``succ``) touch."""

    __slots__ = (
        "_floors",
        "_pipes",
        "_queues",
        "cost",
        "end",
        "entries",
        "first",
        "flags",
        "later",
        "links",
        "now",
        "pipes",
        "start",
        "succ",
    )

    def __init__(self, start: int, end: int, pipes: list[int], flags: list[tuple], cost: int) -> None:
        self.start = start
        self.end = end
        self.pipes = pipes  # touched pipes
        self.first = pipes[0]  # its free time is the reference
        self.flags = flags  # (flag key, the pipes of the stretch's waits on it, in order) per touched flag
        self.cost = cost  # the scalar unit's issue time for the stretch
        self.entries: dict[tuple, Entry] = {}
        self.succ: Stretch | None = None  # the next stretch of the template (set by StretchMemo.find)
        self.now = (pipes, [k for k, _w in flags])  # what to write when placed: everything, unless a successor
        self.later: tuple[list[int], list[int]] = ([], [])  # what may stay pending until the successor
        self.links: dict[Stretch, tuple | None] = {}  # successor -> how it chains (see link; None: it does not)
        self._pipes = _getter(pipes)
        self._queues = _getter([k for k, _waits in flags])
        self._floors: dict[tuple, object] = {}  # queue lengths -> getter of each queued time's floor

    # -- the key -------------------------------------------------------------------------------
    def state(self, pipe_free: list, pipe_done: list, flags: list) -> tuple[int, tuple]:
        """(reference time, the state the stretch reads relative to it)."""
        ref = pipe_free[self.first]
        queues = self._queues(flags)
        lengths = tuple(map(len, queues))
        floors = self._floors.get(lengths)
        if floors is None:
            floors = self._floors[lengths] = self._floor_getter(lengths)
        queued = map(max, chain.from_iterable(queues), floors([*pipe_free, 0]))
        pipes = self._pipes
        return ref, (lengths, *map(sub, chain(pipes(pipe_free), pipes(pipe_done), queued), repeat(ref)))

    def _floor_getter(self, lengths: tuple[int, ...]):
        """For queues of these lengths: per queued set time, the pipe whose free time bounds it from below
        (the pipe of the wait of this stretch that takes it), else the appended 0."""
        floors = []
        for (_k, waits), n in zip(self.flags, lengths, strict=True):
            floors += [waits[j] if j < len(waits) else _NO_FLOOR for j in range(n)]
        return _getter(floors)

    def keep(self, memo: StretchMemo, key: tuple, at: int, ref: int, pipe_free, pipe_done, flags, starts, ends):
        """Remember what the stretch just did from state ``key`` with the issue time ``at`` (relative), or
        confirm that a remembered entry also holds up to ``at``."""
        entry = self.entries.get(key)
        if entry is not None:
            if at > entry.slack:
                entry.slack = at
            return
        if memo.entries >= MAX_ENTRIES:
            return
        memo.entries += 1
        start, end = self.start, self.end

        def left(part: tuple[list[int], list[int]]) -> tuple[list, list]:
            return (
                [(p, pipe_free[p] - ref, pipe_done[p] - ref) for p in part[0]],
                [(k, [t - ref for t in flags[k]]) for k in part[1]],
            )

        self.entries[key] = Entry(
            at,
            np.frombuffer(starts, dtype=np.int64)[start:end] - ref,
            np.frombuffer(ends, dtype=np.int64)[start:end] - ref,
            left(self.now),
            left(self.later),
        )

    # -- the chain -----------------------------------------------------------------------------
    def link(self, after: Stretch) -> tuple:
        """How ``after`` (this stretch's successor) finds its entry from this one's: the position of its
        reference among the pipes left pending (None: written), a function of the lists and the two references
        giving the chain key, and what of the pending state ``after`` does not read (written before it)."""
        later_pipes, later_flags = self.later
        after_flags = [k for k, _w in after.flags]
        real_pipes = _getter([p for p in after.pipes if p not in later_pipes])
        real_queues = _getter([k for k in after_flags if k not in later_flags])
        pending_first = later_pipes.index(after.first) if after.first in later_pipes else None
        unread_pipes = _getter([i for i, p in enumerate(later_pipes) if p not in after.pipes])
        unread_flags = _getter([i for i, k in enumerate(later_flags) if k not in after_flags])

        def chain_key(pipe_free: list, pipe_done: list, flags: list, ref: int, before: int) -> tuple:
            queues = real_queues(flags)
            return (
                after,
                ref - before,
                tuple(map(len, queues)),
                *map(sub, chain(real_pipes(pipe_free), real_pipes(pipe_done), *queues), repeat(ref)),
            )

        def unread(later: tuple[list, list]) -> tuple[tuple, tuple]:
            return unread_pipes(later[0]), unread_flags(later[1])

        return pending_first, chain_key, unread


class StretchMemo:
    """The stretches of one kernel launch's templates, found on first use, per core kind (issue table), and
    what the scheduler calls to place them."""

    def __init__(self) -> None:
        self._tables: dict[int, dict] = {}
        self._found: dict[tuple, Stretch | None] = {}  # (template, start, issue table id) -> stretch, successor or not
        self.entries = 0

    def table(self, tab: list) -> dict:
        """``(template, start) -> Stretch | None`` for cores issuing with ``tab`` (filled by :meth:`find`)."""
        return self._tables.setdefault(id(tab), {})

    def find(self, table: dict, template, start: int, ops: list, pipes: list, keys: list, tab: list):
        """The memoisable stretch of ``template`` from ``start`` (None when it is too short), with its successor
        (``succ``: the first stretch the scheduler meets after it, after a GM transfer, if the template has
        one) and what it touches split into what the instructions up to there touch too (``now``) and the
        rest (``later``)."""
        stretch = self._stretch(template, start, ops, pipes, keys, tab)
        if stretch is not None and stretch.succ is None:
            n = len(ops)
            for g in range(stretch.end, n - 1):
                if ops[g] not in (GM_READ, GM_WRITE):
                    continue
                nxt = self._stretch(template, g + 1, ops, pipes, keys, tab)
                if nxt is None:
                    continue
                between_pipes, between_flags = _touched(ops, pipes, keys, range(stretch.end, g + 1))
                flag_keys = [k for k, _w in stretch.flags]
                stretch.now = (
                    [p for p in stretch.pipes if p in between_pipes],
                    [k for k in flag_keys if k in between_flags],
                )
                stretch.later = (
                    [p for p in stretch.pipes if p not in between_pipes],
                    [k for k in flag_keys if k not in between_flags],
                )
                stretch.succ = nxt
                break
        table[(template, start)] = stretch
        return stretch

    def _stretch(self, template, start: int, ops: list, pipes: list, keys: list, tab: list) -> Stretch | None:
        """The stretch from ``start`` as found first (one object per template, start and issue table)."""
        at = (template, start, id(tab))
        found = self._found.get(at, UNKNOWN)
        if found is UNKNOWN:
            found = self._found[at] = _new_stretch(start, ops, pipes, keys, tab)
        return found

    # -- placing -------------------------------------------------------------------------------
    def enter(self, run, stretch: Stretch, issue: int):
        """At the start of ``stretch``: place it when its state was met before (returns None), else return
        ``(reference, key)`` for the scheduler to time it and :meth:`Stretch.keep` it."""
        pipe_free, pipe_done, flags = run.pipe_free, run.pipe_done, run.flags
        pending = run.pending_state
        chain_key = None
        if pending is not None:
            run.pending_state = None
            before, entry, before_ref = pending
            link = before.links.get(stretch, UNKNOWN)
            if link is UNKNOWN:
                link = before.links[stretch] = before.link(stretch) if before.succ is stretch else None
            if link is not None:
                pending_first, key_of, unread = link
                if pending_first is None:
                    ref = pipe_free[stretch.first]
                else:
                    ref = entry.later[0][pending_first][1] + before_ref
                chain_key = key_of(pipe_free, pipe_done, flags, ref, before_ref)
                found = entry.links.get(chain_key)
                if found is not None and issue - ref <= found.slack:
                    _write(unread(entry.later), before_ref, pipe_free, pipe_done, flags)
                    self._place(run, stretch, found, ref)
                    return None
            _write(entry.later, before_ref, pipe_free, pipe_done, flags)
        ref, key = stretch.state(pipe_free, pipe_done, flags)
        found = stretch.entries.get(key)
        if found is not None and issue - ref <= found.slack:
            if chain_key is not None and len(entry.links) < MAX_LINKS:
                entry.links[chain_key] = found
            self._place(run, stretch, found, ref)
            return None
        return ref, key

    @staticmethod
    def _place(run, stretch: Stretch, entry: Entry, ref: int) -> None:
        """Place ``entry`` at ``ref``: its rows (written with the block's), the state it leaves written for what
        the instructions up to the successor touch, pending for the rest (whatever an entry it follows left
        pending, this one writes or leaves pending in turn)."""
        placed = run.placed
        placed.rows.append(run.offsets[run.seg] + stretch.start)
        placed.entries.append(entry)
        placed.refs.append(ref)
        _write(entry.now, ref, run.pipe_free, run.pipe_done, run.flags)
        if stretch.succ is not None:
            run.pending_state = (stretch, entry, ref)

    @staticmethod
    def settle(run) -> None:
        """Write whatever a placed stretch left pending (before anything else reads the core's state)."""
        pending = run.pending_state
        if pending is not None:
            run.pending_state = None
            _write(pending[1].later, pending[2], run.pipe_free, run.pipe_done, run.flags)


def _new_stretch(start: int, ops: list, pipes: list, keys: list, tab: list) -> Stretch | None:
    """The instructions from ``start`` a stretch may hold (None: fewer than MIN_STRETCH)."""
    end, n = start, len(ops)
    while end < n and (ops[end] == NOTE or (ops[end] in (SET, WAIT, LOCAL) and pipes[end])):
        end += 1
    if end - start < MIN_STRETCH:
        return None
    span = range(start, end)
    first = pipes[start]
    touched = sorted({pipes[i] for i in span} - {first})
    flags = sorted({keys[i] for i in span if ops[i] in (SET, WAIT)})
    return Stretch(
        start,
        end,
        [first, *touched],
        [(k, tuple(pipes[i] for i in span if ops[i] == WAIT and keys[i] == k)) for k in flags],
        sum(tab[ops[i]][pipes[i]] for i in span if ops[i] != NOTE),
    )


def _write(part: tuple[list, list], ref: int, pipe_free: list, pipe_done: list, flags: list) -> None:
    """Write pipes' free and done times and flag queues of an entry's part, shifted to ``ref`` (the queues in
    place: no object is made, so the garbage collector has nothing new to walk)."""
    for p, free, done in part[0]:
        pipe_free[p] = free + ref
        pipe_done[p] = done + ref
    for k, queue in part[1]:
        now = flags[k]
        if now:
            now.clear()
        for t in queue:
            now.append(t + ref)


class Placements:
    """The stretches placed in one block: each one's first row in the block, its entry and its reference."""

    __slots__ = ("entries", "refs", "rows")

    def __init__(self) -> None:
        self.rows: list[int] = []
        self.entries: list[Entry] = []
        self.refs: list[int] = []

    def __len__(self) -> int:
        return len(self.rows)


def place_rows(starts: np.ndarray, ends: np.ndarray, placed: Placements) -> None:
    """Write the rows of the stretches placed in a block into its joined start and end columns, all at once."""
    if not placed.rows:
        return
    firsts = np.array(placed.rows, dtype=np.int64)
    lengths = np.array([len(entry.starts) for entry in placed.entries], dtype=np.int64)
    shift = np.repeat(np.array(placed.refs, dtype=np.int64), lengths)
    rows = np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(firsts - (np.cumsum(lengths) - lengths), lengths)
    starts[rows] = np.concatenate([entry.starts for entry in placed.entries]) + shift
    ends[rows] = np.concatenate([entry.ends for entry in placed.entries]) + shift
