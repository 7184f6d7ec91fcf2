"""View-models: pure functions from ``(replay, step, options)`` to JSON-serialisable dicts.

One function per view; the web dashboard and the TUI draw these and nothing else. Times are in
microseconds, labels come from :mod:`app.present.messages` in the requested language, and large
runs are bounded here (timeline bars aggregated per lane, matrices downsampled, tile values cut to
a corner) so no view ever ships millions of numbers.
"""

from __future__ import annotations

import numpy as np

from engine.trace import Kind, LaneKind
from engine.trace.intervals import merged
from engine.trace.locations import CoreRef

from .event_names import event_name
from .lanes import engine_name, lane_group, lane_name, lane_thread, stream_name
from .layout_views import fractal_view
from .messages import t as msg
from .replay import Replay
from .report_views import code_view, metrics_view
from .stages import STAGE_ORDER, stage_table
from .vocabulary import PIPE_ACTIVITY, Activity


def to_us(ps: int | float) -> float:
    """Picoseconds as microseconds, to the picosecond."""
    return round(float(ps) / 1e6, 6)


def grid_cores(replay: Replay) -> list[CoreRef]:
    """Every core of the chip, Cube cores first: the grid's order."""
    chip = replay.result.profile.chip
    return [CoreRef("AIC", i) for i in range(chip.aic_cores)] + [CoreRef("AIV", i) for i in range(chip.aiv_cores)]


def step_label(replay: Replay, step: int, lang: str = "en") -> str:
    return msg("step", lang, i=step + 1, n=len(replay))


# -- system ----------------------------------------------------------------------------------------
def activity(core) -> Activity:
    """What a core is doing, for colouring: cube, vector, load, store, wait, busy or idle."""
    busy = {p.pipe: p for p in core.pipes if p.busy}
    for pipe, what in PIPE_ACTIVITY:
        p = busy.get(pipe)
        if p is not None and p.kind in ("MOVE", "COMPUTE"):
            return what
    if any(p.kind == "FLAG_WAIT" for p in busy.values()):
        return Activity.WAIT
    return Activity.BUSY if core.active else Activity.IDLE


def host_view_of(host, streams, engines, lang: str = "en") -> dict:
    """The host, the link's copy engines and the streams of one state (``State.host``, ``.streams``,
    ``.engines``): the part of the system view that is not the core grid."""
    if host.blocked:
        doing = msg("blocked_on", lang, what=msg(f"wait.{host.waiting_on}", lang))
    elif host.call:
        doing = msg("in_call", lang, call=host.call)
    else:
        doing = msg("host_free", lang)
    return {
        "host": {"title": msg("host", lang), "doing": doing, "call": host.call, "blocked": host.blocked},
        "link": {
            "title": msg("link", lang),
            "engines": [
                {
                    "label": engine_name(e.direction, e.unit, lang),
                    "direction": e.direction,
                    "busy": e.copy is not None,
                    "task": e.copy.name if e.copy else None,
                    "bytes_done": e.bytes_done,
                    "bytes_total": e.bytes_total,
                    "progress": round(e.bytes_done / e.bytes_total, 4) if e.bytes_total else 0.0,
                }
                for e in engines
            ],
        },
        "streams": [
            {
                "label": stream_name(st.ident, lang),
                "pending": st.pending_count,
                "running": st.running.name if st.running else None,
                "done": st.done,
            }
            for st in streams
        ],
    }


def device_view(replay: Replay, lang: str = "en") -> dict:
    """What does not change in the device box: its title, GM (capacity, bandwidth) and L2."""
    chip = replay.result.profile.chip
    return {
        "title": msg("device", lang),
        "gm": f"{msg('gm', lang)} {chip.device_memory_bytes / 2**30:.0f} GiB, {chip.hbm_gbps / 1000:.2f} TB/s",
        "l2": f"{msg('l2', lang)} {chip.l2_bytes / 2**20:.0f} MiB",
    }


def system_view(replay: Replay, step: int, lang: str = "en") -> dict:
    s = replay.state_at(step)
    present = {c.core: c for c in s.cores}
    grid = []
    for ref in grid_cores(replay):
        core = present.get(ref)
        what = activity(core) if core is not None else Activity.IDLE
        block = core.block if core is not None and core.active else None
        label = msg(f"activity.{what}", lang, block=block)
        grid.append({"name": ref.label, **ref.to_dict(), "activity": what, "block": block, "label": label})
    parts, lane = host_view_of(s.host, s.streams, s.engines, lang), lane_name(s.event.lane, lang)
    return {
        "step": step,
        "step_label": step_label(replay, step, lang),
        "time_us": to_us(s.time),
        "event": msg("event_at", lang, name=s.event.named(lang), lane=lane, time=round(to_us(s.time), 3)),
        "host": parts["host"],
        "link": parts["link"],
        "device": {**device_view(replay, lang), "cores": grid},
        "streams": parts["streams"],
    }


