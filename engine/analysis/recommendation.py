"""A recommendation (what a rule of :mod:`.rules` or :mod:`.seed_rules` says, with its evidence and the gain
a re-run measured) and what several rules ask of a run: whether double buffering is already in use."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..aicore.pipes import Pipe
from ..simulation import RunResult
from ..trace import NO_SLOT, Kind, LaneKind
from ..trace.data import one_of
from .metrics import KernelMetrics


@dataclass
class Recommendation:
    rule: str
    title: str
    title_zh: str
    advice: str
    advice_zh: str
    evidence: dict  # the figures the rule read, by name, and its ``threshold`` (in English: the JSON's, the CLI's)
    change: dict | None = None  # scenario parameters that apply it, when a re-run can check it
    target: str = "simulated_us"  # the metric the rule is about: "kernel_us" or "simulated_us"
    before_us: float | None = None
    predicted_us: float | None = None  # that metric in the re-run (or the estimate, for advice-only rules)
    predicted_gain: float | None = None  # (before - after) / before
    threshold_zh: str = ""  # the evidence's threshold in Chinese

    def to_dict(self) -> dict:
        return asdict(self)


def second_slot_loaded(result: RunResult, kernel: KernelMetrics) -> bool:
    """Whether any MTE2 load of the kernel went into a queue's second slot (double buffering at work)."""
    t = result.trace
    c = t.columns
    s, e = int(c["start"][kernel.row]), int(c["end"][kernel.row])
    mte2 = [i for i, lane in enumerate(t.lanes) if lane.kind == LaneKind.PIPE and lane.pipe == Pipe.MTE2]
    sel = (c["kind"] == Kind.MOVE) & one_of(c["lane"], mte2) & (c["start"] >= s) & (c["start"] < e)
    slots = c["slot"][sel]
    return bool(((slots >= 1) & (slots != NO_SLOT)).any())


def tiling_double_buffered(context: dict) -> bool:
    tiling = context.get("details", {}).get("tiling") or {}
    if not tiling:
        return False
    l1 = (  # depthA1 / depthB1 count base blocks: two slots hold twice the K step's blocks
        tiling.get("depthA1", 1) >= 2 * tiling.get("stepM", 1) * tiling.get("stepKa", 1)
        and tiling.get("depthB1", 1) >= 2 * tiling.get("stepN", 1) * tiling.get("stepKb", 1)
    )
    return l1 and all(tiling.get(k, 1) >= 2 for k in ("dbL0A", "dbL0B"))


__all__ = ("Recommendation", "second_slot_loaded", "tiling_double_buffered")
