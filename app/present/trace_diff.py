"""A trainee's run beside the lesson's reference run: lane by lane, metric by metric, and in words where the
trainee's run lost overlap, moved extra bytes, waited on a flag or left cores idle, each at the step of the
trainee's run where it shows.

Lanes are matched by their name (process and thread: "AIV 3" / "MTE2" is the same lane in both runs). The
statements are typed (a message key, its values, a step), worded by the UIs in their language.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from engine.trace import Kind, LaneKind

from .replay import Replay

if TYPE_CHECKING:
    from engine.analysis.compare import Change

OVERLAP_METRICS = ("mte2_compute_overlap", "copy_compute_overlap")
ALIGNED_BARS = 150  # bars per lane of the aligned timelines before a lane is shown as busy-share buckets
ALIGNED_PAIRS = 32  # lanes (each a pair of rows) the aligned timelines show at most
SLACK = 0.02  # differences below 2 % (or 2 points of a share) are noise, not a statement


@dataclass(frozen=True)
class LaneDiff:
    name: str
    mine_us: float  # busy time: the lane's events (marks aside) added up
    ref_us: float
    mine_events: int
    ref_events: int
    labels: dict = field(default_factory=dict)  # the lane's name in each UI language


@dataclass(frozen=True)
class Statement:
    key: str  # "overlap", "less_work", "bytes", "flag_wait", "idle_cores", "faster", "same"
    values: dict = field(default_factory=dict)
    step: int | None = None  # the step of the trainee's run where it shows


@dataclass(frozen=True)
class TraceDiff:
    lanes: tuple[LaneDiff, ...]
    metrics: Mapping[str, Change]  # engine.analysis.compare's figures by name: a the reference's, b mine
    statements: tuple[Statement, ...]

    def to_dict(self) -> dict:
        """Plain data (the JSON edge: a page keeps it)."""
        return {
            "lanes": [asdict(x) for x in self.lanes],
            "metrics": {name: change.to_dict() for name, change in self.metrics.items()},
            "statements": [asdict(x) for x in self.statements],
        }

    @classmethod
    def from_dict(cls, doc: dict) -> TraceDiff:
        from engine.analysis.compare import Change

        lanes = tuple(LaneDiff(**x) for x in doc["lanes"])
        metrics = {name: Change(**change) for name, change in doc["metrics"].items()}
        return cls(lanes, metrics, tuple(Statement(**x) for x in doc["statements"]))


def _key(lane) -> str:
    """A lane as both runs name it: its process and thread (the same lane in either trace)."""
    return f"{lane.process} / {lane.thread}"


def _lane_labels(replays: tuple[Replay, ...]) -> dict[str, dict]:
    """Each lane's name in each language, by its :func:`_key`."""
    from .lanes import lane_name
    from .messages import LANGS

    return {_key(x): {lang: lane_name(x, lang) for lang in LANGS} for r in replays for x in r.trace.lanes}


def _lanes(replay: Replay) -> dict[str, tuple[float, int]]:
    t = replay.trace
    c = t.columns
    busy = c["kind"] != Kind.MARK
    lane = c["lane"][busy]
    n = len(t.lanes)
    ps = np.bincount(lane, weights=(c["end"][busy] - c["start"][busy]).astype(np.float64), minlength=n)
    count = np.bincount(lane, minlength=n)
    return {_key(x): (float(ps[i]) / 1e6, int(count[i])) for i, x in enumerate(t.lanes) if count[i]}


def _rows(replay: Replay, *kinds: Kind) -> np.ndarray:
    return np.flatnonzero(np.isin(replay.trace.columns["kind"], kinds))


def _longest(replay: Replay, rows: np.ndarray) -> int | None:
    if not len(rows):
        return None
    c = replay.trace.columns
    return int(rows[np.argmax(c["end"][rows] - c["start"][rows])])


def _step(replay: Replay, row: int | None) -> int | None:
    return None if row is None else replay.step_of_row(row)