# -- one core ---------------------------------------------------------------------------------------
def core_view(replay: Replay, step: int, core: CoreRef, lang: str = "en") -> dict:
    s = replay.state_at(step)
    state = next((c for c in s.cores if c.core == core), None)
    if state is None:
        raise KeyError(f"no core {core.label} in this run")
    return core_view_of(state, s.time, lang)


def core_view_of(state, time: int, lang: str = "en") -> dict:
    """The core view of one ``CoreState`` at ``time`` (picoseconds; only the pipes' progress uses it)."""
    buffers = []
    for b in state.buffers:
        slots = []
        for sl in b.slots:
            slots.append(
                {
                    "position": sl.position,
                    "queue": sl.queue,
                    "slot": sl.slot,
                    "offset": sl.offset,
                    "length": sl.length,
                    "state": sl.state,
                    "state_label": msg(f"state.{sl.state}", lang),
                    "tile": sl.tile["label"] if sl.tile else None,
                    "tile_ref": sl.tile,
                    "writer": sl.writer,
                    "format": sl.format,
                    "format_label": msg(f"format.{sl.format}", lang) if sl.format else "",
                }
            )
        buffers.append(
            {
                "name": b.name,
                "capacity": b.capacity,
                "used": b.used,
                "fill": round(b.used / b.capacity, 4) if b.capacity else 0.0,
                "slots": slots,
            }
        )
    pipes = []
    for p in state.pipes:
        span = max(1, p.end - p.start)
        progress = min(1.0, max(0.0, (time - p.start) / span)) if p.busy else (1.0 if p.row >= 0 else 0.0)
        pipes.append(
            {
                "pipe": p.pipe,
                "title": msg(f"pipe.{p.pipe}", lang),
                "busy": p.busy,
                "instruction": p.named(lang) if p.busy else None,
                "last": p.named(lang) or None,
                "kind": p.kind,
                "src": p.src.label if p.src else "",
                "start_us": to_us(p.start),
                "end_us": to_us(p.end),
                "progress": round(progress, 4),
            }
        )
    return {
        "core": state.core.label,
        "kind": state.core.kind,
        "index": state.core.index,
        "block": state.block,
        "active": state.active,
        "activity": activity(state),
        "buffers": buffers,
        "pipes": pipes,
    }


def tile_view(
    replay: Replay, step: int, core: CoreRef, buffer: str, queue: int, slot: int, max_cells: int = 16, lang: str = "en"
) -> dict:
    """The real numbers in one slot at ``step`` (the top-left ``max_cells`` x ``max_cells`` corner)."""
    sl = replay.slot(step, core, buffer, queue, slot)
    out = {
        "core": core.label,
        "buffer": buffer,
        "queue": queue,
        "slot": slot,
        "tile": sl.tile,
        "values": None,
        "fractals": None,
    }
    if sl.writer < 0:
        out["note"] = msg("empty_slot", lang)
        return out
    try:
        values = replay.slot_values(core, sl)
    except LookupError as exc:
        out["note"] = msg("values_unavailable", lang, why=str(exc))
        return out
    corner = values[:max_cells, :max_cells].astype(np.float64)
    content = replay.slot_fractals(core, sl)
    if content is not None:
        out["fractals"] = fractal_view(content, str(values.dtype), values.dtype.itemsize, lang, max_cells)
    out.update(
        shape=list(values.shape),
        dtype=str(values.dtype),
        values=[[round(float(v), 5) for v in row] for row in corner],
        truncated=values.shape[0] > max_cells or values.shape[1] > max_cells,
    )
    return out


# -- timeline ------------------------------------------------------------------------------------------
def _lane_order(replay: Replay, expand: tuple[CoreRef, ...]) -> list[int]:
    if not all(isinstance(c, CoreRef) for c in expand):
        raise TypeError(f"the cores to expand are CoreRef (CoreRef('AIC', 0)), got {expand!r}")
    t = replay.trace
    keep = []
    for i, lane in enumerate(t.lanes):
        if lane.kind == LaneKind.PIPE and CoreRef.of_lane(lane) not in expand:
            continue
        keep.append(i)
    # a core's lanes share its sort: its BLOCK lane heads them, its pipes follow (expanded under it)
    return sorted(keep, key=lambda i: (t.lanes[i].sort, t.lanes[i].kind != LaneKind.BLOCK, i))


