"""Frames: a window of consecutive steps as small plain parts, so a UI can step through them locally.

A browser that steps a run must not ask the server for every frame, and a run can have millions of
steps, so the server sends windows: :func:`frames` returns, for ``count`` steps from ``first``, what
changes from step to step — the step label, the event, the cursor time, the host with its streams
and copy engines, each core's activity, one selected core opened up, the current source line, the
tiles each core holds and how many output tiles have landed. Consecutive steps mostly repeat these
parts, so each kind of part is stored once per distinct value (``parts``) and every frame is a list of
indices into them (``index``): a window of thousands of steps stays small.

The parts are the view-models of :mod:`app.present.views` (the same dicts, the same words), computed
without rebuilding the whole state at every step: core activity is evaluated for the whole window
with one binary search per pipe lane, and a core is re-read only at steps where something on it can
have changed (one of its rows began, or one ended). Tests compare every frame with the view-models
computed step by step.

:func:`outline` is what does not change within a run (step count, core names, the output tiles in
the order they land, with the core that wrote each).
"""

from __future__ import annotations

import json

import numpy as np

from engine.aicore.pipes import LANE_NAMES
from engine.trace import Kind
from engine.trace.locations import CoreRef

from .cpp.view import cpp_view
from .index import INIT_SLOT
from .lanes import lane_name
from .messages import t as msg
from .phases import phase_bounds
from .replay import Breakpoint, Replay
from .tile_pass import core_tiles
from .views import code_view, core_view_of, count_landed, grid_cores, host_view_of, step_label, to_us
from .vocabulary import PIPE_ACTIVITY, Activity

CODE_CONTEXT = 10  # source lines shown above and below the current one
MAX_LANDED = 20_000  # output tiles listed per tensor in the outline (the rest are counted, not drawn)
_WORK = (int(Kind.MOVE), int(Kind.COMPUTE))


# -- activity of every core, vectorised over a window ---------------------------------------------
def activity_codes(replay: Replay, rows: np.ndarray, times: np.ndarray) -> list[str]:
    """Per step (trace row, time): one character per core of :func:`grid_cores` saying what it does
    (its :attr:`Activity.code`), exactly as :func:`app.present.views.activity` would."""
    t = replay.trace
    index = replay.index
    kinds = t.kind
    ends = t.end
    grid = grid_cores(replay)
    idle, busy_code, wait = (ord(a.code) for a in (Activity.IDLE, Activity.BUSY, Activity.WAIT))
    columns = np.full((len(rows), len(grid)), idle, dtype=np.uint8)
    position = {ref: i for i, ref in enumerate(grid)}
    for core in index.cores:
        col = position.get(core.ref)
        if col is None:
            continue
        busy_kind = {}
        for pipe, lane in core.pipes.items():
            lane_rows = index.lane_rows[lane]
            j = np.searchsorted(lane_rows, rows, side="right") - 1
            last = lane_rows[np.maximum(j, 0)] if len(lane_rows) else np.zeros(len(rows), dtype=np.int64)
            busy = (j >= 0) & ((last == rows) | (ends[last] > times))
            busy_kind[LANE_NAMES[pipe]] = np.where(busy, kinds[last].astype(np.int16), -1)
        code = np.full(len(rows), idle, dtype=np.uint8)
        if core.block_lane >= 0:
            blocks = index.lane_rows[core.block_lane]
            j = np.searchsorted(blocks, rows, side="right") - 1
            if len(blocks):
                active = (j >= 0) & (ends[blocks[np.maximum(j, 0)]] > times)
                code[active] = busy_code
        waiting = np.zeros(len(rows), dtype=bool)
        for k in busy_kind.values():
            waiting |= k == int(Kind.FLAG_WAIT)
        code[waiting] = wait
        decided = np.zeros(len(rows), dtype=bool)
        for pipe, what in PIPE_ACTIVITY:
            k = busy_kind.get(pipe)
            if k is None:
                continue
            hit = ~decided & np.isin(k, _WORK)
            code[hit] = ord(what.code)
            decided |= hit
        columns[:, col] = code
    return [bytes(r).decode("ascii") for r in columns]