def trace_diff(mine: Replay, ref: Replay) -> TraceDiff:
    from engine.analysis.compare import compare

    a, b = _lanes(ref), _lanes(mine)
    names = [n for n in b if n in a] + [n for n in b if n not in a] + [n for n in a if n not in b]
    none = (0.0, 0)
    labels = _lane_labels((mine, ref))
    lanes = tuple(
        LaneDiff(n, b.get(n, none)[0], a.get(n, none)[0], b.get(n, none)[1], a.get(n, none)[1], labels.get(n, {}))
        for n in names
    )
    rm, rr = mine.report(), ref.report()
    metrics = compare(rr, rm).metrics
    says: list[Statement] = []
    for name in OVERLAP_METRICS:
        x, y = rm.metrics.figure(name), rr.metrics.figure(name)
        if isinstance(x, float) and isinstance(y, float) and x < y - SLACK:
            at = _longest(mine, _rows(mine, Kind.WAIT, Kind.FLAG_WAIT)) or next(iter(_rows(mine, Kind.COMPUTE)), None)
            says.append(Statement("overlap", {"metric": name, "mine": x, "ref": y}, _step(mine, at)))
            break
    moved = [int(r.trace.columns["nbytes"][_rows(r, Kind.COPY, Kind.MOVE)].sum()) for r in (mine, ref)]
    work = [int(r.trace.columns["flops"][_rows(r, Kind.COMPUTE)].sum()) for r in (mine, ref)]
    if work[0] < work[1] * (1 - SLACK) or moved[0] < moved[1] * (1 - SLACK):
        at = next(iter(_rows(mine, Kind.KERNEL)), None)
        values = {"mine": moved[0], "ref": moved[1], "mine_flops": work[0], "ref_flops": work[1]}
        says.append(Statement("less_work", values, _step(mine, at)))
    if moved[0] > moved[1] * (1 + SLACK):
        copies = _rows(mine, Kind.COPY, Kind.MOVE)
        beyond = len(_rows(ref, Kind.COPY, Kind.MOVE))
        at = int(copies[beyond]) if beyond < len(copies) else _longest(mine, copies)
        says.append(Statement("bytes", {"mine": moved[0], "ref": moved[1]}, _step(mine, at)))
    waits = []
    for r in (mine, ref):
        rows = _rows(r, Kind.FLAG_WAIT)
        c = r.trace.columns
        waits.append(float((c["end"][rows] - c["start"][rows]).sum()) / 1e6)
    if waits[0] > waits[1] * (1 + SLACK) + 1e-3:
        at = _longest(mine, _rows(mine, Kind.FLAG_WAIT))
        says.append(Statement("flag_wait", {"mine": waits[0], "ref": waits[1]}, _step(mine, at)))
    cores = []
    for r in (mine, ref):
        blocks = _rows(r, Kind.BLOCK)
        cores.append(len({int(r.trace.columns["lane"][i]) for i in blocks}))
    if cores[0] < cores[1]:
        first = _rows(mine, Kind.BLOCK)
        says.append(Statement("idle_cores", {"mine": cores[0], "ref": cores[1]}, _step(mine, next(iter(first), None))))
    ends = tuple(float(r.trace.columns["end"].max(initial=0)) / 1e6 for r in (mine, ref))
    if not says:
        key = "faster" if ends[0] < ends[1] * (1 - SLACK) else "same"
        says.append(Statement(key, {"mine": ends[0], "ref": ends[1]}))
    return TraceDiff(lanes, metrics, tuple(says))


def aligned_timelines(mine: Replay, ref: Replay, names: tuple[str, str], lang: str = "en") -> dict:
    """Both runs on one time axis, lane by lane: each lane of the trainee's run right above the same lane of
    the reference's (matched by the lanes' process and thread), with the pipes of each run's first core. A
    timeline view (:func:`~app.present.views.timeline_view`'s shape) whose lane labels end in ``names``
    (the UI's words for "yours" and "reference") and whose ``pair`` numbers the lane they show; a lane only
    one run has gets its row alone."""
    from .views import timeline_view

    t0, t1 = _device_span(mine, ref)
    views = [timeline_view(r, 0, (t0, t1), ALIGNED_BARS, _first_core(r), lang) for r in (mine, ref)]
    keyed = [
        {_key(r.trace.lanes[x["id"]]): x for x in view["lanes"]} for r, view in zip((mine, ref), views, strict=True)
    ]
    order = list(keyed[0]) + [k for k in keyed[1] if k not in keyed[0]]
    busy = [k for k in order if any(lanes.get(k, {}).get("count") for lanes in keyed)]  # idle in both: no rows
    expanded = {lane["core"] for lanes in keyed for lane in lanes.values() if lane["kind"] == "PIPE"}
    first = [k for k in busy if any(lanes.get(k, {}).get("core") in expanded for lanes in keyed)]
    others = [k for k in busy if k not in first]  # the first core's lanes stay, however many cores come first
    drop = set(others[max(0, ALIGNED_PAIRS - len(first)) :])
    rows = []
    for pair, key in enumerate(k for k in busy if k not in drop):
        for lanes, name in zip(keyed, names, strict=True):
            if key in lanes:
                lane = lanes[key]
                bars = [{**b, "done": True} for b in lane.get("bars", ())]
                rows.append({**lane, "label": f"{lane['label']} · {name}", "run": name, "pair": pair, "bars": bars})
    return {**views[0], "t0_us": t0, "t1_us": t1, "cursor_us": t0, "cursor_row": 0, "lanes": rows}


def _device_span(*replays: Replay) -> tuple[float, float]:
    """Microseconds from the first device event (a copy, a kernel) of any of the runs to the last end of
    any, padded by 5 %: where the runs differ (a host's long set-up before it would squash them)."""
    starts, ends = [], []
    for r in replays:
        c = r.trace.columns
        device = ~r.trace.rows_on(LaneKind.HOST) & (c["kind"] != Kind.MARK)
        if device.any():
            starts.append(float(c["start"][device].min()))
        ends.append(float(r.result.end_ps))
    t0, t1 = (min(starts) if starts else 0.0) / 1e6, max(ends) / 1e6
    pad = 0.05 * (t1 - t0)
    return max(0.0, t0 - pad), max(t1 + pad, t0 + 1e-6)


def _first_core(replay: Replay) -> tuple:
    """The run's first core (the index lists them in viewers' order), to expand its pipes; none without cores."""
    cores = replay.index.cores
    return (cores[0].ref,) if cores else ()


__all__ = ("LaneDiff", "Statement", "TraceDiff", "aligned_timelines", "trace_diff")
