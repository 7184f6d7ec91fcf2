"""What a browser may name, and the error that answers a request the server will not run."""

from __future__ import annotations

from lessons.catalog import Lesson, LessonError, get


class RunRequestError(ValueError):
    """A run asked for by a browser is invalid or too big; the message names the field, the limit and the value."""


def lesson_of(number) -> Lesson:
    """The lesson a browser named (RunRequestError naming the field otherwise)."""
    try:
        return get(number)
    except (LessonError, TypeError, ValueError) as exc:
        raise RunRequestError(f"lesson: {exc}") from None


__all__ = ("RunRequestError", "lesson_of")