# -- which steps can change a core ------------------------------------------------------------------
class FrameSource:
    """Frames of one replay; keeps, per core, its rows and their sorted end times (computed once, so
    every later window costs only what it shows)."""

    def __init__(self, replay: Replay) -> None:
        self.replay = replay
        self._events: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def _core_events(self, c: int) -> tuple[np.ndarray, np.ndarray]:
        found = self._events.get(c)
        if found is None:
            index = self.replay.index
            core = index.cores[c]
            own = index.core_rows(c)
            if core.block_lane >= 0:
                own = np.sort(np.concatenate([own, index.lane_rows[core.block_lane]]))
            found = self._events[c] = (own, np.sort(self.replay.trace.end[own]))
        return found

    def _tile_events(self, c: int) -> tuple[np.ndarray, np.ndarray]:
        """Core ``c``'s block rows, and the sorted end times of the rows that decide what its slots hold
        (writes into on-chip memory and the buffer layouts, ``init_buffer``)."""
        key = -1 - c
        found = self._events.get(key)
        if found is None:
            index = self.replay.index
            core = index.cores[c]
            blocks = index.lane_rows[core.block_lane] if core.block_lane >= 0 else np.zeros(0, dtype=np.int64)
            parts = [e.rows for e in index.writer_index(c).values()]
            parts += [e.rows for k, e in index.queue_index(c).items() if k % 1024 == INIT_SLOT]
            effects = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
            found = self._events[key] = (blocks, np.sort(self.replay.trace.end[effects]))
        return found

    def tile_changes(self, c: int, rows: np.ndarray, times: np.ndarray) -> np.ndarray:
        """True at each step where the tiles core ``c``'s slots hold may differ from the previous step's:
        a block began, or a write into its on-chip memory (or a buffer layout) took effect in between."""
        blocks, ends = self._tile_events(c)
        changed = np.ones(len(rows), dtype=bool)
        if len(rows) < 2:
            return changed
        began = np.searchsorted(blocks, rows, side="right")
        ended = np.searchsorted(ends, times, side="right")
        ended_before = np.searchsorted(ends, times, side="left")
        changed[1:] = (began[1:] > began[:-1]) | (ended[1:] > ended_before[:-1])
        return changed

    def core_changes(self, c: int, rows: np.ndarray, times: np.ndarray) -> np.ndarray:
        """True at each step where core ``c``'s state may differ from the previous step's (always at
        the first): a row of the core began since, the previous step's row is on it, or one of its
        rows ended in between (an instruction finished, a write landed, a wait was released)."""
        own, ends = self._core_events(c)
        changed = np.ones(len(rows), dtype=bool)
        if len(rows) < 2 or not len(own):
            changed[1:] = False
            return changed
        began = np.searchsorted(own, rows, side="right")
        ended = np.searchsorted(ends, times, side="right")
        ended_before = np.searchsorted(ends, times, side="left")
        at = np.minimum(np.searchsorted(own, rows[:-1]), len(own) - 1)
        prev_on_core = own[at] == rows[:-1]
        changed[1:] = (began[1:] > began[:-1]) | (ended[1:] > ended_before[:-1]) | prev_on_core
        return changed

    def frames(
        self,
        first: int,
        count: int,
        core: CoreRef | None = None,
        lang: str = "en",
        breakpoints: tuple[Breakpoint, ...] = (),
    ) -> dict:
        """Steps ``first`` .. ``first + count - 1`` (clipped to the run): see :func:`frames`."""
        replay = self.replay
        n = len(replay)
        first = max(0, min(int(first), n - 1))
        last = min(n, first + max(1, int(count)))
        steps = np.arange(first, last)
        t = replay.trace
        rows = replay.steps[first:last].astype(np.int64)
        times = t.start[rows].astype(np.int64)
        index = replay.index
        cores = [c.ref for c in index.cores]
        if core is not None and not isinstance(core, CoreRef):
            raise TypeError(f"the core opened up is a CoreRef (CoreRef('AIC', 0)), got {core!r}")
        core = core if core in cores else (cores[0] if cores else None)
        c_sel = cores.index(core) if core is not None else -1
        parts = _Parts()

        for code in activity_codes(replay, rows, times):
            parts.add("grid", code)

        tensors = {info.name: i for i, info in enumerate(replay.result.gm.values())}
        show_tiles = bool(tensors) and bool(cores)
        writers = index.gm_writers() if tensors else {}
        outputs = [(i, writers[ident]) for i, ident in enumerate(replay.result.gm) if ident in writers]
        change = {c_sel: self.core_changes(c_sel, rows, times)} if c_sel >= 0 else {}
        held_at: dict[int, dict[int, list]] = {}  # core -> {frame offset: the tiles it holds from there on}
        for c in range(len(cores)) if show_tiles else ():
            changed = self.tile_changes(c, rows, times)
            changed[0] = True
            at = np.flatnonzero(changed)
            held_at[c] = dict(zip(at.tolist(), core_tiles(replay, c, rows[at], times[at], tensors), strict=True))
        core_now = None
        tiles = _Parts()
        tile_changes: list[list[int]] = []
        held_now: dict[int, int] = {}
        code_memo: dict = {}  # source line -> its code view
        cpp_memo: dict = {}  # source line -> its C++ view
        labels, events, cursor, kinds = [], [], [], []
        for i, (step, row, time) in enumerate(zip(steps.tolist(), rows.tolist(), times.tolist(), strict=True)):
            ev = replay.event_at_row(row)
            labels.append(step_label(replay, step, lang))
            events.append(
                msg("event_at", lang, name=ev.named(lang), lane=lane_name(ev.lane, lang), time=round(to_us(time), 3))
            )
            cursor.append(to_us(time))
            kinds.append(ev.kind)
            host = host_view_of(
                replay.host_state(row, time), replay.streams_state(row, time), replay.engines_state(row, time), lang
            )
            parts.add("host", host)
            if c_sel >= 0:
                if core_now is None or change[c_sel][i]:
                    core_now = core_part(replay, c_sel, row, time, lang)
                parts.add("core", core_now)
            if show_tiles:
                for c in range(len(cores)):
                    held = held_at[c].get(i)
                    if held is not None:
                        k = tiles.intern("tiles", held)
                        if held_now.get(c) != k:
                            held_now[c] = k
                            tile_changes.append([i, c, k])
            if outputs:
                parts.add("done", [count_landed(effects, time, row) for _o, effects in outputs])
            code = code_memo.get(ev.src)
            if code is None:
                code = code_memo[ev.src] = code_view(replay, step, CODE_CONTEXT, lang)
            parts.add("code", code)
            cpp = cpp_memo.get(ev.src)
            if cpp is None:  # the C++ lines, and the notes apart (one list serves every line of the same calls)
                view = cpp_view(replay, step, CODE_CONTEXT, lang)
                notes = {"title": view.pop("notes_title"), "notes": view.pop("notes"), "src": ev.src is not None}
                cpp = cpp_memo[ev.src] = (view, notes)
            parts.add("cpp", cpp[0])
            parts.add("cppnotes", cpp[1])

        breaks: list[int] = []
        if breakpoints:
            bp_rows = np.unique(np.concatenate([bp.rows(replay) for bp in breakpoints]))
            breaks = (steps[np.isin(rows, bp_rows)]).tolist()
        return {
            "first": first,
            "count": last - first,
            "n": n,
            "core": core.label if core is not None else None,
            "lang": lang,
            "labels": labels,
            "events": events,
            "times": cursor,
            "kinds": kinds,
            "breaks": breaks,
            "parts": parts.values,
            "index": parts.index,
            "tiles": {"values": tiles.values.get("tiles", []), "changes": tile_changes},
        }