def _coverage(starts: np.ndarray, ends: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Busy picoseconds of the union of intervals inside each [edges[i], edges[i + 1])."""
    s, e = merged(starts, ends)
    if not len(s):
        return np.zeros(len(edges) - 1)
    cum = np.concatenate([[0], np.cumsum(e - s)])

    def covered_before(x: np.ndarray) -> np.ndarray:
        i = np.searchsorted(e, x, side="right")
        partial = np.where(i < len(s), np.clip(x - s[np.minimum(i, len(s) - 1)], 0, None), 0)
        return cum[i] + partial

    c = covered_before(edges.astype(np.float64))
    return np.diff(c)


def timeline_view(
    replay: Replay,
    step: int,
    window: tuple[float, float] | None = None,
    max_bars: int = 300,
    expand: tuple[CoreRef, ...] = (),
    lang: str = "en",
) -> dict:
    """Lanes with their bars in ``window`` (microseconds; default the whole run), a cursor at ``step``.

    Core pipe lanes appear for the cores in ``expand`` only (each core's BLOCK lane always). A lane
    with more than ``max_bars`` events in the window is sent as ``max_bars`` buckets of busy share.
    """
    t = replay.trace
    row = replay.row(step)
    end_ps = max(int(replay.result.end_ps), 1)
    t0, t1 = (0, end_ps) if window is None else (round(window[0] * 1e6), round(window[1] * 1e6))
    t1 = max(t1, t0 + 1)
    lanes = []
    sources = replay.index.sources
    for lane_id in _lane_order(replay, expand):
        lane = t.lanes[lane_id]
        rows = replay.index.lane_rows[lane_id]
        rows = rows[(t.end[rows] >= t0) & (t.start[rows] <= t1)]
        core = CoreRef.of_lane(lane)
        entry = {
            "id": lane_id,
            "label": lane_name(lane, lang),
            "group": lane_group(lane, lang),
            "thread": lane_thread(lane, lang),
            "kind": LaneKind(lane.kind).name,
            "kind_label": msg(f"lane.{LaneKind(lane.kind).name}", lang),
            "core": core.label if core else None,
            "count": len(rows),
        }
        if len(rows) > max_bars:
            edges = np.linspace(t0, t1, max_bars + 1)
            busy = _coverage(t.start[rows], t.end[rows], edges)
            width = np.diff(edges)
            entry["aggregated"] = True
            entry["note"] = msg("aggregated", lang, n=len(rows))
            entry["buckets"] = [
                {"start_us": to_us(a), "end_us": to_us(b), "busy": round(float(x / w), 4)}
                for a, b, x, w in zip(edges[:-1], edges[1:], busy, width, strict=True)
                if x > 0
            ]
        else:
            entry["aggregated"] = False
            entry["bars"] = [
                {
                    "row": int(r),
                    "start_us": to_us(t.start[r]),
                    "end_us": to_us(t.end[r]),
                    "name": event_name(t, r, lang),
                    "kind": Kind(int(t.kind[r])).name,
                    "bytes": int(t.columns["nbytes"][r]),
                    "flops": int(t.flops[r]),
                    "src": sources[int(t.src[r])].label if t.src[r] >= 0 else "",
                    "done": bool(r <= row),
                }
                for r in rows
            ]
        lanes.append(entry)
    return {
        "title": msg("timeline", lang),
        "t0_us": to_us(t0),
        "t1_us": to_us(t1),
        "cursor_us": to_us(t.start[row]),
        "cursor_row": row,
        "lanes": lanes,
    }


# -- matrices ----------------------------------------------------------------------------------------
STRIP_CELLS = 4  # a vector (1 x N or N x 1) is drawn as a strip: this many times more cells along it


def heat_cells(rows: int, cols: int, cells: int = 48) -> list[int]:
    """How many elements (rows, columns) each cell of a tensor's heatmap averages: at most ``cells`` cells
    along each side of a matrix, ``cells * STRIP_CELLS`` along a vector (a strip as wide as the figure)."""
    along = cells * STRIP_CELLS if rows == 1 or cols == 1 else cells
    return [max(1, -(-rows // along)), max(1, -(-cols // along))]


def _downsample(values: np.ndarray, cells: int) -> tuple[list, list[int]]:
    rows, cols = values.shape
    fr, fc = heat_cells(rows, cols, cells)
    # a cell is the mean of its numbers: the cells' sums over their sizes (the last row and column of cells may be
    # smaller), without a padded copy; where a NaN made a sum NaN, the means of what is not NaN
    row_starts, col_starts = np.arange(0, rows, fr), np.arange(0, cols, fc)
    sums = np.add.reduceat(np.add.reduceat(values, col_starts, axis=1, dtype=np.float64), row_starts, axis=0)
    blocks = sums / np.outer(np.diff(row_starts, append=rows), np.diff(col_starts, append=cols))
    if np.isnan(sums).any():
        pr, pc = len(row_starts) * fr, len(col_starts) * fc
        padded = np.full((pr, pc), np.nan, dtype=np.float64)
        padded[:rows, :cols] = values
        blocks = np.nanmean(padded.reshape(pr // fr, fr, pc // fc, fc), axis=(1, 3))
    return [[round(float(v), 4) for v in row] for row in blocks], [fr, fc]


def matrices_view(replay: Replay, step: int, cells: int = 48, lang: str = "en") -> dict:
    """Every named GM tensor as a (downsampled, :func:`heat_cells`) heatmap, each core's current tiles
    outlined on it, and the output's tiles coloured as they complete. A tensor of other than two dimensions
    is a 1 x N vector (``shape``); ``strip`` says a tensor is one (1 x N or N x 1: drawn as a thin band)."""
    s = replay.state_at(step)
    row = s.row
    gm = replay.result.gm
    inputs = replay.tiles.inputs
    written = replay.index.gm_writers()
    tensors = []
    for ident, info in gm.items():
        shape = info.shape if len(info.shape) == 2 else (1, int(np.prod(info.shape)))
        effects = written.get(ident)
        is_output = effects is not None
        heat = cell = None
        if inputs is not None and ident in inputs and not is_output:
            data = inputs[ident][info.offset :].view(np.dtype(info.dtype))[: shape[0] * shape[1]]
            heat, cell = _downsample(data.reshape(shape), cells)
        tiles = []
        for core in s.cores:
            for b in core.buffers:
                for sl in b.slots:
                    ref = sl.tile
                    if ref and ref["tensor"] == info.name:
                        tiles.append(
                            {
                                "core": core.core.label,
                                "buffer": b.name,
                                "position": sl.position,
                                "row": ref["row"],
                                "col": ref["col"],
                                "rows": ref["rows"],
                                "cols": ref["cols"],
                            }
                        )
        entry = {
            "name": info.name,
            "shape": list(shape),
            "strip": min(shape) == 1 < max(shape),
            "dtype": info.dtype,
            "role": "output" if is_output else "input",
            "role_label": msg("role.output" if is_output else "role.input", lang),
            "heat": heat,
            "cell": cell,
            "tiles": tiles,
        }
        if is_output:
            landed = effects.rows[: count_landed(effects, s.time, row)]
            done = []
            for w in landed[-4096:]:
                d = replay.trace.detail_of(int(w)).dst
                ref = replay.tiles.gm_ref(d, "")
                done.append({"row": ref.row, "col": ref.col, "rows": ref.rows, "cols": ref.cols})
            total = len(effects.rows)
            entry["done"] = done
            entry["progress"] = msg("complete", lang, done=len(landed), total=total)
            entry["done_count"] = len(landed)
            entry["total"] = total
        tensors.append(entry)
    return {"title": msg("matrices", lang), "tensors": tensors}


def count_landed(effects, time: int, row: int) -> int:
    last = effects.last(time, row)
    return 0 if last < 0 else effects.position(last) + 1


# -- pipeline ------------------------------------------------------------------------------------------
def pipeline_view(replay: Replay, step: int, core: CoreRef, max_tiles: int = 24, lang: str = "en") -> dict:
    c = replay.index.core_index(core)
    rows = stage_table(replay, c, replay.row(step), max_tiles)
    stages = [s for s in STAGE_ORDER if any(s in r.cells for r in rows)]
    out_rows = []
    for r in rows:
        out_rows.append(
            {
                "tile": r.label,
                "done": r.done,
                "cells": {
                    stage: {"start_us": to_us(cell.start), "end_us": to_us(cell.end), "count": cell.count}
                    for stage, cell in r.cells.items()
                },
            }
        )
    starts = [c["start_us"] for r in out_rows for c in r["cells"].values()]
    ends = [c["end_us"] for r in out_rows for c in r["cells"].values()]
    return {
        "title": msg("pipeline", lang),
        "core": core.label,
        "stages": [{"stage": s, "label": msg(f"stage.{s}", lang)} for s in stages],
        "tiles": out_rows,
        "t0_us": min(starts) if starts else 0.0,
        "t1_us": max(ends) if ends else 0.0,
        "cursor_us": to_us(replay.trace.start[replay.row(step)]),
    }


__all__ = (
    "code_view",
    "core_view",
    "core_view_of",
    "count_landed",
    "device_view",
    "grid_cores",
    "heat_cells",
    "host_view_of",
    "matrices_view",
    "metrics_view",
    "pipeline_view",
    "system_view",
    "tile_view",
    "timeline_view",
    "to_us",
)
