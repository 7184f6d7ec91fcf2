"""What a browser may name, the error that answers a request the server will not run, and what a page is told
when a job failed outside its own handling."""

from __future__ import annotations

import logging

from dash import no_update

from app.present.messages import t as msg
from app.server.jobs import LOST
from lessons.catalog import Lesson, LessonError, get, lessons


class RunRequestError(ValueError):
    """A run asked for by a browser is invalid or too big; the message names the field, the limit and the value,
    in English (``str``) and in Chinese (``zh``), written where the error is made from the same facts."""

    def __init__(self, message: str, zh: str) -> None:
        super().__init__(message)
        self.zh = zh

    def text(self, lang: str) -> str:
        """The message in the page's language."""
        return self.zh if lang == "zh" else str(self)


def shown(value, limit: int = 40) -> str:
    """A value a page sent, as a message quotes it: its ``repr``, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def lesson_of(number) -> Lesson:
    """The lesson a browser named (RunRequestError naming the field otherwise)."""
    try:
        return get(number)
    except (LessonError, TypeError, ValueError):
        numbers = _lesson_numbers()
        raise RunRequestError(
            f"lesson must be one of {numbers}, got {shown(number)}",
            f"课程编号必须是 {numbers} 之一，收到 {shown(number)}",
        ) from None


def _lesson_numbers() -> str:
    return ", ".join(str(lesson.number) for lesson in lessons())


def job_failed(outputs: int, at: int):
    """A background callback's ``on_error``: a job that failed outside its own handling (its process lost again
    and again, or an error it did not expect) is said in one line at output ``at`` of ``outputs``, instead of a
    page left waiting. A poll does not carry the page's state, so the line is in both languages; the error itself
    goes to the server's log, never to the page."""

    def said(err: Exception):
        text = str(err)
        key = "web.job_lost" if LOST in text else "web.job_failed"
        if key == "web.job_failed":
            logging.getLogger("ascendsim").error("a job failed: %s", text)
        out = [no_update] * outputs
        out[at] = f"{msg(key, 'en')} / {msg(key, 'zh')}"
        return out

    return said


__all__ = ("RunRequestError", "job_failed", "lesson_of", "shown")