class _Parts:
    """Distinct values of each part, and per frame the index of its value."""

    def __init__(self) -> None:
        self.values: dict[str, list] = {}
        self.index: dict[str, list[int]] = {}
        self._seen: dict[str, dict[str, int]] = {}
        self._last: dict[str, tuple[object, int]] = {}

    def intern(self, name: str, value) -> int:
        """The index of ``value`` among the distinct values of ``name`` (added if new)."""
        last = self._last.get(name)
        if last is not None and last[0] is value:
            return last[1]
        key = json.dumps(value, sort_keys=True)
        seen = self._seen.setdefault(name, {})
        i = seen.get(key)
        if i is None:
            values = self.values.setdefault(name, [])
            i = seen[key] = len(values)
            values.append(value)
        self._last[name] = (value, i)
        return i

    def add(self, name: str, value) -> None:
        self.index.setdefault(name, []).append(self.intern(name, value))


def core_part(replay: Replay, c: int, row: int, time: int, lang: str) -> dict:
    """The core view of core ``c`` without the pipes' progress (the one field that changes with time
    alone; a UI draws it from the pipe's start and end and the frame's time)."""
    view = core_view_of(replay.core_state(c, row, time), time, lang)
    for pipe in view["pipes"]:
        del pipe["progress"]
    return view


