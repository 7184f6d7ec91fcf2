"""The runs a dashboard server plays: validated from what a browser asks, simulated once, shared by all.

A browser names a run with a small dict it keeps in its own session (``{"lesson": 1}`` or
``{"scenario": "matmul", "profile": ..., "params": {...}, "numerics": false}``); nothing about a user is
kept here. Every such dict is validated again on each use (the scenario's own parameter checks and
the server's budget), turned into a :class:`~app.server.store.RunSpec`, and the run is found by the
spec's hash: in this process's memory, on disk (written by any worker), or simulated now.

Playground runs are simulated in a background thread so the page can show progress; the job's state
lives in a small JSON file next to the stored runs, so any worker can answer "how far is it?" and
the finished run (the ``.npz`` the :class:`~app.server.store.RunStore` writes) is visible to all.
Lesson runs are small and computed on first use.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from app.collector import after_run
from app.files import atomic_path
from app.present import Replay
from app.present.frames import FrameSource, outline
from app.present.walkthrough import lesson_stops, run_lesson
from app.server.jobs import Coordinator
from app.server.store import DISK_BYTES, RunSpec, RunStore, StoreError, store_error, unstored
from app.sources import fingerprint
from app.web.errors import RunRequestError, lesson_of, shown
from app.web.grading import Exercises
from app.web.loaded import Loaded
from app.web.validate import breakpoints_of, validate_request
from engine.profiles.profile import DEFAULT_PROFILE, load_profile
from engine.scenarios import ScenarioArgError, ScenarioFailed, registry
from lessons import sandbox
from lessons.catalog import Lesson, get, lessons

MAX_INPUT_BYTES = 64 * 2**20  # inputs regenerated for tile values and heatmaps up to this size
MAX_LOADED_EVENTS = 8_000_000  # replays kept in one process's memory, counted in events
EVENTS_PER_S = 600_000  # simulation speed, timing only (8192^3: 3.66 M events in 5.4 s on a 2-core machine)
STORED_EVENTS_PER_S = 450_000  # compressing a run to disk (8192^3: 8 s)
PROGRESS_EVERY_S = 0.5  # a job's progress reaches its page at most this often
PRELOAD_AFTER_S = 0.5  # a run whose first window came from its job is loaded this long after that answer
RENDERERS = tuple(f"app/web/{m}.py" for m in ("render", "panels", "markup", "figures"))  # of prepared views


class Runs(Exercises):
    """Every run this process can serve: the shared store on disk, replays loaded here, the jobs' guards (and a
    trainee's exercise graded in a job: :class:`~app.web.grading.Exercises`)."""

    def __init__(
        self,
        directory: str | Path | None = None,
        max_loaded_events: int = MAX_LOADED_EVENTS,
        disk_bytes: int = DISK_BYTES,
    ) -> None:
        self.directory = Path(directory or Path(tempfile.gettempdir()) / "ascendsim-runs")
        # everything stored lives in a folder named after the code that made it: a run or a lesson answer of
        # older code is never served, whichever folder the server was given
        self.code_dir = self.directory / fingerprint("engine", "lessons", "app/present", "app/server", *RENDERERS)
        self.problem = usable(self.code_dir)  # None, or why the folder cannot take runs (one line)
        self.store = RunStore(self.code_dir, max_bytes=256 * 2**20, disk_bytes=disk_bytes)
        self.coordinator = Coordinator(jobs_folder(self.code_dir))
        self.max_loaded_events = max_loaded_events
        # whether trainees' code runs here: ("sandbox", ""), ("off", why) without bubblewrap, or ("unsandboxed",
        # "") when the server was started with --allow-unsandboxed-code (a trainee's own laptop)
        self.code_runs = ("sandbox", "") if (why := sandbox.missing()) is None else ("off", why)
        self._loaded: OrderedDict[str, Loaded] = OrderedDict()
        self._lock = threading.Lock()
        self._building: dict[str, threading.Lock] = {}

    # -- what a browser names ------------------------------------------------------------------------------
    def spec(self, run: dict) -> RunSpec:
        """The spec of a run dict (validated: a lesson that exists, a trainee's run of one, or a valid playground
        request)."""
        if not isinstance(run, dict):
            raise RunRequestError(f"a run must be a mapping, got {shown(run)}", f"运行必须是映射，收到 {shown(run)}")
        if "exercise" in run:
            code = run.get("code")
            if not (isinstance(code, str) and len(code) == 32 and all(c in "0123456789abcdef" for c in code)):
                raise RunRequestError(
                    f"code: must be 32 hexadecimal digits, got {shown(code)}",
                    f"code：必须是 32 位十六进制数字，收到 {shown(code)}",
                )
            return RunSpec.of(f"exercise:{lesson_of(run['exercise']).number}", DEFAULT_PROFILE, {"code": code})
        if "lesson" in run:
            return RunSpec.of(f"lesson:{lesson_of(run['lesson']).number}", DEFAULT_PROFILE, {})
        return validate_request(run)[0]

    def stored(self, spec: RunSpec) -> bool:
        return self.store.path(spec).is_file()

    # -- jobs (in a background callback's process) -------------------------------------------------------------
    def compute(
        self, request: dict, session: str, report: Callable[[str, dict], None], lang: str | None = None
    ) -> tuple | None:
        """Make the run of a playground request stored, in a job: the session's limits, then one computation per
        run however many ask (an identical request waits for it), in one of the machine's slots.

        ``report(phase, values)`` says how far it is (queued, joined, simulating, storing). Returns a note for
        the page (a message key and its values: a damaged file recomputed, a run shared) or None. Raises
        :class:`RunRequestError` (a bad request, a store that cannot take the run) or
        :class:`~app.server.jobs.Busy` (the session's or the queue's limits)."""
        spec, _scenario, cost = validate_request(request)
        report = _changes_only(report)
        with self.coordinator.session(session, spec.key):
            if not self.stored(spec) and (problem := unusable(self.code_dir)):
                raise RunRequestError(str(problem), problem.zh)  # said before the run (the folder may have healed)
            return self._make(spec, cost.events, report, request, lang)

    def _make(self, spec: RunSpec, events: int, report, request: dict, lang: str | None) -> tuple | None:
        if self.store.get(spec) is not None:
            return self.store.notes.pop(spec.key, None)
        with self.coordinator.single(spec.key, lambda: report("joined", {})) as mine:
            if not mine and self.store.get(spec) is not None:
                return ("web.note.joined", {})
            with self.coordinator.slot(lambda ahead: report("queued", {"ahead": ahead})):
                note = self.store.notes.pop(spec.key, None)
                ran = self._simulate(spec, events, report)
                after_run()
                result = ran.result
                report("storing", {})
                self.store.remember(spec, result)
                with ThreadPoolExecutor(1, thread_name_prefix="store") as pool:  # the file is deflated (zlib lets
                    written = pool.submit(self.store.write, spec, result)  # the GIL go) while the views render
                    if lang is not None:
                        report("preparing", {})
                        # played with the inputs the run drew (a 2048^3 matmul's A and B: 0.06 s to draw again)
                        self._keep(spec.key, _playground_loaded(spec, result, ran.outcome.inputs))
                        self.prepare(spec, request, lang)
                    try:
                        written.result()
                    except StoreError as exc:
                        if lang is not None:  # no views kept for a run that was not
                            with contextlib.suppress(OSError):
                                self.views_path(spec, lang).unlink(missing_ok=True)
                        raise RunRequestError(str(exc), exc.zh) from None
        return note

    # -- the first views, rendered in the job that made the run -------------------------------------------
    def views_path(self, spec: RunSpec, lang: str) -> Path:
        return self.store.path(spec).with_suffix(f".views-{lang}.json")

    def prepare(self, spec: RunSpec, run: dict, lang: str) -> None:
        """Render what a page asks for first, in ``lang``, as the player's callbacks do: the run's description
        (its status line in ``lang``), the answer to the first window's request (the first core, no breakpoints,
        the timeline following the cursor: the frames, the pipeline and the timeline) and the run's views (its
        metrics are its whole analysis); keep them beside the stored run, so a page is answered all three without
        a web worker loading the run (the 8192^3 run: 1.3 s to read and index) or analysing it. A folder that
        cannot take them only costs speed."""
        from plotly.utils import PlotlyJSONEncoder

        doc = self._first_views(run, lang)
        with contextlib.suppress(OSError), atomic_path(self.views_path(spec, lang)) as tmp:
            tmp.write_text(json.dumps(doc, cls=PlotlyJSONEncoder))

    def _first_views(self, run: dict, lang: str) -> dict:
        from . import render
        from .layout import FOLLOWING

        loaded = self.load(run)
        described = render.describe(loaded, lang)
        meta, expand = described[0], described[6]
        core = meta["cores"][0] if meta["cores"] else None
        asked = {"run": meta["key"], "core": core, "lang": lang, "bps": [], "first": 0, "count": meta["window"]}
        asked["step"] = meta["start"]
        key = (0, meta["window"], core, lang, ())
        window = loaded.window(key, lambda: render.window(loaded, *key))
        answer = render.window_answer(loaded, window, meta["start"], lang, expand, FOLLOWING, None, None)
        return {
            "views": render.run_views(loaded, lang, tryable=True),
            "meta": list(described),
            "first": {"asked": asked, "expand": expand, "follow": FOLLOWING},
            "answer": list(answer),  # its window is the frames of the first window's key, with "sig" and "tl"
        }

    def prepared(self, loaded: Loaded, key: tuple) -> dict | None:
        """The window :meth:`prepare` kept for ``key`` (first, count, core, lang, breakpoints), or None."""
        first, count, core, lang, bps = key
        kept = self._first_answer(loaded.spec, lang) if first == 0 and not bps else None
        if kept is None or [kept[0]["count"], kept[0]["core"]] != [count, core]:
            return None
        return {k: v for k, v in kept[3][0].items() if k not in ("sig", "tl")}

    def prepared_meta(self, run: dict, lang) -> list | None:
        """The player's description of a playground ``run`` (:meth:`~app.web.player.Callbacks.load_run`'s answer)
        as :meth:`prepare` kept it in ``lang``, or None (also when the run's file is gone)."""
        spec = self._playground(run)
        doc = self._kept(spec, lang) if spec is not None and self.stored(spec) else None
        meta = doc.get("meta") if doc is not None else None
        return meta if isinstance(meta, list) and len(meta) == 8 and isinstance(meta[0], dict) else None

    def prepared_views(self, run: dict, lang) -> list | None:
        """The views of a playground ``run`` ("try it" offered) :meth:`prepare` kept in ``lang``, or None."""
        spec = self._playground(run)
        doc = self._kept(spec, lang) if spec is not None else None
        views = doc.get("views") if doc is not None else None
        return views if isinstance(views, list) and len(views) == 5 else None

    def prepared_answer(self, run: dict, req: dict, expand, follow, view) -> tuple | None:
        """The answer :meth:`prepare` kept to the first window's request, if ``req`` (with the timeline's expanded
        cores ``expand``, its follow box ``follow`` and the page's viewport ``view``) asks what it asked; else
        None (the window is then rendered from the loaded run)."""
        spec = self._playground(run)
        kept = self._first_answer(spec, req.get("lang")) if spec is not None else None
        if kept is None:
            return None
        asked, kept_expand, kept_follow, (w, shown, pipeline, timeline) = kept
        if {k: req.get(k) for k in asked} != asked or [expand, follow] != [kept_expand, kept_follow]:
            return None
        if isinstance(view, dict) and view.get("run") == asked["run"]:
            return None  # the page has a viewport of this run already: the timeline it keeps is not the first one
        return {**w, "sig": req.get("sig")}, shown, pipeline, timeline

    def _first_answer(self, spec: RunSpec, lang) -> tuple | None:
        """What :meth:`prepare` kept of the first window's request in ``lang``: (what it asked, the expanded cores,
        the follow box, the answer), or None."""
        doc = self._kept(spec, lang)
        first, answer = (doc.get("first"), doc.get("answer")) if doc is not None else (None, None)
        if not (isinstance(first, dict) and isinstance(answer, list) and len(answer) == 4):
            return None
        return first["asked"], first["expand"], first["follow"], answer

    def _playground(self, run) -> RunSpec | None:
        if not isinstance(run, dict) or "lesson" in run or "exercise" in run:
            return None
        try:
            return self.spec(run)
        except RunRequestError:
            return None

    def _kept(self, spec: RunSpec, lang) -> dict | None:
        if lang not in ("en", "zh"):
            return None
        try:
            doc = json.loads(self.views_path(spec, lang).read_text())
        except (OSError, ValueError):
            return None
        return doc if isinstance(doc, dict) else None

    def preload(self, run: dict, after_s: float = PRELOAD_AFTER_S) -> None:
        """Load ``run`` in a thread of this process ``after_s`` from now, unless it is loaded or being loaded: a page
        that had its first window from the run's job asks for the run's next window soon, but not before it has
        drawn this one (which the load, holding the interpreter, would slow down: 0.4 s for the 8192^3 run)."""
        key = self.spec(run).key
        with self._lock:
            if key in self._loaded or key in self._building:
                return

        def load() -> None:
            try:
                self.load(run)
            except Exception:  # said when the page asks for it (its callback loads it then and answers why)
                logging.getLogger("ascendsim").debug("preloading %s failed", key, exc_info=True)

        timer = threading.Timer(after_s, load)
        timer.name, timer.daemon = "preload", True
        timer.start()

    def warm(self) -> None:
        """Fill this process's imports and caches the way a playground job uses them (the kernel's C++ view, the
        renderers' modules), with a small matmul's first views rendered and thrown away: the job launcher does it
        once, so each job it forks starts warm instead of paying them again (0.38 s -> 0.25 s for a 1024x384x512
        job). Nothing is stored."""
        from plotly.utils import PlotlyJSONEncoder

        request = {"scenario": "matmul", "params": {"m": 128, "n": 128, "k": 128}, "numerics": True}
        spec, _scenario, cost = validate_request(request)
        self.store.remember(spec, self._simulate(spec, cost.events, lambda *_a: None).result)
        try:
            for lang in ("en", "zh"):
                json.dumps(self._first_views(request, lang), cls=PlotlyJSONEncoder)
        finally:
            self.store.forget(spec)
            with self._lock:
                self._loaded.pop(spec.key, None)

    def _simulate(self, spec: RunSpec, events: int, report: Callable[[str, dict], None]):
        from engine.scenarios.runner import run_scenario

        last = [0.0]

        def progress(done: int) -> None:
            now = time.monotonic()
            if now - last[0] >= PROGRESS_EVERY_S:
                last[0] = now
                report("simulating", {"events": done, "total": events})

        report("simulating", {"events": 0, "total": events})
        try:
            return run_scenario(  # no verdict (outcome.correct) is shown for a playground run: none is computed
                spec.scenario,
                spec.profile,
                numerics=spec.numerics,
                verify=False,
                progress=progress,
                **dict(spec.params),
            )
        except (ScenarioArgError, ScenarioFailed) as exc:
            raise RunRequestError(str(exc).splitlines()[0], exc.zh.splitlines()[0]) from None

    # -- loading a run for playing ------------------------------------------------------------------------------
    def load(self, run: dict) -> Loaded:
        """The run ready to play (lessons are simulated on first use; a playground run must be finished)."""
        spec = self.spec(run)
        key = spec.key
        with self._lock:
            found = self._loaded.get(key)
            if found is not None:
                self._loaded.move_to_end(key)
                return found
            building = self._building.setdefault(key, threading.Lock())
        with building:
            with self._lock:
                found = self._loaded.get(key)
            if found is not None:
                return found
            try:
                loaded = self._build(run, spec)
            finally:
                with self._lock:
                    self._building.pop(key, None)
            self._keep(key, loaded)
            return loaded

    def _keep(self, key: str, loaded: Loaded) -> None:
        """Keep ``loaded`` for playing, the least recently used runs letting go past ``max_loaded_events``."""
        with self._lock:
            self._loaded[key] = loaded
            self._loaded.move_to_end(key)
            total = sum(x.events for x in self._loaded.values())
            while total > self.max_loaded_events and len(self._loaded) > 1:
                _k, old = self._loaded.popitem(last=False)
                total -= old.events

    def _build(self, run: dict, spec: RunSpec) -> Loaded:
        if spec.is_lesson:
            lesson = get(run["lesson"])
            result = self._lesson_run(lesson, spec)
            replay = Replay(result, inputs=lesson.scenario_inputs(), context={"quiet_rules": lesson.quiet_rules})
            stops = lesson_stops(replay, lesson)
            note = self.store.notes.pop(spec.key, None)
            return Loaded(spec.key, spec, replay, FrameSource(replay), outline(replay), lesson, stops, note=note)
        result = self.store.get(spec)
        if result is None and "exercise" in run:
            raise RunRequestError(
                "your run is no longer kept on this server: press Run & check again",
                "服务器上已不再保存你的这次运行：请重新点击“运行并检查”",
            )
        if result is None:
            raise RunRequestError(
                f"run {spec.scenario} {dict(spec.params)} is not finished yet",
                f"运行 {spec.scenario} {dict(spec.params)} 尚未完成",
            )
        if "exercise" in run:
            lesson = lesson_of(run["exercise"])
            try:
                sources = {lesson.exercise_file.name: self.code_path(spec).read_text(encoding="utf-8")}
            except OSError:
                sources = None
            replay = Replay(result, sources=sources)
            return Loaded(spec.key, spec, replay, FrameSource(replay), outline(replay), exercise=lesson)
        return _playground_loaded(spec, result)

    def _lesson_run(self, lesson: Lesson, spec: RunSpec):
        """A lesson's run: stored, or computed once (by one worker of the machine; the others wait for it)."""
        result = self.store.get(spec)
        if result is not None:
            return result
        with self.coordinator.single(spec.key) as mine:
            result = None if mine else self.store.get(spec)
            if result is None:
                try:
                    result = run_lesson(lesson)
                except Exception as exc:  # a lesson being written may be broken: say so on the page
                    logging.getLogger("ascendsim").exception("lesson %d: its scenario failed", lesson.number)
                    raise RunRequestError(
                        f"lesson {lesson.number}: its scenario failed (the server's log says why)",
                        f"第 {lesson.number} 课：课程的场景运行失败（原因见服务器日志）",
                    ) from exc
                try:
                    self.store.put(spec, result)
                except StoreError as exc:  # served from this process's memory; said on the page
                    self.store.notes[spec.key] = unstored(exc)
        return result

    def lessons(self) -> tuple[Lesson, ...]:
        return lessons()

    def truth(self, lesson: Lesson, question: str) -> str:
        """What the simulator answers to a lesson's predict-then-run question (computed once, kept on disk)."""
        if question not in {q.id for q in lesson.questions}:
            ids = ", ".join(q.id for q in lesson.questions)
            raise RunRequestError(
                f"question must be one of {ids}, got {shown(question)}",
                f"问题必须是 {ids} 之一，收到 {shown(question)}",
            )
        path = self.code_dir / f"truth-{lesson.number}-{question}.txt"
        if path.is_file():
            return path.read_text()
        answer = str(lesson.module("scenario").__dict__[f"truth_{question}"]())
        with atomic_path(path) as tmp:
            tmp.write_text(answer)
        return answer


