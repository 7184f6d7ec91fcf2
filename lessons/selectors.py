"""Selectors: a lesson step names a position in its run as data, never as a raw row number.

A selector is a small dict; every key narrows the rows of the trace (sorted by start time), and
``nth`` picks one of what is left (0 = the first, -1 = the last)::

    {"kind": "COMPUTE", "name": "mmad", "core": 0, "nth": 0}   # the first mmad on core 0
    {"kind": "COPY", "direction": "H2D", "nth": 1}             # the second host-to-device copy
    {"kind": "CALL", "name": "acl.rt.synchronize_stream"}      # the first synchronize call
    {"kind": "MOVE", "pipe": "MTE2", "core_type": "AIV"}       # the first load on a vector core

Keys: ``kind`` (a :class:`engine.trace.Kind` name), ``name`` (the event's exact name),
``name_prefix``, ``lane`` (``host``, ``stream``, ``copy_engine``, ``kernels``, ``pipe``, ``block``),
``core`` (the core's number), ``core_type`` (``AIC`` / ``AIV``), ``pipe`` (``SCALAR``, ``VECTOR``,
``CUBE``, ``MTE1``, ``MTE2``, ``MTE3``, ``FIXP``), ``stream`` (its number: 0 is the default stream),
``direction`` (``H2D``, ``D2H``, ``D2D``) and ``nth``.

A copy appears twice in a trace (on its stream and on its copy engine); unless ``lane`` says
otherwise a ``COPY`` selector counts the stream rows, so "the second H2D copy" is the second copy
the program issued. :func:`lane_facts` reads what a lane is from its typed fields.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.aicore.pipes import LANE_NAMES
from engine.trace import DIRECTIONS, Kind, Lane, LaneKind, TraceData

KEYS = frozenset(("kind", "name", "name_prefix", "lane", "core", "core_type", "pipe", "stream", "direction", "nth"))
LANE_KINDS = ("host", "stream", "copy_engine", "kernels", "pipe", "block", "other")
PIPES = LANE_NAMES  # the pipes a selector names, as the trace's lanes do


class SelectorError(ValueError):
    """A selector is malformed or matches nothing; the message says which key and what was found."""


@dataclass(frozen=True)
class LaneFacts:
    kind: str  # one of LANE_KINDS
    core: int = -1  # the physical core's number
    core_type: str = ""  # "AIC" or "AIV"
    pipe: str = ""  # a PIPES name for a pipe lane
    stream: int = -1  # a stream's number (0: the default stream)
    direction: str = ""  # H2D, D2H or D2D for a copy engine


_LANE_KIND_NAMES = {
    LaneKind.HOST: "host",
    LaneKind.STREAM: "stream",
    LaneKind.COPY_ENGINE: "copy_engine",
    LaneKind.KERNELS: "kernels",
    LaneKind.PIPE: "pipe",
    LaneKind.BLOCK: "block",
}


def lane_facts(lane: Lane) -> LaneFacts:
    """What a lane is, from its typed fields."""
    kind = _LANE_KIND_NAMES.get(LaneKind(lane.kind), "other")
    pipe = LANE_NAMES[lane.pipe] if lane.pipe >= 0 else ""
    stream = lane.unit if kind == "stream" else -1
    return LaneFacts(kind, lane.core, lane.core_type, pipe, stream, lane.direction)


def trace_lane_facts(trace: TraceData) -> list[LaneFacts]:
    return [lane_facts(lane) for lane in trace.lanes]


def validate(selector: dict) -> None:
    """Raise :class:`SelectorError` for an unknown key or a value of the wrong kind."""
    if not isinstance(selector, dict) or not selector:
        raise SelectorError(f"a selector must be a non-empty dict, got {selector!r}")
    unknown = sorted(set(selector) - KEYS)
    if unknown:
        raise SelectorError(f"selector key {unknown[0]!r} is not one of {', '.join(sorted(KEYS))}")
    kind = selector.get("kind")
    if kind is not None and kind not in Kind.__members__:
        raise SelectorError(f"selector kind must be one of {', '.join(Kind.__members__)}, got {kind!r}")
    lane = selector.get("lane")
    if lane is not None and lane not in LANE_KINDS:
        raise SelectorError(f"selector lane must be one of {', '.join(LANE_KINDS)}, got {lane!r}")
    pipe = selector.get("pipe")
    if pipe is not None and pipe not in PIPES:
        raise SelectorError(f"selector pipe must be one of {', '.join(PIPES)}, got {pipe!r}")
    for key in ("core", "stream", "nth"):
        value = selector.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise SelectorError(f"selector {key} must be an integer, got {value!r}")


def matches(trace: TraceData, selector: dict) -> np.ndarray:
    """Row indices (in time order) that every key of ``selector`` except ``nth`` allows."""
    validate(selector)
    c = trace.columns
    keep = np.ones(len(trace), dtype=bool)
    if "kind" in selector:
        keep &= c["kind"] == int(Kind[selector["kind"]])
    if "name" in selector:
        ids = [i for i, n in enumerate(trace.names) if n == selector["name"]]
        keep &= np.isin(c["name"], ids)
    if "name_prefix" in selector:
        ids = [i for i, n in enumerate(trace.names) if n.startswith(selector["name_prefix"])]
        keep &= np.isin(c["name"], ids)
    facts = trace_lane_facts(trace)
    lane_kind = selector.get("lane")
    if lane_kind is None and selector.get("kind") == "COPY":
        lane_kind = "stream"  # count each copy once: the row on its stream, not the one on its engine
    wanted = []
    for f in facts:
        ok = lane_kind is None or f.kind == lane_kind
        ok &= "core" not in selector or f.core == selector["core"]
        ok &= "core_type" not in selector or f.core_type == selector["core_type"]
        ok &= "pipe" not in selector or f.pipe == selector["pipe"]
        ok &= "stream" not in selector or f.stream == selector["stream"]
        wanted.append(ok)
    if len(trace):
        keep &= np.array(wanted, dtype=bool)[c["lane"]]
    if "direction" in selector:  # a copy's direction, as its task records it (the task table's column)
        task = trace.task_rows()
        wanted = np.array([d == selector["direction"] for d in DIRECTIONS] + [False])  # index -1: not a task
        direction = np.append(trace.tasks["direction"], len(DIRECTIONS))[task]
        keep &= wanted[direction]
    return np.flatnonzero(keep)


def resolve(trace: TraceData, selector: dict) -> int:
    """The row index ``selector`` points at; :class:`SelectorError` if it matches fewer rows than ``nth`` needs."""
    rows = matches(trace, selector)
    nth = selector.get("nth", 0)
    if not -len(rows) <= nth < len(rows):
        shown = {k: v for k, v in selector.items() if k != "nth"}
        raise SelectorError(
            f"selector {shown} matches {len(rows)} row(s); nth={nth} needs at least {abs(nth) + (nth >= 0)}"
        )
    return int(rows[nth])


def describe(selector: dict) -> str:
    """A short English phrase for a selector (for logs and errors)."""
    nth = selector.get("nth", 0)
    ordinal = "last" if nth == -1 else f"#{nth + 1}" if nth >= 0 else f"{-nth}th from the end"
    parts = [selector.get("kind", "event").lower()]
    for key in ("name", "name_prefix", "direction", "pipe", "core_type"):
        if key in selector:
            parts.append(f"{key}={selector[key]}")
    for key in ("core", "stream", "lane"):
        if key in selector:
            parts.append(f"{key} {selector[key]}")
    return f"{ordinal} " + " ".join(parts)
