"""Stamping: a kernel step recorded once, appended again at other GM addresses (the fast paths).

A kernel's program is a run of steps (a base block of a matmul, its LeakyReLU epilogue, ...).
Every step a core enters with its queues in the same state issues exactly the same instructions,
except that its GM reads and writes sit at other addresses. So a fast path runs the real code of a
step the first time it meets the step's *signature* and keeps what the core recorded as a
:class:`StepTemplate`; a later step with that signature is *stamped*: the template's instructions
are appended with the GM tile keys of their reads (for L2), the GM rectangles of their moves (their
trace details) and the GM write rectangles moved by each allocation's byte offset from the recorded
step, the queues are put in the state the template left them in, and in a mixed kernel its
cross-core flags are handed to the group recorder in order, so the AIC and the AIVs take turns
exactly as the real code makes them.

Everything the scheduler and the trace see is the same as running the step's code: the fast paths'
tests compare both on every trace column and every finding. Races are checked on each template when
it is recorded (a stamped copy is the same instructions at other addresses).
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import itemgetter

from engine.aicore.program import DETAIL, KEY, OP, SRC, XSET, XWAIT, Template
from engine.trace.detail import Instr, Rect


def queue_state(queues) -> tuple:
    """What decides the instructions a step's queue calls issue: each queue's next slot and slot states."""
    return tuple(que.slot_state() for que in queues)


def set_queue_state(queues, state: tuple) -> None:
    for que, slots in zip(queues, state, strict=True):
        que.set_slot_state(slots)


def gm_key(g) -> tuple[str, int]:
    """The allocation key of a GlobalTensor (what GM reads, writes and shifts are keyed by)."""
    return (g.alloc.where, g.alloc.ident)


class StepTemplate:
    """The last ``count`` instructions a core recorded (one step), and where their GM addresses are."""

    def __init__(self, ctx, count: int, first_write: int, queues) -> None:
        memory = ctx.launch.device.memory
        self.template = Template(ctx.program.tail(count))
        self.exit_state = queue_state(queues)
        instrs = self.template.instrs
        # per GM read: (alloc key, offset, rows, row bytes, stride) of its L2 tile
        self.reads = [memory.key_spec(instrs[pos][KEY]) for pos in self.template.reads]
        self.writes = list(ctx.gm_writes[first_write:])  # (alloc key, start, rows, row bytes, stride, src)
        details = ctx.sim.trace.details.items
        self.moves = []  # per GM move (read or write), in order: (its Instr, alloc key)
        for pos in self.template.moves.tolist():
            instr = details[instrs[pos][DETAIL]]
            gm = instr.dst if instr.dst.buf == 0 else instr.srcs[0]
            self.moves.append((instr, ("device", gm.owner)))
        srcs = ctx.sim.trace.srcs.items
        # cross-core flags in order: (is a set, flag id, source line of a wait)
        self.flags = [(ins[OP] == XSET, ins[KEY], srcs[ins[SRC]]) for ins in instrs if ins[OP] in (XSET, XWAIT)]
        # a copy moved by the same number of bytes in an allocation reads the same tiles there: their L2 keys and
        # details are the same
        self._keys = ByAllocation([spec[0] for spec in self.reads])
        self._details = ByAllocation([alloc for _instr, alloc in self.moves])

    def stamp(self, ctx, delta: Mapping[tuple, int], queues) -> None:
        """Append a copy of the step whose GM addresses in allocation ``a`` are ``delta[a]`` bytes further on."""
        memory = ctx.launch.device.memory
        reads, moves = self.reads, self.moves

        def key(i: int) -> int:  # the L2 tile key of GM read i
            alloc, offset, rows, row_bytes, stride = reads[i]
            return memory.tile_key(alloc, offset + delta[alloc], rows, row_bytes, stride)

        def detail(i: int) -> int:  # the detail id of GM move i
            instr, alloc = moves[i]
            return ctx.launch.detail_id(moved(instr, delta[alloc]))

        ctx.program.stamp(self.template, self._keys.values(delta, key), self._details.values(delta, detail))
        for alloc, start, rows, row_bytes, stride, src in self.writes:
            ctx.gm_writes.append((alloc, start + delta[alloc], rows, row_bytes, stride, src))
        set_queue_state(queues, self.exit_state)
        group = ctx.group
        for is_set, flag, where in self.flags:
            if is_set:
                group.cross_set(ctx.role, flag)
            else:
                group.cross_wait(ctx.role, flag, where)


class ByAllocation:
    """The values of a template's GM accesses in one copy (its reads' tile keys, its moves' details), kept per
    allocation and byte offset: a copy whose offset in allocation ``a`` was met before finds the values of every
    access to ``a`` at once (the same A tile in every column block of B)."""

    def __init__(self, allocs: list[tuple]) -> None:
        self.allocs = list(dict.fromkeys(allocs))  # in order of first access
        self._places = [[i for i, x in enumerate(allocs) if x == a] for a in self.allocs]
        joined = [i for places in self._places for i in places]  # the accesses, allocation by allocation
        at = {i: j for j, i in enumerate(joined)}
        order = [at[i] for i in range(len(allocs))]
        self._in_order = itemgetter(*order) if len(order) > 1 else tuple
        self._found: dict[tuple, list] = {}

    def values(self, delta: Mapping[tuple, int], value) -> tuple:
        """Every access's value, in access order, in a copy moved by ``delta``. ``value(i)`` finds access
        ``i``'s: called for the accesses to the allocations whose offsets are new, in access order (a new
        detail record takes the next id, as it would in a step run for real)."""
        found = [self._found.get((a, delta[a])) for a in self.allocs]
        if None in found:
            new = [k for k, f in enumerate(found) if f is None]
            fresh = {i: value(i) for i in sorted(i for k in new for i in self._places[k])}
            for k in new:
                a = self.allocs[k]
                found[k] = self._found[(a, delta[a])] = [fresh[i] for i in self._places[k]]
        joined: list = []
        for f in found:
            joined += f
        return self._in_order(joined)


def moved(instr: Instr, delta: int) -> Instr:
    """A GM move's detail with its GM rectangle ``delta`` bytes further on."""
    op, dst, srcs, flops, params = instr
    if dst.buf == 0:
        return Instr(op, _shifted(dst, delta), srcs, flops, params)
    return Instr(op, dst, (_shifted(srcs[0], delta), *srcs[1:]), flops, params)


def _shifted(r: Rect, delta: int) -> Rect:
    buf, owner, slot, start, rows, row_bytes, stride, dtype, position = r
    return Rect(buf, owner, slot, start + delta, rows, row_bytes, stride, dtype, position)


def record_or_stamp(ctx, templates: dict, signature, origin: tuple, delta_of, queues, step) -> None:
    """Run ``step()`` for real the first time ``signature`` is met (keeping its template and the ``origin``
    it was recorded at), else stamp the template with the GM offsets ``delta_of(origin)``."""
    found = templates.get(signature)
    if found is None:
        first, first_write = len(ctx.program), len(ctx.gm_writes)
        step()
        templates[signature] = (StepTemplate(ctx, len(ctx.program) - first, first_write, queues), origin)
    else:
        template, recorded_at = found
        template.stamp(ctx, delta_of(recorded_at), queues)
