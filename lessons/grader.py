"""The grader: run a submission in a sandbox, re-execute what it recorded, judge only that re-execution.

How one submission is graded (:func:`grade_file`):

1. its files (the exercise and the regular files beside it; no symlink, no link to a lesson's own files)
   are read by the grader and handed to the child on stdin (:mod:`lessons.child`), with the lesson's hidden
   cases, drawn now from a fresh seed (:mod:`lessons.hidden`);
2. the child, ``python -I -B lessons/harness.py FD``, runs in an operating-system sandbox
   (:mod:`lessons.sandbox`: bubblewrap namespaces, a read-only view without the lessons' references and
   checks, a private capped work folder, no network, a seccomp filter, rlimits) and records the program
   at the simulator's API boundary (:mod:`lessons.tape`); its one frame of plain data comes back on
   ``FD``. The grader waits at most the lesson's wall time, then kills the sandbox (and everything in it);
3. a trusted worker process (:mod:`lessons.worker`, forked from a clean server, with its own limits)
   judges it (:mod:`lessons.judge`): it re-executes the recording
   on a fresh simulation with the lesson's settings and the grader's profile (:mod:`lessons.replay`):
   every call must be on the API and every value must come out as recorded, or the verdict is TAMPERED;
4. the lesson's ``check.judge`` (and ``check.judge_hidden`` on each hidden case, from the grader's own copy of
   it) and the predict-then-run questions judge the replay's runs, the outputs it verified and the trainee's
   answers. What the child printed, patched or claimed never decides. A failure on a hidden case names its
   kind, never its values.

Verdicts (:data:`VERDICTS`): ``PASS``, ``FAIL``, ``NOT_ON_DEVICE`` (the numbers are right, but the replay
shows the device did not produce them), ``RUNTIME_ERROR``, ``SYNTAX_ERROR``, ``TIMEOUT`` (wall or CPU
time), ``MEMORY_LIMIT``, ``OUTPUT_LIMIT``, ``EARLY_EXIT``, ``FORBIDDEN`` (the sandbox refused something:
a new process, a write outside the work folder ...), ``TAMPERED`` (a recording that does not replay),
``CRASH`` and ``NO_SUBMISSION``. A failure of the child is always its own: the sandbox, the separate
worker and the limits mean a submission cannot reach the grader, another submission or their files.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import sandbox
from .catalog import LANGS, Lesson, Limits
from .checks import pick
from .child import CHILD_STATUS, find_exercise, run_child
from .hidden import draw, kind_name
from .judge import cap, references
from .worker import Server

VERDICTS = {
    "PASS": ("every criterion passed", "全部标准通过"),
    "FAIL": ("some criteria failed", "部分标准未通过"),
    "NOT_ON_DEVICE": (
        "the numbers are right, but the simulated device did not produce them",
        "结果数值正确，但并不是由模拟设备计算得到的",
    ),
    "RUNTIME_ERROR": ("your code raised an exception", "你的代码抛出了异常"),
    "SYNTAX_ERROR": ("your file does not compile", "你的文件有语法错误"),
    "TIMEOUT": ("ran past the time limit and was stopped", "超过时间限制，已被终止"),
    "MEMORY_LIMIT": ("allocated more memory than allowed", "申请的内存超过上限"),
    "OUTPUT_LIMIT": ("printed more than allowed", "输出超过上限"),
    "EARLY_EXIT": ("exited before the check could collect its results", "在检查收集结果之前就退出了"),
    "FORBIDDEN": ("did something the sandbox does not allow", "执行了沙箱不允许的操作"),
    "TAMPERED": (
        "what your program recorded does not replay on the grader's simulator",
        "你的程序的记录无法在评分器的模拟器上重放",
    ),
    "CRASH": ("the process died", "进程异常终止"),
    "NO_SUBMISSION": ("no exercise file found", "找不到练习文件"),
}
UNSANDBOXED = (
    "ran without the sandbox (bubblewrap): nothing isolated this code from the machine",
    "未在沙箱（bubblewrap）中运行：这段代码与本机之间没有任何隔离",
)


class GraderError(RuntimeError):
    """The grader cannot run here (the message says why and what to install)."""


@dataclass
class CriterionResult:
    id: str
    passed: bool | None  # None: not run (the submission did not get that far)
    title: str
    yours: str = ""
    expected: str = ""
    detail: str = ""
    hint: str = ""

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class PredictionResult:
    """A predict-then-run answer, beside the verdict (it never changes it). The simulator's answer and its
    explanation are there only when the trainee answered."""

    id: str
    question: str
    yours: str | None
    correct: bool | None  # None: not answered
    answer: str | None = None
    explanation: str | None = None

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    @property
    def state(self) -> str:
        return "UNANSWERED" if self.correct is None else ("RIGHT" if self.correct else "WRONG")


@dataclass
class HiddenResult:
    """How the hidden cases of one kind went: the kind (its id and its name in the report's language) and whether
    every criterion passed on them (None: the submission did not get that far). Never a case's values."""

    kind: str
    name: str
    passed: bool | None

    def to_dict(self) -> dict:
        return dict(self.__dict__)


HIDDEN_RAISED = (
    "(raised on a hidden case: {kind}; hidden cases are drawn afresh at every check, their values are never shown)",
    "（在隐藏用例上抛出：{kind}；隐藏用例在每次检查时重新抽取，其具体数值从不显示）",
)


@dataclass
class GradeResult:
    id: str
    lesson: int
    verdict: str
    score: int
    criteria: list[CriterionResult]
    messages: list[str]
    time_s: float
    stdout: str = ""
    costs: dict | None = None
    lang: str = "en"
    line: int | None = None  # the exercise file's line an error names (a syntax error, an exception)
    criteria_in: dict[str, list[CriterionResult]] = field(default_factory=dict)  # ``criteria`` in each language
    predictions_in: dict[str, list[PredictionResult]] = field(default_factory=dict)  # the answers, each language
    hidden_in: dict[str, list[HiddenResult]] = field(default_factory=dict)  # the hidden cases by kind, each language
    figures: dict | None = None  # the objective's figures: {"yours": {...}, "reference": {...}}

    @property
    def hidden(self) -> list[HiddenResult]:
        return self.hidden_in.get(self.lang, [])

    @property
    def predictions(self) -> list[PredictionResult]:
        return self.predictions_in.get(self.lang, [])

    @property
    def passed(self) -> bool:
        return self.verdict == "PASS"

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "lesson": self.lesson,
            "verdict": self.verdict,
            "score": self.score,
            "criteria": {c.id: _state(c.passed) for c in self.criteria},
            "messages": self.messages,
            "time_s": round(self.time_s, 3),
            "predictions": {p.id: p.state for p in self.predictions},
            "hidden": {h.kind: _state(h.passed) for h in self.hidden},
            **({"line": self.line} if self.line else {}),
        }


