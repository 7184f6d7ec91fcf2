"""Run a scenario call by call while recording what the engine's buffers really hold after each
instruction and how each queue slot really changes state: the ground truth replay tests compare to."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from engine import Simulation
from engine.aicore.program import DETAIL
from engine.aicore.tpipe import TQue
from engine.scenarios.runner import get_scenario
from engine.trace.detail import GM, Instr


def first_mmad(replay) -> int:
    """The step of a run's first mmad (a block's first COMPUTE row is the scalar unit issuing, on its SCALAR
    lane, so "the first COMPUTE step" is not it)."""
    t = replay.trace
    return replay.next_where(0, np.flatnonzero(t.name == t.names.index("mmad")))


def _rect_bytes(ctx, rect) -> np.ndarray:
    if rect.buf == GM:
        alloc = next(a for a in ctx.sim.devmem.space.live() if a.ident == rect.owner)
        raw = ctx.sim.devmem.view(alloc)
    else:
        from engine.aicore.tensor import Buffer

        raw = ctx.buffer_bytes(Buffer(rect.buf))
    flat = raw[rect.start : rect.end]
    rows = np.lib.stride_tricks.as_strided(flat, (rect.rows, rect.row_bytes), (rect.stride, 1))
    return np.ascontiguousarray(rows).view(np.dtype(rect.dtype)).copy()


class GroundTruth:
    """What the call-by-call engine did: per (core, detail id), the destination values after each
    occurrence; per core, every queue slot's state changes in program order."""

    def __init__(self) -> None:
        self.writes: dict[tuple[str, int], list[np.ndarray]] = defaultdict(list)
        self.slot_changes: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
        self.details: list = []

    def probe(self, ctx) -> None:
        n = len(ctx.program)
        if n == getattr(ctx, "probed", 0):
            return
        ins = ctx.program.tail(1)[0]
        ctx.probed = n
        d = ctx.sim.trace.details.items[ins[DETAIL]] if ins[DETAIL] >= 0 else None
        if isinstance(d, Instr) and d.dst is not None:
            self.writes[(ctx.core.label, ins[DETAIL])].append(_rect_bytes(ctx, d.dst))


def run_with_truth(name: str, profile: str = "ascend910b1", **params):
    """Run scenario ``name`` call by call (no fast path) recording the ground truth; returns (result, truth, values)."""
    scenario = get_scenario(name)
    sim = Simulation(profile, numerics=True, fast=False)
    values = scenario.validate(sim.profile, params)
    truth = GroundTruth()
    sim.instruction_probe = truth.probe
    originals = {m: getattr(TQue, m) for m in ("alloc_tensor", "enque", "deque", "free_tensor")}
    states = {"alloc_tensor": "allocated", "enque": "enqueued", "deque": "dequeued", "free_tensor": "free"}

    def wrap(method):
        def call(self, *args, **kwargs):
            out = originals[method](self, *args, **kwargs)
            tensor = out if method in ("alloc_tensor", "deque") else args[0]
            truth.slot_changes[self._ctx.core.label].append((self.ident, tensor.slot, states[method]))
            return out

        return call

    try:
        for m in originals:
            setattr(TQue, m, wrap(m))
        outcome = scenario.run(sim, **values)
    finally:
        for m, f in originals.items():
            setattr(TQue, m, f)
    assert outcome.correct, outcome
    return sim.finish(), truth, values
