"""What the terminal app's panes show: after each change of the player's state, :meth:`Drawing.redraw` hands
every pane the view-models of :mod:`app.present` for it (a base of :class:`app.tui.app.AscendApp`, which
holds the state and turns keys into changes of it)."""

from __future__ import annotations

from app.present import viewport
from app.present import views as V
from app.present.cpp.view import cpp_view
from app.present.messages import t as msg
from app.present.phases import phases_view
from app.present.text import reflow, wrap
from app.present.vocabulary import Activity

from .widgets import Pane, StatusBar


class Drawing:
    """The drawing half of the app: reads the app's state (``walk``, ``lang``, ``step``, ``core`` ...), never
    changes the player's position."""

    def redraw(self) -> None:
        """Hand every pane the view-models of the current state (the only place panes get data)."""
        walk, lang, step = self.walk, self.lang, self.step
        if walk is None:
            return
        replay = walk.replay
        system = V.system_view(replay, step, lang)
        stop = walk.stops[self.stop] if self.stop >= 0 else None
        unresolved = [f"{s.index + 1}: {s.problem}" for s in walk.stops if s.problem]
        diagnosis = ""
        if stop is not None and stop.diagnosis:  # lesson 10's symptoms: their diagnosis once revealed
            shown = stop.diagnosis[lang] if self.revealed else msg("diagnosis_hidden", lang)
            diagnosis = reflow(f"{msg('diagnosis', lang)}: {shown}")
        narration = {
            "text": reflow(stop.text[lang] if stop else walk.summary[lang]),
            "diagnosis": diagnosis,
            "problem": msg("step_unresolved", lang, why="; ".join(unresolved)) if unresolved else "",
            "host": f"{system['host']['title']}: {system['host']['doing']}",
        }
        self._set("narration-pane", walk.title[lang], narration)
        position = msg("lesson_step", lang, i=self.stop + 1, n=len(walk.stops)) if stop else ""
        self.query_one("#narration-pane", Pane).border_subtitle = position
        code_pane = self.query_one("#code-pane", Pane)
        rows = code_pane.content_size.height
        if self.show_cpp:  # the C++ (Ascend C) of the line, toggled with c, and a line per note under it
            code = cpp_view(replay, step, context=max(2, (rows - 2) // 2), lang=lang)
            width = max(12, code_pane.content_size.width - 2)
            extra = sum(len(wrap(n, width)) for n in code["notes"]) + bool(code["note"])
            if extra:
                code = cpp_view(replay, step, context=max(2, (rows - 2 - extra) // 2), lang=lang)
            code["kind"] = "cpp"
        else:
            code = V.code_view(replay, step, context=max(2, (rows - 2) // 2), lang=lang)
            bps = {bp.src for bp in replay.breakpoints if bp.src is not None}
            code["breakpoints"] = sorted(src.line for src in bps if src.file == code["file"])
        self._set("code-pane", code["title"], code)
        self._draw_timeline(system)
        legend = {a: msg(f"activity.{a}", lang, block="").strip() for a in Activity}
        cores = {"system": system, "core": self.core.label if self.core else None, "legend": legend}
        self._set("cores-pane", msg("cores", lang), cores)
        self._draw_buffers(system)
        if lang not in self._metrics:
            self._metrics[lang] = V.metrics_view(replay, lang)
        metrics = {
            "metrics": self._metrics[lang],
            "phases": phases_view(replay, step, lang, walk.phases()),
            "utilisation": msg("utilisation", lang),
        }
        self._set("metrics-pane", self._metrics[lang]["title"], metrics)
        self._draw_status(system["event"])
        self.refresh_bindings()

    def _set(self, pane_id: str, title: str, model: dict) -> None:
        pane = self.query_one(f"#{pane_id}", Pane)
        pane.border_title = title
        pane.view.model = model

    def _draw_timeline(self, system: dict) -> None:
        replay, lang = self.walk.replay, self.lang
        pane = self.query_one("#timeline-pane", Pane)
        width = max(20, pane.content_size.width or 80)
        window = viewport.window(self._end_us(), self.span_us, self.center_us)
        expand = (self.core,) if self.expanded and self.core else ()
        view = V.timeline_view(replay, self.step, window=window, max_bars=width, expand=expand, lang=lang)
        span = msg("window", lang, t0=f"{view['t0_us']:.3f}", t1=f"{view['t1_us']:.3f}")
        title = f"{view['title']}  {span}  ▼ {view['cursor_us']:.3f} us"
        self._set("timeline-pane", title, {"view": view, "lane": int(replay.trace.lane[replay.row(self.step)])})

    def _draw_buffers(self, system: dict) -> None:
        replay, lang, core = self.walk.replay, self.lang, self.core
        if core is None:
            model = {"core": {"buffers": []}, "header": "", "empty": msg("no_core_run", lang)}
            self._set("buffers-pane", msg("buffers_of", lang, core="-"), model)
            return
        view = V.core_view(replay, self.step, core, lang)
        grid = {(c["kind"], c["index"]): c for c in system["device"]["cores"]}
        parts = [core.label]
        if view["block"] is not None:
            parts.append(msg("block_of", lang, block=view["block"]))
        if (core.kind, core.index) in grid:
            parts.append(grid[core.kind, core.index]["label"])
        running = [f"{p['pipe']} {p['instruction']}" for p in view["pipes"] if p["busy"]]
        slots = [[b["name"], s["queue"], s["slot"], s["tile"]] for b in view["buffers"] for s in b["slots"]]
        self._tile_slots = [slot[:3] for slot in slots if slot[3]]
        if self.slot not in self._tile_slots:
            self.slot = self._tile_slots[0] if self._tile_slots else None
        model = {
            "core": view,
            "header": " · ".join(parts),
            "running": f"{msg('pipes_now', lang)}: {', '.join(running)}" if running else "",
            "empty": msg("no_block", lang, core=core.label)
            if view["block"] is None
            else msg("no_buffers", lang, block=view["block"]),
            "selected": self.slot,
            "tile": None,
        }
        if self.show_values and self.slot is not None:
            pane = self.query_one("#buffers-pane", Pane)
            cols = max(2, ((pane.content_size.width or 30) + 1) // 8)
            tile = V.tile_view(replay, self.step, core, *self.slot, max_cells=min(16, cols), lang=lang)
            label = tile["tile"]["label"] if tile["tile"] else "-"
            model["tile"] = tile
            buffer, queue, slot = self.slot
            model["tile_title"] = msg("tile_of", lang, buffer=buffer, queue=queue, slot=slot, tile=label)
            if tile.get("shape"):
                rows, cols = tile["shape"][:2]
                model["shape"] = msg("tile_shape", lang, rows=rows, cols=cols, dtype=tile["dtype"])
        self._set("buffers-pane", msg("buffers_of", lang, core=core.label), model)
        self.query_one("#buffers-pane", Pane).border_subtitle = msg("tile_hint", lang) if self._tile_slots else ""

    def _draw_status(self, event: str) -> None:
        """The step, play state and current event first (at 80 columns too), then what else has room."""
        walk, lang = self.walk, self.lang
        parts = [V.step_label(walk.replay, self.step, lang)]
        parts.append(("▶ " + msg("playing", lang)) if self.playing else ("■ " + msg("paused", lang)))
        flags = []
        if self.checking:
            flags.append(msg("checking", lang, file=self.exercise.name if self.exercise else "-"))
        if walk.replay.breakpoints:
            flags.append(msg("breakpoints", lang, n=len(walk.replay.breakpoints)))
        extra = [msg("speed", lang, n=self.playback.speed), msg("kind_selected", lang, kind=self.kind)]
        model = {"parts": parts, "now": event, "flags": flags, "extra": extra, "message": self.message}
        self.query_one(StatusBar).model = model