def frames(
    replay: Replay,
    first: int,
    count: int,
    core: CoreRef | None = None,
    lang: str = "en",
    breakpoints: tuple[Breakpoint, ...] = (),
) -> dict:
    """Steps ``first`` .. ``first + count - 1`` (clipped to the run) as parts and per-frame indices.

    ``core``: the core opened up in the ``core`` part (default: the run's first core; no core part if
    the run used none). ``breakpoints``: the steps of the window they stop at are listed in ``breaks``.
    ``tiles``: per core, the tiles it holds, as changes ``[frame offset, core index, value index]``.
    Keep a :class:`FrameSource` to ask for many windows of one replay.
    """
    return FrameSource(replay).frames(first, count, core, lang, breakpoints)


def frame(window: dict, step: int) -> dict:
    """One step of a :func:`frames` window, its parts resolved (what a UI draws at that step)."""
    i = step - window["first"]
    if not 0 <= i < window["count"]:
        raise IndexError(
            f"step {step} is outside the window {window['first']}..{window['first'] + window['count'] - 1}"
        )
    out = {key: window[key][i] for key in ("labels", "events", "times", "kinds")}
    for name, idx in window["index"].items():
        out[name] = window["parts"][name][idx[i]]
    held: dict[int, int] = {}
    for offset, c, k in window["tiles"]["changes"]:
        if offset > i:
            break
        held[c] = k
    out["tiles"] = {c: window["tiles"]["values"][held[c]] for c in sorted(held)}
    return out


def held_tiles(window: dict) -> list[tuple[tuple[int, int], ...]]:
    """:func:`frame`'s tiles at every step of the window at once: per step, ``(core, value index)`` pairs in core
    order (``window["tiles"]["values"][k]`` is what the core holds)."""
    changes = window["tiles"]["changes"]
    held: dict[int, int] = {}
    out, j = [], 0
    for i in range(window["count"]):
        while j < len(changes) and changes[j][0] <= i:
            _offset, c, k = changes[j]
            held[c] = k
            j += 1
        out.append(tuple(sorted(held.items())))
    return out


# -- what does not change within a run ------------------------------------------------------------------
def outline(replay: Replay) -> dict:
    """Step count, cores (their labels), the grid (every core of the chip: its label, kind and number), and
    for each output tensor its tiles in the order they land (row, col, rows, cols, the index of the core
    that wrote it)."""
    t = replay.trace
    index = replay.index
    cores = [c.ref.label for c in index.cores]
    writers = index.gm_writers()
    outputs = []
    for i, (ident, info) in enumerate(replay.result.gm.items()):
        effects = writers.get(ident)
        if effects is None:
            continue
        tiles = []
        for w in effects.rows[:MAX_LANDED].tolist():
            ref = replay.tiles.gm_ref(t.detail_of(w).dst, "")
            tiles.append([ref.row, ref.col, ref.rows, ref.cols, int(index.core_of_lane[int(t.lane[w])])])
        outputs.append({"tensor": i, "name": info.name, "total": len(effects.rows), "tiles": tiles})
    return {
        "n": len(replay),
        "end_us": to_us(replay.result.end_ps),
        "cores": cores,
        "grid": [{"name": ref.label, **ref.to_dict()} for ref in grid_cores(replay)],
        "tensors": [info.name for info in replay.result.gm.values()],
        "outputs": outputs,
        "phases_us": {p: [to_us(a), to_us(b)] for p, (a, b) in phase_bounds(replay).items()},
    }


__all__ = ("FrameSource", "activity_codes", "core_part", "frame", "frames", "held_tiles", "outline")
