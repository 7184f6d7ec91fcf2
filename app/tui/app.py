"""The AscendSim terminal app: a lesson (or a scenario) replayed event by event in six panes.

The app holds the player's state — the step, the language, the selected core and kind, play and
speed, the timeline window, which slot's values to show — turns keys into changes of it
(``BINDINGS`` + ``action_*``, with ``check_action`` greying out what cannot happen now), and after
each change hands every pane the view-models of :mod:`app.present` for the new state. Preparing the
run (simulation, replay, analysis) and grading the exercise happen in thread workers, so the screen
never freezes; the preparing panel shows which phase is running. ``o`` opens another lesson through
the same worker (:mod:`app.tui.switching`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Grid
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.worker import Worker, WorkerState

from app.present import Breakpoint, viewport
from app.present.messages import t as msg
from app.present.playback import Playback
from app.present.walkthrough import PHASES, Walkthrough
from engine.trace.locations import CoreRef

from . import navigation as nav
from .drawing import Drawing
from .screens import CheckScreen, HelpScreen, Preparing
from .switching import Builder, Switching, lesson_builder, revealed
from .widgets import BuffersView, CodeView, CoresView, KeyBar, MetricsView, NarrationView, Pane, StatusBar, TimelineView

WIDE = (150, 40)  # from this many columns and rows on, the wide layout
PREFERRED_KIND = "COMPUTE"  # what shift+arrows jump between until k picks another kind


class AscendApp(Drawing, Switching, App):
    """Plays one walkthrough; ``build(progress)`` makes it (in a worker), ``exercise`` is what ``g`` checks,
    ``lessons(number)`` makes the builder of the lesson the picker (``o``) opens."""

    CSS_PATH = "ascendsim.tcss"
    TITLE = "AscendSim"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("left", "step(-1)", "key.step_back", key_display="←", priority=True),
        Binding("right", "step(1)", "key.step_forward", key_display="→", priority=True),
        Binding("shift+left", "kind(-1)", "key.kind_back", key_display="⇧←", priority=True),
        Binding("shift+right", "kind(1)", "key.kind_forward", key_display="⇧→", priority=True),
        Binding("k", "next_kind", "key.choose_kind"),
        Binding("b", "breakpoint", "key.breakpoint"),
        Binding("B", "breakpoint_kind", "key.breakpoint_kind", key_display="B"),
        Binding("space", "play", "key.play", key_display="space", priority=True),
        Binding("plus,equals_sign", "speed(1)", "key.faster", key_display="+"),
        Binding("minus,underscore", "speed(-1)", "key.slower", key_display="-"),
        Binding("n", "lesson(1)", "key.lesson_next"),
        Binding("p", "lesson(-1)", "key.lesson_back"),
        Binding("o", "pick_lesson", "key.pick_lesson"),
        Binding("l", "language", "key.switch_language"),
        Binding("g", "check", "key.check"),
        Binding("D", "reveal", "key.reveal", key_display="D"),
        Binding("z", "zoom(1)", "key.zoom_in"),
        Binding("Z", "zoom(-1)", "key.zoom_out", key_display="Z"),
        Binding("comma", "pan(-1)", "key.pan_left", key_display=","),
        Binding("full_stop", "pan(1)", "key.pan_right", key_display="."),
        Binding("e", "expand", "key.expand"),
        Binding("v", "values", "key.show_values"),
        Binding("c", "cpp", "cpp.toggle"),
        Binding("C", "program", "cpp.whole_key", key_display="C"),
        Binding("s", "next_slot", "key.next_slot_of"),
        Binding("question_mark", "help", "key.help", key_display="?"),
        Binding("q", "quit", "key.quit"),
        *(Binding(str(d), f"digit({d})", "key.digit", key_display="0-9", show=False) for d in range(10)),
    ]

    def __init__(
        self,
        build: Builder,
        *,
        lang: str = "en",
        exercise: Path | None = None,
        what: str | dict[str, str] = "",
        lesson: int | None = None,
        steps: int = 0,
        lessons: Callable[[int], Builder] = lesson_builder,
    ) -> None:
        """``what``: what is prepared, in words (by language, or one text for both); ``lesson``: the open
        lesson's number (None: a scenario); ``steps``: events to step forward from the opening step once the run
        is ready."""
        super().__init__()
        self.build, self.lang, self.exercise, self.what, self.lesson_number = build, lang, exercise, what, lesson
        self.initial_steps = steps
        self.lesson_builder = lessons
        self._prep_worker: Worker | None = None  # the newest preparing worker (an older one's result is dropped)
        self._generation = 0  # counts the preparing workers started (an older one's progress is dropped)
        self.walk: Walkthrough | None = None
        self._phase = PHASES[0]
        self._prep_started = time.monotonic()
        self.playback: Playback | None = None  # the step, the lesson step narrated, play (once the run is ready)
        self.core: CoreRef | None = None
        self.kind = PREFERRED_KIND
        self.expanded = True  # the selected core's pipe lanes in the timeline
        self.speed = nav.DEFAULT_SPEED  # an index into nav.SPEEDS
        self.span_us: float | None = None  # the timeline's window width (None: the whole run)
        self.center_us = 0.0
        self.origin_us = 0.0  # where the timeline's pages start (app.present.viewport.page_origin)
        self.show_values = False
        self.show_cpp = False  # the code pane shows the C++ (Ascend C) of the line instead of its Python
        self.slot: list | None = None  # [buffer, queue, slot] whose values are shown
        self.message = ""
        self.checking = False
        self.check_result = None  # the last lessons.grader.GradeResult
        self.revealed = revealed(lesson, exercise)  # the steps' diagnoses are shown (lessons.progress)
        self.failure = ""
        self._timer: Timer | None = None
        self._digits = ""
        self._digit_timer: Timer | None = None
        self._tile_slots: list[list] = []
        self._metrics: dict[str, dict] = {}

    @property
    def step(self) -> int:
        return self.playback.step if self.playback else 0

    @property
    def stop(self) -> int:
        """The lesson step narrated (-1: before the first lesson step's event, or no lesson)."""
        return self.playback.lesson_step if self.playback else -1

    @property
    def playing(self) -> bool:
        return bool(self.playback and self.playback.playing)

    # -- layout ------------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        with Grid(id="panes"):
            yield Pane(NarrationView(), id="narration-pane")
            yield Pane(CodeView(), id="code-pane")
            yield Pane(TimelineView(), id="timeline-pane")
            yield Pane(CoresView(), id="cores-pane")
            yield Pane(BuffersView(), id="buffers-pane")
            yield Pane(MetricsView(), id="metrics-pane")
        yield KeyBar(id="keybar")
        yield Preparing(len(PHASES))

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)
        self._layout_for(self.size.width, self.size.height)
        self._prep_timer = self.set_interval(0.5, self._show_progress)
        self._show_progress()
        self.prepare()

    def on_resize(self, event) -> None:
        self._layout_for(event.size.width, event.size.height)
        if self.walk is not None:
            self.call_after_refresh(self.redraw)

    def _layout_for(self, width: int, height: int) -> None:
        self.screen.set_class(width >= WIDE[0] and height >= WIDE[1], "-wide")

    # -- preparing the run (worker) -------------------------------------------------------------------
    def prepare(self) -> Worker:
        build, self._generation = self.build, self._generation + 1
        generation = self._generation

        def work() -> Walkthrough:
            def progress(phase: str) -> None:
                self.call_from_thread(self._enter_phase, phase, generation)

            return build(progress)

        worker = self.run_worker(
            work, name="prepare", group="prepare", thread=True, exclusive=True, exit_on_error=False
        )
        self._prep_worker = worker
        return worker

    def reset_player(self) -> None:
        """Back to "preparing": no run, the play stopped, the preparing panel shown again (before another
        lesson is prepared; the speed, the language and the layout stay)."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._prep_timer.stop()
        self.walk = self.playback = self.core = self.slot = self.check_result = None
        self.failure = self.message = ""
        self.show_values, self._tile_slots, self._metrics = False, [], {}
        self._phase, self._prep_started = PHASES[0], time.monotonic()
        self.query_one(Preparing).restart()
        self._prep_timer = self.set_interval(0.5, self._show_progress)
        self._show_progress()
        self.refresh_bindings()

    def _what(self) -> str:
        return self.what.get(self.lang, "") if isinstance(self.what, dict) else self.what

    def _show_failure(self) -> None:
        self.failure = msg("prepare_failed", self.lang, why=self._error)
        self.query_one(Preparing).fail(self.failure)

    def _enter_phase(self, phase: str, generation: int) -> None:
        if generation != self._generation:
            return  # a lesson no longer wanted is still being prepared in its thread
        self._phase = phase
        self._show_progress()

    def _show_progress(self) -> None:
        """The phase the worker is in, in words, with the seconds it has taken so far."""
        if self.walk is not None or self.failure:
            return
        phase = msg(f"prepare.{self._phase}", self.lang)
        text = msg("preparing", self.lang, what=self._what(), phase=phase)
        seconds = time.monotonic() - self._prep_started
        self.query_one(Preparing).show(f"{text} {seconds:.0f} s", PHASES.index(self._phase))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.name == "prepare":
            if worker is not self._prep_worker:
                return
            if event.state == WorkerState.SUCCESS:
                self._begin(worker.result)
            elif event.state == WorkerState.ERROR:
                self._error = f"{type(worker.error).__name__}: {worker.error}"
                self._prep_timer.stop()
                self._show_failure()
        elif worker.name == "check" and event.state in (WorkerState.SUCCESS, WorkerState.ERROR):
            self.checking = False
            if event.state == WorkerState.SUCCESS:
                self._checked(*worker.result)
            else:
                self.message = msg("check_failed", self.lang, why=f"{type(worker.error).__name__}: {worker.error}")
                self.redraw()

    def _begin(self, walk: Walkthrough) -> None:
        self.walk = walk
        self._prep_timer.stop()
        self.query_one(Preparing).display = False
        kinds = walk.kinds()
        self.kind = PREFERRED_KIND if PREFERRED_KIND in kinds else kinds[0]
        step = walk.start + self.initial_steps
        self.playback = Playback(len(walk.replay), walk.anchors, step=step, speed=nav.SPEEDS[self.speed])
        self.core = walk.core_at(self.step) or next(iter(walk.cores()), None)
        a, b = walk.phases()["work"]
        self.span_us, self.center_us = viewport.opening(self._end_us(), (a / 1e6, b / 1e6))
        self.origin_us = viewport.page_origin(self._end_us(), (a / 1e6, b / 1e6))  # where the timeline's pages start
        self._moved()

    def _end_us(self) -> float:
        return self.walk.replay.result.end_ps / 1e6

    def _bindings_changed(self, screen) -> None:
        if screen is not self.screen:
            return
        enabled = {}
        for active in self.screen.active_bindings.values():
            enabled[active.binding.action] = enabled.get(active.binding.action, False) or active.enabled
        self.query_one(KeyBar).model = {
            "lang": self.lang,
            "enabled": enabled,
            "playing": self.playing,
            "kind": self.kind,
        }

    # -- what can happen now ---------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple) -> bool | None:
        if isinstance(self.screen, ModalScreen):
            return False  # the help or a check result is open: the player's keys wait (priority keys too)
        if action in ("quit", "help", "language", "pick_lesson"):
            return True
        walk = self.walk
        if walk is None:
            return None
        last = len(walk.replay) - 1
        d = parameters[0] if parameters else 0
        allowed = {
            "step": lambda: self.playback.can_move(d),
            "kind": lambda: walk.next_of_kind(self.step, self.kind, forward=d > 0) is not None,
            "next_kind": lambda: len(walk.kinds()) > 1,
            "play": lambda: self.playing or last > 0,
            "speed": lambda: 0 <= self.speed + d < len(nav.SPEEDS),
            "lesson": lambda: self.playback.can_lesson(d),
            "check": lambda: walk.lesson is not None and not self.checking,
            "reveal": lambda: not self.revealed and any(s.diagnosis for s in walk.stops),
            "zoom": lambda: viewport.can_zoom(self.span_us, d),
            "pan": lambda: self.span_us is not None,
            "expand": lambda: self.core is not None,
            "values": lambda: bool(self._tile_slots),
            "program": lambda: walk.lesson is not None,
            "next_slot": lambda: len(self._tile_slots) > 1,
            "digit": lambda: bool(walk.cores()),
        }
        test = allowed.get(action)
        return True if test is None or test() else None

    # -- actions -------------------------------------------------------------------------------------
    def _moved(self, message: str = "") -> None:
        """Draw the step the playback moved to (stopping the play timer if a move by hand stopped play)."""
        if self._timer is not None and not self.playing:
            self._schedule()
        self.message = message
        cursor_us = self.walk.replay.event(self.step).start / 1e6
        self.center_us = viewport.page_center(self._end_us(), self.span_us, cursor_us, self.center_us, self.origin_us)
        self.redraw()

    def action_step(self, delta: int) -> None:
        self.playback.move(delta)
        self._moved()

    def action_kind(self, direction: int) -> None:
        def find(step: int, forward: bool) -> int | None:
            return self.walk.next_of_kind(step, self.kind, forward)

        if self.playback.of_kind(find, direction > 0) is not None:
            self._moved()

    def action_next_kind(self) -> None:
        kinds = self.walk.kinds()
        self.kind = kinds[(kinds.index(self.kind) + 1) % len(kinds)] if self.kind in kinds else kinds[0]
        self.message = msg("kind_selected", self.lang, kind=self.kind)
        self.redraw()

    def _toggle(self, bp: Breakpoint, what: str) -> None:
        on = self.walk.replay.toggle_breakpoint(bp)
        self.message = msg("breakpoint_set" if on else "breakpoint_cleared", self.lang, what=what)
        self.redraw()

    def action_breakpoint(self) -> None:
        event = self.walk.replay.event(self.step)
        if event.src is not None:
            self._toggle(Breakpoint(src=event.src), f"{event.src.name}:{event.src.line}")
        else:
            core = self.walk.core_at(self.step)
            self._toggle(Breakpoint(kind=event.kind, core=core), f"{event.kind} {core.label if core else ''}".strip())

    def action_breakpoint_kind(self) -> None:
        kind = self.walk.replay.event(self.step).kind
        self._toggle(Breakpoint(kind=kind), kind)

    def action_play(self) -> None:
        self.playback.toggle_play()
        self._schedule()
        self._moved()

    def _schedule(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self.playing:
            interval_ms, _per_tick = self.playback.tick_of()
            self._timer = self.set_interval(interval_ms / 1000, self.advance)

    def advance(self) -> None:
        """One tick of play: move on by the speed's events per tick, stopping at a breakpoint or the end."""
        if not self.playing or self.walk is None:
            return
        why = self.playback.tick(self.walk.replay.next_breakpoint)
        messages = {"breakpoint": "stopped_at_breakpoint", "end": "end_of_run"}
        self._moved(msg(messages[why], self.lang) if why else "")

    def action_speed(self, delta: int) -> None:
        self.speed = min(max(0, self.speed + delta), len(nav.SPEEDS) - 1)
        self.playback.speed = nav.SPEEDS[self.speed]
        self._schedule()
        self.message = msg("speed", self.lang, n=self.playback.speed)  # said even where the status has no room
        self.redraw()

    def action_lesson(self, delta: int) -> None:
        """The next (n) or previous (p) lesson step, from the one narrated now."""
        if self.playback.lesson(delta):
            self.core = self.walk.core_at(self.step) or self.core
        self._moved()

    def action_lesson_step(self, index: int) -> None:
        """Lesson step ``index`` (0-based), as the web's lesson-step buttons do: its event, its text shown even
        when it shares the event with the lesson step after it."""
        if self.playback.choose(index):
            self.core = self.walk.core_at(self.step) or self.core
        self._moved()

    def action_language(self) -> None:
        self.lang = "zh" if self.lang == "en" else "en"
        if self.walk is None:
            if self.failure:
                self._show_failure()
            else:
                self._show_progress()
            return
        self.message = ""
        self.redraw()

    def action_zoom(self, direction: int) -> None:
        """Zoom around the cursor."""
        self.center_us = self.walk.replay.event(self.step).start / 1e6
        self.span_us = viewport.zoom(self._end_us(), self.span_us, direction)
        self.redraw()

    def action_pan(self, direction: int) -> None:
        self.center_us = viewport.pan(self._end_us(), self.span_us, self.center_us, direction)
        self.redraw()

    def action_expand(self) -> None:
        self.expanded = not self.expanded
        self.redraw()

    def action_values(self) -> None:
        self.show_values = not self.show_values
        self.redraw()

    def action_cpp(self) -> None:
        self.show_cpp = not self.show_cpp
        self.redraw()

    def action_program(self) -> None:
        """The lesson's whole program in C++ (Ascend C), on a screen of its own."""
        from app.present.cpp.view import lesson_program, program_text
        from lessons import catalog

        lesson = catalog.get(self.walk.lesson)
        program = lesson_program(lesson.number, lesson.solution_file, self.walk.replay.trace, self.lang)
        self.push_screen(CheckScreen(program["title"], program_text(program), True, self.lang))

    def action_next_slot(self) -> None:
        slots = self._tile_slots
        self.slot = slots[(slots.index(self.slot) + 1) % len(slots)] if self.slot in slots else slots[0]
        self.redraw()

    def action_digit(self, digit: int) -> None:
        cores = self.walk.cores()
        prefer = self.core.kind if self.core else ""
        self._digits += str(digit)
        found = nav.core_by_number(cores, int(self._digits), prefer)
        if found is None and len(self._digits) > 1:
            self._digits = str(digit)
            found = nav.core_by_number(cores, digit, prefer)
        if self._digit_timer is not None:
            self._digit_timer.stop()
        self._digit_timer = self.set_timer(1.0, self._forget_digits)
        if found is None:
            self.message = msg("no_such_core", self.lang, n=self._digits)
        else:
            self.core, self.message = found, msg("core_selected", self.lang, core=found.label)
        self.redraw()

    def _forget_digits(self) -> None:
        self._digits = ""

    def action_help(self) -> None:
        rows = []
        seen = set()
        for binding in AscendApp.BINDINGS:
            keys = binding.key_display or binding.key
            if keys in seen:
                continue
            seen.add(keys)
            rows.append((keys, msg(binding.description, self.lang), self._check_binding(binding.action)))
        rows.append(("tab", msg("key.focus", self.lang), True))
        self.push_screen(HelpScreen(rows, self.lang))

    def _check_binding(self, action: str) -> bool:
        name, _, args = action.partition("(")
        params = tuple(int(a) for a in args.rstrip(")").split(",") if a) if args else ()
        return bool(self.check_action(name, params))

    def action_check(self) -> None:
        lesson = self.walk.lesson
        file = self.exercise
        if file is None or not file.is_file():
            shown = str(file) if file else "exercise.py"
            text = msg("no_exercise", self.lang, file=shown, n=lesson)
            self.push_screen(CheckScreen(msg("check_title", self.lang, file=shown), text, False, self.lang))
            return
        self.checking = True
        self.message = ""
        self.redraw()
        lang = self.lang

        def work():
            from app import kept_references
            from lessons import catalog
            from lessons.render import render_result
            from lessons.sandbox import missing

            spec = catalog.get(lesson)  # the trainee's own file: sandboxed when bubblewrap is there, else not (said)
            result = kept_references.check(spec, file, lang, sandboxed=missing() is None)
            return result, render_result(spec, result, lang), lang

        self.run_worker(work, name="check", group="check", thread=True, exclusive=True, exit_on_error=False)

    def _checked(self, result, report: str, lang: str) -> None:
        self.reveal_by_check()
        self.check_result = result
        self.message = f"{result.verdict} {result.score}/100"
        self.redraw()
        self.push_screen(CheckScreen(msg("check_title", lang, file=str(self.exercise)), report, result.passed, lang))
