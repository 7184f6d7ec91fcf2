"""A trainee's exercise from the browser, graded in a job exactly as ``ascendsim lesson check`` grades it.

:class:`Exercises` is the part of :class:`~app.web.runs.Runs` that runs trainees' code: the session's limits
and one of the machine's slots, then :func:`lessons.grader.grade_file` (the bubblewrap sandbox, the trusted
replay); the replay's main run is stored as an ``exercise:N`` run named by the code's hash, the code beside
it, and the lesson's reference solution is graded the same way once (what the trainee's run is compared with).
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from app import kept_references
from app.files import atomic_path
from app.server.store import RunSpec, StoreError
from lessons.catalog import Lesson

from .errors import RunRequestError, lesson_of, shown

MAX_CODE_CHARS = 256 * 1024  # a trainee's exercise sent from the editor
WALL_ENV = "ASCENDSIM_EXERCISE_WALL_S"  # an instructor's cap on an exercise's wall time (at most the lesson's)
PROGRESS_EVERY_S = 0.5


class Exercises:
    """Grading in a job; needs the :class:`~app.web.runs.Runs` it is part of (its store, coordinator, specs)."""

    def check(self, number, code, lang: str, session: str, report: Callable[[str, dict], None], sandboxed: bool = True):
        """Grade a trainee's ``code`` for lesson ``number``, in a job: the session's limits, one of the machine's
        slots, then :func:`lessons.grader.grade_file` (the sandbox, the trusted replay) exactly as
        ``ascendsim lesson check`` does. The replay's main run is stored for the views. Returns the
        :class:`~lessons.grader.GradeResult` and the run dict naming the trainee's run (None if the code did
        not get that far)."""
        lesson = lesson_of(number)
        if not isinstance(code, str):
            raise RunRequestError(f"code: must be text, got {shown(code)}", f"code：必须是文本，收到 {shown(code)}")
        if len(code) > MAX_CODE_CHARS:
            raise RunRequestError(
                f"code: at most {MAX_CODE_CHARS:,} characters, got {len(code):,}",
                f"code：最多 {MAX_CODE_CHARS:,} 个字符，收到 {len(code):,} 个",
            )
        with (
            self.coordinator.session(session),
            self.coordinator.slot(lambda n: report("queued", {"ahead": n})),
        ):
            # the reference solution's run (what the diff view compares with) is graded once, beside the first
            # trainee's run of the lesson: the two sandboxes overlap instead of queueing
            reference = threading.Thread(target=self._reference_ready, args=(lesson, sandboxed), daemon=True)
            reference.start()
            result, run = self._grade(lesson, code, lang, report, sandboxed)
            reference.join()
        return result, run

    def reference(self, lesson: Lesson, sandboxed: bool = True) -> dict | None:
        """The run dict of the lesson's reference solution graded as a trainee's code is (stored once): what
        a trainee's run is compared with."""
        code = lesson.solution_file.read_text(encoding="utf-8")
        run = {"exercise": lesson.number, "code": hashlib.sha256(code.encode()).hexdigest()[:32]}
        if self.stored(self.spec(run)):
            return run
        with self.coordinator.single(self.spec(run).key) as mine:
            if mine or not self.stored(self.spec(run)):
                return self._grade(lesson, code, "en", lambda *_: None, sandboxed)[1]
        return run

    def _reference_ready(self, lesson: Lesson, sandboxed: bool) -> None:
        """The reference's run stored, loaded and analysed (what the comparison needs of it), while the
        trainee's code runs: the diff then waits only for the trainee's own run. Also the lesson's
        references kept (the next check reads them instead of computing them beside the sandbox)."""
        run = self.reference(lesson, sandboxed)
        if run is not None:
            self.load(run).replay.report()
        kept_references.keep(lesson, self.store.directory)

    def _grade(self, lesson: Lesson, code: str, lang: str, report, sandboxed: bool):
        from lessons.grader import GraderError, grade_file
        from lessons.judge import read_kept_run

        with tempfile.TemporaryDirectory(prefix="ascendsim-exercise-") as tmp:
            folder = Path(tmp) / "submission"
            folder.mkdir()
            path = folder / lesson.exercise_file.name
            path.write_text(code, encoding="utf-8")
            keep = Path(tmp) / "run.npz"
            limits = lesson.limits.replace(wall_s=min(lesson.limits.wall_s, _wall_cap()))
            phase, stop = ["queued"], threading.Event()

            def tick() -> None:  # while the sandbox runs: how long so far, against its limit
                t0 = time.monotonic()
                while not stop.wait(PROGRESS_EVERY_S):
                    if phase[0] == "running":
                        report("running", {"s": f"{time.monotonic() - t0:.0f}", "limit": f"{limits.wall_s:g}"})

            def progress(now: str, values: dict | None = None) -> None:
                phase[0] = now
                if values:  # the replay's own count: host calls replayed, events recorded so far
                    report("replayed", {k: f"{values.get(k, 0):,}" for k in ("done", "total", "events")})
                else:
                    report(now, {"s": "0", "limit": f"{limits.wall_s:g}"} if now == "running" else {})

            ticker = threading.Thread(target=tick, daemon=True)
            ticker.start()
            try:
                result = grade_file(
                    lesson,
                    path,
                    "browser",
                    lang,
                    limits,
                    sandboxed=sandboxed,
                    keep=keep,
                    progress=progress,
                    refs=kept_references.kept(lesson, self.store.directory),
                )
            except GraderError as exc:
                logging.getLogger("ascendsim").warning("lesson %d: the grader failed: %s", lesson.number, exc)
                raise RunRequestError(str(exc), "评分器无法完成这次检查（原因见服务器日志）") from None
            finally:
                stop.set()
            if not keep.is_file():
                return result, None
            run = {"exercise": lesson.number, "code": hashlib.sha256(code.encode()).hexdigest()[:32]}
            spec = self.spec(run)
            try:
                self.store.put(spec, read_kept_run(keep))
                with atomic_path(self.code_path(spec)) as part:  # what the Code view shows of it
                    part.write_text(code, encoding="utf-8")
            except (StoreError, OSError):  # graded all the same; the views cannot show the run (the page says why)
                return result, None
        return result, run

    def code_path(self, spec: RunSpec) -> Path:
        """The trainee's code of an exercise run, beside it."""
        return self.store.path(spec).with_suffix(".exercise.py")


def _wall_cap() -> float:
    try:
        return max(1.0, float(os.environ.get(WALL_ENV) or "inf"))
    except ValueError:
        return float("inf")


__all__ = ("MAX_CODE_CHARS", "WALL_ENV", "Exercises")
