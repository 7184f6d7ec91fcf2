"""Judging a recording, in whichever trusted process calls it: replay, criteria, predictions, the cost table.

:func:`judge_frame` decodes a child's frame, replays the recording (:mod:`lessons.replay`) and runs the
lesson's ``check.judge`` (and ``check.judge_hidden`` on each hidden case the grader drew, folded in by
:func:`lessons.hidden.merge`) and its predict-then-run questions on that replay (:class:`lessons.checks.Data`).
The grader calls it in a worker process (:mod:`lessons.worker`) with its own limits; :func:`references`
are the values the lesson's own scenario code computes for the check, once per grader process.
"""

from __future__ import annotations

import threading
from functools import cache
from pathlib import Path

from .catalog import Lesson
from .checks import Criterion

MAX_MESSAGE_CHARS = 4096  # one message of a report
FIGURES_KEY = "reference_figures"  # the references' entry holding the reference solution's objective figures


def cap(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f" ... ({len(text) - limit} more characters)"


class Context:
    """What a check may use besides the replay: the lesson, its settings, and the values the grader computed
    by running the lesson's own (trusted) scenario code."""

    def __init__(self, lesson: Lesson, references: dict, hidden: tuple = ()) -> None:
        self.lesson = lesson
        self.settings = lesson.settings
        self._references = references
        self.hidden = tuple(hidden)  # the grader's own copy of the hidden cases (lessons.hidden.Case)

    def reference(self, name: str):
        return self._references[name]

    def truth(self, question: str) -> str:
        return str(self._references[f"truth_{question}"])


_REF_LOCK = threading.Lock()


@cache
def _references(package: str) -> dict:
    import importlib

    from .catalog import lessons as all_lessons
    from .reference import reference_figures

    lesson = next(ls for ls in all_lessons() if ls.package == package)
    scenario = importlib.import_module(f"{package}.scenario")
    names = [*getattr(lesson.module("check"), "REFERENCES", ()), *(f"truth_{q.id}" for q in lesson.questions)]
    refs = {name: getattr(scenario, name)() for name in names}
    refs[FIGURES_KEY] = reference_figures(lesson)
    return refs


def references(lesson: Lesson) -> dict:
    """The truths of the lesson's questions, the baselines its check names (``check.REFERENCES``) and the
    reference solution's objective figures (``FIGURES_KEY``), computed once per process by the lesson's own
    code."""
    with _REF_LOCK:
        return _references(lesson.package)


def judge(lesson: Lesson, data, refs: dict, hidden: tuple = ()) -> tuple[list[Criterion], list[dict]]:
    """The lesson's criteria, and the predict-then-run answers, from a replay (:class:`lessons.checks.Data`).

    With ``hidden`` cases, each is judged by ``check.judge_hidden`` and folded in by :func:`lessons.hidden.merge`
    (a failure there names the case's kind, nothing else); :func:`judge_hidden` gives their outcome by kind.

    A prediction is reported beside the verdict and never changes it: ``{"id", "yours", "correct"}`` and, only
    when the trainee answered, ``"answer"`` (the simulator's). An unanswered question's answer is never sent."""
    criteria, _ = judge_hidden(lesson, data, refs, hidden)
    return criteria, predictions(lesson, data, Context(lesson, refs, hidden))


def judge_hidden(lesson: Lesson, data, refs: dict, hidden: tuple = ()) -> tuple[list[Criterion], list[dict]]:
    """The lesson's criteria with its hidden cases folded in, and the hidden cases' outcome by kind
    (``[{"kind", "passed"}]``, :func:`lessons.hidden.merge`)."""
    from .hidden import merge

    ctx = Context(lesson, refs, hidden)
    check = lesson.module("check")
    criteria = list(check.judge(data, ctx))
    if not hidden:
        return criteria, []
    return merge(lesson, criteria, [(case, list(check.judge_hidden(data, ctx, case))) for case in hidden])


def predictions(lesson: Lesson, data, ctx: Context) -> list[dict]:
    """The predict-then-run answers (never the answer to a question the trainee left unanswered)."""
    given = data.value("predictions") or {}
    out = []
    for q in lesson.questions:
        yours = given.get(q.id) if isinstance(given, dict) else None
        if yours is None:
            out.append({"id": q.id, "yours": None, "correct": None})
            continue
        yours, truth = str(yours)[:200], ctx.truth(q.id)
        out.append({"id": q.id, "yours": yours, "correct": yours == truth, "answer": truth})
    return out


def keep_run(result, path: Path) -> None:
    """Write a replayed run to ``path`` (an uncompressed ``.npz``: its document as JSON and its arrays), whole or
    not at all; :func:`read_kept_run` reads it back."""
    import json

    import numpy as np

    from engine.trace.codec import run_to_doc

    doc, arrays = run_to_doc(result)
    part = path.with_name(path.name + ".part")
    with open(part, "wb") as f:
        np.savez(f, doc=np.frombuffer(json.dumps(doc).encode(), dtype=np.uint8), **arrays)
    part.replace(path)


def read_kept_run(path: Path):
    """The run :func:`keep_run` wrote (``ValueError`` if the file is not one)."""
    import json

    import numpy as np

    from engine.trace.codec import run_from_doc

    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    return run_from_doc(json.loads(arrays.pop("doc").tobytes()), arrays)


def judge_frame(
    lesson: Lesson, frame: Path, refs: dict, keep: Path | None = None, progress=None, hidden: tuple = ()
) -> dict:
    """Replay and judge a child's frame (in whichever process calls it): the criteria, the hidden cases' outcome
    by kind, the predictions, the costs and the objective's figures beside the reference's, or why not. ``hidden``:
    the cases the grader drew and gave the child (:mod:`lessons.hidden`). With ``keep``, the replay's main run
    (the lesson's ``MAIN_RUN``) is written there (:func:`keep_run`): the trainee's run as the grader re-executed
    it, for the views. ``progress``: :data:`lessons.replay.Progress`."""
    from .checks import Data
    from .hidden import runs
    from .replay import Tampered, replay
    from .wire import WireError, decode, read_first, split

    try:
        _, at = read_first(frame)
        data = frame.read_bytes()[at:]
        frames = split(data)
        if len(frames) != 1:
            raise WireError(f"the result channel carried {len(frames) + 1} frames, expected 2")
        doc = decode(frames[0])
        if not isinstance(doc, dict):
            raise WireError("the frame is not a table")
        drive = lesson.module("drive")
        replayed = replay(doc, drive, getattr(drive, "LIBRARY", {}), progress, runs(drive, hidden))
    except (WireError, Tampered) as exc:
        return {"tampered": cap(str(exc))}
    data = Data(replayed, doc.get("values") or {})
    try:
        criteria, by_kind = judge_hidden(lesson, data, refs, hidden)
        answers = predictions(lesson, data, Context(lesson, refs, hidden))
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        return {"tampered": cap(f"the recording is incomplete: {type(exc).__name__}: {exc}")}
    costs = figures = None
    main = lesson.module("check").MAIN_RUN
    if main and data.has_run(main):
        from engine.analysis.metrics import run_metrics

        from .costs import cost_table
        from .costs import figures as read_figures

        run = data.run(main)
        metrics = run_metrics(run)
        costs = cost_table(run, metrics)
        if lesson.objective.figures:
            yours = read_figures(run, lesson.objective.figures, metrics, costs)
            figures = {"yours": yours, "reference": refs.get(FIGURES_KEY) or {}}
        if keep is not None:
            keep_run(run, keep)
    return {
        "criteria": [c.__dict__ for c in criteria],
        "hidden": by_kind,
        "predictions": answers,
        "costs": costs,
        "figures": figures,
    }