def _state(passed: bool | None) -> str:
    return "NOT_RUN" if passed is None else ("PASS" if passed else "FAIL")


# -- the submission's files ---------------------------------------------------------------------------
# -- judging, in a trusted worker ------------------------------------------------------------------------
_SERVER = Server()


def judge_in_worker(
    lesson: Lesson, frame: Path, refs: dict, limits: Limits, keep: Path | None = None, progress=None, hidden=()
) -> dict:
    """:func:`judge_frame` in a fresh worker process (:mod:`lessons.worker`) with its own memory, CPU and wall
    limits: a recording that would exhaust the grader only exhausts its worker. ``progress(values)`` hears
    how far the replay is (``{"done", "total", "events"}``); ``hidden``: the cases the child ran, judged too."""
    memory, cpu = max(2048, 2 * limits.memory_mb), 2 * limits.cpu_s + 30
    out = _SERVER.judge(lesson.number, frame, refs, memory, cpu, 2 * limits.wall_s + 60, keep, progress, hidden)
    if out is None:
        out = {"tampered": f"replaying the recording did not finish within its limits ({memory} MiB, {cpu} s of CPU)"}
    return out


def _title(lesson: Lesson, ident: str, lang: str) -> tuple[str, str]:
    meta = lesson.criteria.get(ident)
    if meta is None:
        return ident, ""
    return meta.title[lang], meta.hint[lang]


