"""A trainee's progress on a lesson, kept beside their exercise: whether a step's diagnosis has been revealed.

A lesson step may hold a diagnosis (``diagnosis_en`` / ``diagnosis_zh`` in ``lesson.toml``, lesson 10's bugs):
the step shows the symptom, and the diagnosis stays hidden until the trainee has checked their exercise once
or has asked for it. That fact lives in ``.ascendsim-progress.json`` in the exercise's work folder (the one
``ascendsim lesson start N`` creates), so the command line and the terminal app, which both work on that
folder, read and write the same file::

    {"lessons": {"10": {"checks": 1, "revealed": "check"}}}

``revealed`` says why: ``"check"`` (a check ran) or ``"request"`` (the trainee asked). The web app keeps the
same two facts per browser (``app.web``); nothing is shared between trainees.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

FILE_NAME = ".ascendsim-progress.json"
REASONS = ("check", "request")


def _path(folder: Path) -> Path:
    return Path(folder) / FILE_NAME


def _read(folder: Path) -> dict:
    try:
        doc = json.loads(_path(folder).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"lessons": {}}
    lessons = doc.get("lessons") if isinstance(doc, dict) else None
    return {"lessons": lessons if isinstance(lessons, dict) else {}}


def _write(folder: Path, doc: dict) -> None:
    path = _path(folder)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


def _entry(doc: dict, number: int) -> dict:
    entry = doc["lessons"].get(str(number))
    if not isinstance(entry, dict):
        entry = doc["lessons"][str(number)] = {}
    return entry


def revealed(number: int, folder: Path | None) -> str | None:
    """Why lesson ``number``'s diagnoses are revealed in ``folder`` ("check" or "request"), or None if they are not."""
    if folder is None:
        return None
    why = _read(folder)["lessons"].get(str(number), {})
    why = why.get("revealed") if isinstance(why, dict) else None
    return why if why in REASONS else None


def record_check(number: int, folder: Path) -> None:
    """A check of lesson ``number`` ran on the exercise in ``folder``: count it, and reveal the diagnoses."""
    if not Path(folder).is_dir():
        return
    doc = _read(folder)
    entry = _entry(doc, number)
    entry["checks"] = int(entry.get("checks", 0) or 0) + 1
    entry.setdefault("revealed", "check")
    _write(folder, doc)


def reveal(number: int, folder: Path) -> None:
    """The trainee asked to see lesson ``number``'s diagnoses."""
    if not Path(folder).is_dir():
        return
    doc = _read(folder)
    _entry(doc, number).setdefault("revealed", "request")
    _write(folder, doc)
