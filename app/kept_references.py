"""A lesson's references kept on disk, in a folder named after the code that computed them.

:func:`lessons.judge.references` (the truths of a lesson's questions, the baselines its check names, the reference
solution's figures) runs the lesson's own code: about 3 s for lesson 9, 1 s for lesson 7, each time a new process
grades the lesson. The web server keeps them in its store's folder (named after the code); a trainee's own checks
(``ascendsim lesson check``, the terminal app: :func:`check`) keep them in :func:`user_folder`. Only the grader
writes them, and only beside a sandboxed check: a submission's sandbox shows neither folder (only the interpreter,
the engine and the lessons, read-only), so it cannot shape what it is judged against.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np

from app.files import atomic_path
from app.sources import fingerprint
from lessons.catalog import Lesson

KEPT_CODE_VERSIONS = 4  # folders of older code kept beside the current one in the user's cache, the newest first


def _path(lesson: Lesson, folder: Path) -> Path:
    return folder / f"refs-lesson-{lesson.number}.json"


def kept(lesson: Lesson, folder: Path) -> dict | None:
    """The lesson's references kept in ``folder``, or None (none kept, or unreadable: computed again)."""
    try:
        refs = json.loads(_path(lesson, folder).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return refs if isinstance(refs, dict) else None


def keep(lesson: Lesson, folder: Path) -> None:
    """Keep the lesson's references in ``folder`` unless they are there, readable (computed once per process; a
    folder that cannot be written is left as it is: the next check computes them again)."""
    from lessons.judge import references

    if kept(lesson, folder) is not None:
        return
    refs = references(lesson)
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
        with atomic_path(_path(lesson, folder)) as part:
            part.write_text(json.dumps(refs), encoding="utf-8")


def user_folder() -> Path:
    """This code's folder in the user's cache (``$XDG_CACHE_HOME`` or ``~/.cache``, then ``ascendsim/references``),
    named after the engine's and the lessons' sources, Python's version and numpy's."""
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ascendsim" / "references"
    salt = f"python {sys.version_info[0]}.{sys.version_info[1]} numpy {np.__version__}"
    return root / fingerprint("engine", "lessons", salt=salt)


def prune(folder: Path, keep_others: int = KEPT_CODE_VERSIONS) -> None:
    """Remove the folders of older code beside ``folder`` but the ``keep_others`` most recently written."""
    with contextlib.suppress(OSError):
        others = [p for p in folder.parent.iterdir() if p.is_dir() and p != folder]
        others.sort(key=lambda p: p.stat().st_mtime, reverse=True)
        for old in others[keep_others:]:
            shutil.rmtree(old, ignore_errors=True)


def check(lesson: Lesson, file: Path, lang: str, sandboxed: bool, limits=None, hidden_seed: int | None = None):
    """A trainee's check of their own file (``ascendsim lesson check``, the terminal app's check):
    :func:`lessons.grader.grade_file`, with the lesson's references from :func:`user_folder` when a sandboxed
    check of this code kept them, kept there after it otherwise."""
    from lessons.grader import grade_file

    folder = user_folder() if sandboxed else None
    refs = kept(lesson, folder) if folder else None
    result = grade_file(lesson, file, file.name, lang, limits, sandboxed=sandboxed, hidden_seed=hidden_seed, refs=refs)
    if folder and refs is None:
        keep(lesson, folder)
        prune(folder)
    return result