def grade_file(
    lesson: Lesson,
    exercise: Path | None,
    ident: str = "",
    lang: str = "en",
    limits: Limits | None = None,
    sandboxed: bool = True,
    keep: Path | None = None,
    progress: Callable[..., None] | None = None,
    refs: dict | None = None,
    hidden_seed: int | None = None,
) -> GradeResult:
    """Grade one submission end to end; never raises because of what the submission does.

    ``progress(phase)`` hears ``"running"`` (the child starts) and ``"judging"`` (the replay starts), then
    ``progress("judging", {"done", "total", "events"})`` as the replay goes (host calls replayed, of how
    many, events the replay recorded: the grader's own count, nothing the submission reports); with
    ``keep``, the replay's main run is written there when the submission got that far (for the views).

    ``refs``: the lesson's :func:`~lessons.judge.references` when the caller keeps them (a server computes
    them once per code version); otherwise computed here while the child runs.

    ``sandboxed=False`` runs the child without bubblewrap (a trainee's own file on their own machine): the
    report then says so. With ``sandboxed=True`` and no bubblewrap, :class:`GraderError`.

    The lesson's hidden cases are drawn here from a fresh seed, or from ``hidden_seed`` (an instructor's, to
    reproduce a grading; it is never reported).
    """
    if lang not in LANGS:
        raise ValueError(f"--lang must be one of {', '.join(LANGS)}, got {lang!r}")
    if sandboxed and (why := sandbox.missing()):
        raise GraderError(why)
    limits = limits or lesson.limits
    ident = ident or (exercise.name if exercise else "?")
    t0 = time.perf_counter()
    not_run_in = {x: [CriterionResult(c, None, _title(lesson, c, x)[0]) for c in lesson.criteria] for x in LANGS}
    not_run = not_run_in[lang]
    at = LANGS.index(lang)
    notes = [] if sandboxed else [UNSANDBOXED[at]]
    if exercise is None or not exercise.exists():
        return GradeResult(ident, lesson.number, "NO_SUBMISSION", 0, not_run, [VERDICTS["NO_SUBMISSION"][at]], 0.0)
    known, refs = refs, {}
    cases = draw(lesson, hidden_seed)

    def prepare() -> None:  # while the child runs: the grader's own numbers, and the server workers fork from
        refs.update(references(lesson) if known is None else known)
        _SERVER.start()

    computing = threading.Thread(target=prepare, daemon=True)
    computing.start()
    if progress is not None:
        progress("running")
    child = run_child(lesson, exercise, limits, sandboxed, cases)
    computing.join()
    if child.status != "result":
        verdict = CHILD_STATUS.get(child.status, child.status)
        messages = [*notes, child.message or VERDICTS[verdict][at]]
        raised = {x: [] for x in LANGS}
        if child.hidden in {c.kind for c in cases}:  # the kind its exception came from, named in words
            name = kind_name(lesson, child.hidden)
            messages.append(HIDDEN_RAISED[at].format(kind=name[lang]))
            raised = {x: [HiddenResult(child.hidden, name[x], False)] for x in LANGS}
        return GradeResult(
            ident,
            lesson.number,
            verdict,
            0,
            not_run,
            messages,
            time.perf_counter() - t0,
            child.stdout,
            lang=lang,
            line=child.line,
            criteria_in=not_run_in,
            hidden_in=raised,
        )
    if progress is not None:
        progress("judging")
    try:
        judged = judge_in_worker(
            lesson,
            child.frame,
            refs,
            limits,
            keep,
            None if progress is None else lambda v: progress("judging", v),
            cases,
        )
    finally:
        with contextlib.suppress(OSError):
            child.frame.unlink()
            child.frame.parent.rmdir()
    if "tampered" in judged or "crash" in judged:
        verdict = "TAMPERED" if "tampered" in judged else "CRASH"
        messages = [*notes, judged.get("tampered") or judged["crash"]]
        return GradeResult(
            ident,
            lesson.number,
            verdict,
            0,
            not_run,
            messages,
            time.perf_counter() - t0,
            child.stdout,
            lang=lang,
            criteria_in=not_run_in,
        )
    by_lang = {x: _criteria(lesson, judged["criteria"], x) for x in LANGS}
    results = by_lang[lang]
    metas = {c.id: lesson.criteria.get(c.id) for c in results}
    off_device = {c["id"] for c in judged["criteria"] if c.get("off_device")}
    failed = [c for c in results if not c.passed]
    integrity_failed = any((metas[c.id] and metas[c.id].integrity) or c.id in off_device for c in failed)
    correct = all(c.passed or c.id in off_device for c in results if metas[c.id] and metas[c.id].correctness)
    if not failed:
        verdict, score = "PASS", 100
    elif integrity_failed and correct:
        verdict, score = "NOT_ON_DEVICE", 0
    else:
        verdict, score = "FAIL", round(100 * (len(results) - len(failed)) / len(results))
    messages = list(notes)
    for c in failed:
        messages.append(
            cap(f"{c.title}: {c.yours} / {c.expected}" if lang == "en" else f"{c.title}：{c.yours} / {c.expected}")
        )
    return GradeResult(
        ident,
        lesson.number,
        verdict,
        score,
        results,
        messages,
        time.perf_counter() - t0,
        child.stdout,
        judged["costs"],
        lang,
        criteria_in=by_lang,
        predictions_in={x: _predictions(lesson, judged.get("predictions", []), x) for x in LANGS},
        hidden_in={x: _hidden(lesson, judged.get("hidden") or [], x) for x in LANGS},
        figures=judged.get("figures"),
    )