def _playground_loaded(spec: RunSpec, result, drawn: dict | None = None) -> Loaded:
    """A playground run ready to play; ``drawn``: its inputs, when the run that drew them is at hand."""
    inputs = None
    scenario = registry()[spec.scenario]
    if scenario.estimate(load_profile(spec.profile), dict(spec.params), spec.numerics).input_bytes <= MAX_INPUT_BYTES:
        inputs = drawn if drawn is not None else spec.inputs()
    replay = Replay(result, inputs=inputs, context={"params": dict(spec.params)})
    return Loaded(spec.key, spec, replay, FrameSource(replay), outline(replay))


def usable(folder: Path) -> str | None:
    """Why ``folder`` cannot hold runs (one line naming it and the need), or None when it can."""
    problem = unusable(folder)
    return None if problem is None else str(problem)


def unusable(folder: Path) -> StoreError | None:
    """Why ``folder`` cannot hold runs (a :class:`StoreError`: one line in each language), or None when it can."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".probe-{os.getpid()}-{threading.get_ident()}"
        probe.write_bytes(b"ok")
        probe.unlink()
    except OSError as exc:
        return store_error(exc, folder, 1 << 20)
    return None


def jobs_folder(code_dir: Path) -> Path:
    """Where the jobs of a runs folder keep their locks and results: this machine's temporary folder, one
    folder per runs folder (every worker of a server shares it). Jobs are processes of this machine and
    their results are fetched within seconds, so they need no shared disk, and a full or read-only runs
    folder does not stop a job from saying so."""
    tag = hashlib.sha256(str(code_dir.resolve()).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"ascendsim-jobs-{os.getuid()}-{tag}"


def _changes_only(report: Callable[[str, dict], None]) -> Callable[[str, dict], None]:
    """``report`` called only when what it says changes: a job waiting for a slot looks 10 times a second, and
    each report is a write to the jobs' cache that every waiting page's poll reads."""
    last: list = []

    def say(phase: str, values: dict) -> None:
        if last != [phase, values]:
            last[:] = [phase, values]
            report(phase, values)

    return say


__all__ = ("Loaded", "RunRequestError", "Runs", "breakpoints_of", "fingerprint", "validate_request")
