"""What a browser may name, the error that answers a request the server will not run, and what a page is told
when a job failed outside its own handling."""

from __future__ import annotations

import logging

from dash import no_update

from app.present.messages import t as msg
from app.server.jobs import LOST
from lessons.catalog import Lesson, LessonError, get


class RunRequestError(ValueError):
    """A run asked for by a browser is invalid or too big; the message names the field, the limit and the value."""


def lesson_of(number) -> Lesson:
    """The lesson a browser named (RunRequestError naming the field otherwise)."""
    try:
        return get(number)
    except (LessonError, TypeError, ValueError) as exc:
        raise RunRequestError(f"lesson: {exc}") from None


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


__all__ = ("RunRequestError", "job_failed", "lesson_of")