def _hidden(lesson: Lesson, judged: list[dict], lang: str) -> list[HiddenResult]:
    return [HiddenResult(h["kind"], kind_name(lesson, h["kind"])[lang], bool(h["passed"])) for h in judged]


def _predictions(lesson: Lesson, judged: list[dict], lang: str) -> list[PredictionResult]:
    questions = {q.id: q for q in lesson.questions}
    out = []
    for p in judged:
        q = questions.get(p.get("id"))
        if q is None:
            continue
        if p.get("correct") is None:
            out.append(PredictionResult(q.id, q.text[lang], None, None))
            continue
        yours, answer = q.label(str(p["yours"]), lang), q.label(str(p["answer"]), lang)
        out.append(PredictionResult(q.id, q.text[lang], yours, bool(p["correct"]), answer, q.explain[lang]))
    return out


def _criteria(lesson: Lesson, judged: list[dict], lang: str) -> list[CriterionResult]:
    out = []
    kinds = {k.id: k for k in lesson.hidden}
    for c in judged:
        title, hint = _title(lesson, c["id"], lang)
        kind = kinds.get(c.get("case") or "")
        if kind is not None and kind.hint and not c["passed"]:  # failed on a hidden case: what that kind asks
            hint = kind.hint[lang]
        yours, expected, detail = (cap(pick(c[k], lang)) for k in ("yours", "expected", "detail"))
        out.append(CriterionResult(c["id"], bool(c["passed"]), title, yours, expected, detail, hint))
    return out


# -- a class --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Entry:
    id: str
    path: Path
    exercise: Path | None = field(default=None)


def discover(folder: Path) -> list[Entry]:
    """One entry per name in ``folder`` (hidden names skipped): its id is the name itself, so ``dup/`` and
    ``dup.py`` are two ids and every entry, graded or not (a notebook, an archive), has one row."""
    entries = []
    for p in sorted(folder.iterdir()):
        if p.name.startswith((".", "__")):
            continue
        exercise = find_exercise(p) if (p.is_dir() or p.suffix == ".py") and not p.is_symlink() else None
        entries.append(Entry(p.name, p, exercise))
    return entries


def shard(entries: list[Entry], k: int, m: int) -> list[Entry]:
    """Shard ``k`` of ``m`` (1-based): every m-th entry in id order, so shards never overlap."""
    ordered = sorted(entries, key=lambda e: e.id)
    return [e for i, e in enumerate(ordered) if i % m == k - 1]


def grade_many(
    lesson: Lesson,
    entries: list[Entry],
    jobs: int = 1,
    lang: str = "en",
    limits=None,
    sandboxed: bool = True,
    hidden_seed: int | None = None,
) -> list[GradeResult]:
    """Grade every entry (``jobs`` children at a time); one row per entry, in id order, none dropped. Each
    submission's hidden cases are drawn afresh, or all from ``hidden_seed`` (the same cases for the class)."""
    from concurrent.futures import ThreadPoolExecutor

    if sandboxed and (why := sandbox.missing()):
        raise GraderError(why)

    def one(entry: Entry) -> GradeResult:
        try:
            return grade_file(lesson, entry.exercise, entry.id, lang, limits, sandboxed, hidden_seed=hidden_seed)
        except Exception as exc:  # a grader bug must not drop a row either
            return GradeResult(entry.id, lesson.number, "CRASH", 0, [], [cap(f"grader error: {exc!r}")], 0.0)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(one, entries))
    return sorted(results, key=lambda r: r.id)
