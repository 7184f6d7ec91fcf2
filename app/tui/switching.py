"""Opening another lesson without leaving the app (``o``): the lesson picker, then the same preparing worker
the app starts with (a base of :class:`app.tui.app.AscendApp`, which holds the state it resets)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from app.present.messages import LANGS
from app.present.walkthrough import Walkthrough, lesson_walkthrough

from .screens import LessonPicker

Builder = Callable[[Callable[[str], None]], Walkthrough]


def exercise_path(number: int) -> Path:
    """Where ``ascendsim lesson start N`` puts lesson N's exercise (what ``g`` checks unless --file says)."""
    return Path(f"ascendsim-lesson-{number:02d}") / "exercise.py"


def lesson_builder(number: int) -> Builder:
    """What prepares lesson ``number`` in the worker (its run, replay, steps and analysis)."""

    def build(progress: Callable[[str], None]) -> Walkthrough:
        return lesson_walkthrough(number, progress)

    return build


def lesson_headings(lang: str) -> list[tuple[int, str]]:
    """(number, "Lesson 3: title — beginner") of every lesson, in ``lang``: its heading and its level on the path."""
    from lessons import catalog
    from lessons.render import lesson_heading

    return [
        (lesson.number, f"{lesson_heading(lesson, lang)} — {lesson.level_name(lang)}") for lesson in catalog.lessons()
    ]


class Switching:
    """The lesson-switching half of the app: ``lesson_builder(number)`` makes the builder of a lesson."""

    def action_pick_lesson(self) -> None:
        """The picker over the player: every lesson, the open one highlighted (none in scenario mode)."""
        self.push_screen(LessonPicker(lesson_headings(self.lang), self.lesson_number, self.lang), self._picked)

    def _picked(self, number: int | None) -> None:
        """Escape (None), or the lesson already open and ready, change nothing; any other lesson is prepared."""
        if number is None or (number == self.lesson_number and self.walk is not None):
            return
        self.open_lesson(number)

    def open_lesson(self, number: int):
        """Prepare lesson ``number`` in the worker (the preparing panel shows its phases), then play it from
        its start; the exercise ``g`` checks becomes that lesson's."""
        from lessons import catalog
        from lessons.render import lesson_heading

        spec = catalog.get(number)
        self.build = self.lesson_builder(number)
        self.lesson_number, self.initial_steps = number, 0
        self.what = {lang: lesson_heading(spec, lang) for lang in LANGS}
        self.exercise = exercise_path(number)
        self.revealed = revealed(number, self.exercise)
        self.reset_player()
        return self.prepare()

    def reveal_by_check(self) -> None:
        """A check of the exercise ran: the steps' diagnoses are revealed (and remembered beside it)."""
        from lessons import progress

        progress.record_check(self.walk.lesson, self.exercise.parent)
        self.revealed = True

    def action_reveal(self) -> None:
        """The steps' diagnoses, on request (remembered beside the exercise: lessons.progress)."""
        from lessons import progress

        if self.exercise is not None:
            progress.reveal(self.walk.lesson, self.exercise.parent)
        self.revealed = True
        self.redraw()


def revealed(lesson: int | None, exercise: Path | None) -> bool:
    """Are lesson ``lesson``'s diagnoses revealed beside ``exercise`` (a check ran there, or they were asked for)?"""
    from lessons import progress

    return lesson is not None and exercise is not None and progress.revealed(lesson, exercise.parent) is not None


__all__ = ("Builder", "Switching", "exercise_path", "lesson_builder", "lesson_headings", "revealed")
