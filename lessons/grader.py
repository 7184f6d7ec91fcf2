"""The grader: run a submission in an isolated child process, judge what it did in this process.

How one submission is graded (:func:`grade_file`):

1. its folder (or lone file) is copied to a fresh temporary folder, so nothing it writes survives
   and nothing it leaves there reaches the next submission;
2. ``python -I -B lessons/harness.py FD`` runs it there (``subprocess``, never a fork of the grader)
   in a new session (its own process group), with a minimal environment, stdout and stderr sent to
   files, and a private pipe ``FD`` as the result channel; the harness caps its address space, CPU
   time and file sizes, installs an audit hook, runs the lesson's ``drive.collect`` on the trainee's
   code with seeded inputs, and sends exactly one frame of plain data (:mod:`lessons.wire`);
3. the grader waits at most the lesson's wall-time limit, then kills the whole process group (and
   kills it again after a normal exit, so nothing the submission left behind keeps running);
4. the verdict is computed here, from the frame's data, by the lesson's ``check.judge`` and the
   predict-then-run questions (answered by running the lesson's scenario in this process). The
   child's exit code and what it printed never decide it.

Verdicts (:data:`VERDICTS`): ``PASS``, ``FAIL`` (some criterion failed), ``NOT_ON_DEVICE`` (the
numbers are right but the run shows the simulated device did not produce them: no kernel did the
work, or the result did not come back from memory a kernel wrote), ``RUNTIME_ERROR`` (with the
traceback trimmed to the trainee's file), ``SYNTAX_ERROR``, ``TIMEOUT`` (wall or CPU time),
``MEMORY_LIMIT``, ``OUTPUT_LIMIT``, ``EARLY_EXIT`` (``sys.exit`` or ``os._exit`` before the results
were collected), ``FORBIDDEN`` (started a process, sent a signal, loaded a C library, or wrote outside
its folder), ``TAMPERED`` (patched the engine or the lesson's modules, or the result channel carried
anything but one well-formed frame with the run's token), ``CRASH`` (died some other way) and
``NO_SUBMISSION``.

What it defends against: early exits with code 0 (``sys.exit`` is caught, ``os._exit`` leaves no
frame); fake "PASS" output and fake report files (never read; the output is shown, not believed);
monkeypatching the checker (it does not run in the child; patching what is loaded there, the engine
or the lesson's drive and check, is noticed by a fingerprint taken before the submission ran);
computing the answer on the host (the criteria demand the kernel's flops and a device-to-host copy of
memory a kernel wrote); infinite loops and sleeps (wall and CPU limits); memory hogs (``RLIMIT_AS``);
output floods (``RLIMIT_FSIZE`` on the output files); forks, process spawns and signals (refused by the
audit hook, as are ``ctypes`` calls and importing ``subprocess``, ``multiprocessing`` or ``socket``;
the whole process group is killed in any case); exceptions and syntax errors (reported, trimmed to
the trainee's file). One submission's failure never stops the others.

What it cannot defend against: the trainee's code *is* the host program, so it runs in the same
process as the simulator it drives. A submission that deliberately digs the harness's token and
channel out of memory can forge a whole result frame; the grader still recomputes the expected
numbers itself and looks for the device's evidence in the trace, but a forgery consistent in every
respect cannot be told from a real run, and a patch undone before the run ends leaves no fingerprint.
The audit hook sees Python-level operations only: native code the submission manages to load could
escape it, and a process that leaves the process group (a new session) would escape the final kill.
The limits are POSIX rlimits, which a process running as root can raise again, and the filesystem
guard covers writes, not reads. For hostile code, run the grader itself inside a container or VM.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from .catalog import LANGS, Lesson, Limits
from .checks import Criterion, Data, pick
from .wire import MAX_FRAME_BYTES, WireError, decode, split

HARNESS = Path(__file__).resolve().parent / "harness.py"
MAX_SUBMISSION_BYTES = 4 << 20  # a folder larger than this (or with more files) is not copied, only the exercise
MAX_SUBMISSION_FILES = 64
SHOWN_OUTPUT_CHARS = 2000

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
    "FORBIDDEN": ("did something exercises may not do", "执行了练习中不允许的操作"),
    "TAMPERED": ("changed the simulator or the check, or forged results", "篡改了模拟器或检查程序，或伪造了结果"),
    "CRASH": ("the process died", "进程异常终止"),
    "NO_SUBMISSION": ("no exercise file found", "找不到练习文件"),
}
_CHILD_STATUS = {
    "syntax": "SYNTAX_ERROR",
    "exception": "RUNTIME_ERROR",
    "memory": "MEMORY_LIMIT",
    "early_exit": "EARLY_EXIT",
    "forbidden": "FORBIDDEN",
}


@dataclass
class ChildRun:
    """What one child process produced: its one frame's document (or why there is none)."""

    status: str  # "result", a key of _CHILD_STATUS, or a verdict decided from outside (TIMEOUT, ...)
    doc: dict | None
    message: str
    stdout: str
    stderr: str
    returncode: int | None
    wall_s: float


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
        }


def _state(passed: bool | None) -> str:
    return "NOT_RUN" if passed is None else ("PASS" if passed else "FAIL")


# -- the child ------------------------------------------------------------------------------------
def _copy_submission(exercise: Path, work: Path) -> Path:
    """Copy the exercise's folder (its files, not sub-folders) into ``work``; only the file itself when the
    folder is large (a file checked where it lies, in a big working folder)."""
    work.mkdir(parents=True)
    files = [p for p in exercise.parent.iterdir() if p.is_file() and not p.is_symlink()]
    if len(files) > MAX_SUBMISSION_FILES or sum(p.stat().st_size for p in files) > MAX_SUBMISSION_BYTES:
        files = [exercise]
    for p in files:
        shutil.copy2(p, work / p.name)
    return work / exercise.name


def find_exercise(source: Path, exercise_name: str = "exercise.py") -> Path | None:
    """The file to grade in a submission entry: the entry itself if it is a .py file, else its exercise.py
    (or its only .py file)."""
    if source.is_file():
        return source if source.suffix == ".py" else None
    if (source / exercise_name).is_file():
        return source / exercise_name
    candidates = [p for p in source.glob("*.py") if p.is_file()]
    return candidates[0] if len(candidates) == 1 else None


def _read_all(fd: int, sink: list, cap: int) -> None:
    total = 0
    while True:
        try:
            chunk = os.read(fd, 1 << 20)
        except OSError:
            break
        if not chunk:
            break
        total += len(chunk)
        if total > cap:
            sink.append(None)  # too much: the grader stops reading
            break
        sink.append(chunk)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _tail(path: Path, limit: int) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    text = data.decode("utf-8", errors="replace")
    return text if len(text) <= limit else text[:limit] + f"\n... ({len(text) - limit} more characters)"


def run_child(lesson: Lesson, exercise: Path, limits: Limits | None = None, harness: Path = HARNESS) -> ChildRun:
    """Run ``exercise`` (in a temporary copy of its folder) under the lesson's drive; never raises for
    anything the submission does. (``harness`` is replaceable for the grader's own tests.)"""
    limits = limits or lesson.limits
    shown = exercise.name
    with tempfile.TemporaryDirectory(prefix="ascendsim-grade-") as tmp:
        tmp_path = Path(tmp)
        try:
            target = _copy_submission(exercise, tmp_path / "work")
        except OSError as exc:
            return ChildRun("NO_SUBMISSION", None, f"cannot copy the submission: {exc}", "", "", None, 0.0)
        out_path, err_path = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
        read_fd, write_fd = os.pipe()
        token = secrets.token_hex(16)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "HOME": str(tmp_path),
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            "PYTHONHASHSEED": "0",
        }
        control = {
            "token": token,
            "lesson": lesson.package,
            "file": str(target),
            "shown": shown,
            "limits": {
                "memory_mb": limits.memory_mb,
                "cpu_s": limits.cpu_s,
                "output_kb": limits.output_kb,
            },
        }
        start = time.perf_counter()
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-B", str(harness), str(write_fd)],
                stdin=subprocess.PIPE,
                stdout=out,
                stderr=err,
                cwd=target.parent,
                env=env,
                pass_fds=(write_fd,),
                start_new_session=True,
            )
        os.close(write_fd)
        chunks: list = []
        reader = threading.Thread(target=_read_all, args=(read_fd, chunks, MAX_FRAME_BYTES), daemon=True)
        reader.start()
        try:
            proc.stdin.write((json.dumps(control) + "\n").encode())
            proc.stdin.close()
        except OSError:
            pass
        timed_out = False
        try:
            proc.wait(timeout=limits.wall_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        _kill_group(proc.pid)  # the whole group: stragglers it forked die with it
        proc.wait()
        reader.join(timeout=5)
        os.close(read_fd)
        wall = time.perf_counter() - start
        stdout = _tail(out_path, SHOWN_OUTPUT_CHARS)
        stderr = _tail(err_path, SHOWN_OUTPUT_CHARS)
        output_full = any(p.stat().st_size >= limits.output_kb << 10 for p in (out_path, err_path))
        rc = proc.returncode

    def result(status: str, message: str, doc: dict | None = None) -> ChildRun:
        return ChildRun(status, doc, message, stdout, stderr, rc, wall)

    if timed_out:
        return result("TIMEOUT", f"still running after {limits.wall_s:g} s of wall time; the process group was killed")
    if None in chunks:
        return result("OUTPUT_LIMIT", f"sent more than {MAX_FRAME_BYTES} B of results")
    if output_full or rc == -signal.SIGXFSZ:
        return result("OUTPUT_LIMIT", f"printed more than {limits.output_kb} KiB; stopped")
    data = b"".join(chunks)
    if data:
        try:
            frames = split(data)
            if len(frames) != 1:
                return result("TAMPERED", f"the result channel carried {len(frames)} frames, expected exactly one")
            doc = decode(frames[0])
        except WireError as exc:
            return result("TAMPERED", f"the result channel carried a malformed frame ({exc})")
        if not isinstance(doc, dict) or doc.get("token") != token:
            return result("TAMPERED", "the result frame does not carry this run's token")
        if doc.get("tampered"):
            names = ", ".join(doc["tampered"][:5])
            return result("TAMPERED", f"your code replaced parts of the simulator or the check: {names}")
        return result(doc.get("status", "CRASH"), str(doc.get("message", "")), doc)
    if rc == -signal.SIGXCPU:
        return result("TIMEOUT", f"used more than {limits.cpu_s} s of CPU time; stopped")
    if "MemoryError" in stderr:
        return result("MEMORY_LIMIT", f"ran out of its {limits.memory_mb} MiB of memory")
    if rc == 0:
        return result("EARLY_EXIT", "the process ended with code 0 before the check collected any result (os._exit?)")
    how = f"signal {-rc}" if rc and rc < 0 else f"exit code {rc}"
    return result("CRASH", f"the process died ({how}) without sending results")


# -- judging --------------------------------------------------------------------------------------
_LOCK = threading.Lock()


@cache
def _scenario_value(package: str, name: str):
    """A lesson scenario's function, computed once per grader process (truths, baselines)."""
    import importlib

    return getattr(importlib.import_module(f"{package}.scenario"), name)()


class Context:
    """What a check may use besides the child's data: the lesson, its settings, and answers and baselines
    computed by running the lesson's own (trusted) scenario code in the grader."""

    def __init__(self, lesson: Lesson) -> None:
        self.lesson = lesson
        self.settings = lesson.settings

    def reference(self, name: str):
        with _LOCK:
            return _scenario_value(self.lesson.package, name)

    def truth(self, question: str) -> str:
        return str(self.reference(f"truth_{question}"))


def judge(lesson: Lesson, data: Data) -> list[Criterion]:
    """The lesson's criteria and the predictions, from the child's data, in this process."""
    ctx = Context(lesson)
    criteria = list(lesson.module("check").judge(data, ctx))
    predictions = data.value("predictions") or {}
    for q in lesson.questions:
        yours = predictions.get(q.id) if isinstance(predictions, dict) else None
        truth = ctx.truth(q.id)
        criteria.append(Criterion(f"predict_{q.id}", yours is not None and str(yours) == truth, str(yours), truth, ""))
    return criteria


def _title(lesson: Lesson, ident: str, lang: str) -> tuple[str, str]:
    meta = lesson.criteria.get(ident)
    if meta is None:
        return ident, ""
    return meta.title[lang], meta.hint[lang]


def grade_file(lesson: Lesson, exercise: Path | None, ident: str = "", lang: str = "en", limits=None) -> GradeResult:
    """Grade one submission end to end; never raises because of what the submission does."""
    if lang not in LANGS:
        raise ValueError(f"--lang must be one of {', '.join(LANGS)}, got {lang!r}")
    ident = ident or (exercise.stem if exercise else "?")
    t0 = time.perf_counter()
    not_run = [CriterionResult(c, None, *_title(lesson, c, lang)[:1]) for c in lesson.criteria]
    if exercise is None or not exercise.exists():
        return GradeResult(ident, lesson.number, "NO_SUBMISSION", 0, not_run, [VERDICTS["NO_SUBMISSION"][0]], 0.0)
    child = run_child(lesson, exercise, limits)
    messages: list[str] = []
    if child.status != "result":
        verdict = _CHILD_STATUS.get(child.status, child.status)
        messages.append(child.message)
        return GradeResult(
            ident, lesson.number, verdict, 0, not_run, messages, time.perf_counter() - t0, child.stdout, lang=lang
        )
    try:
        data = Data(child.doc)  # its runs are unpacked once, for the criteria and the cost table
        raw = judge(lesson, data)
        costs = None
        main = lesson.module("check").MAIN_RUN
        if main and data.has_run(main):
            from .costs import cost_table

            costs = cost_table(data.run(main))
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        messages.append(f"the results sent back are incomplete or malformed: {type(exc).__name__}: {exc}")
        return GradeResult(
            ident, lesson.number, "TAMPERED", 0, not_run, messages, time.perf_counter() - t0, child.stdout, lang=lang
        )
    results = []
    for c in raw:
        title, hint = _title(lesson, c.id, lang)
        results.append(
            CriterionResult(
                c.id, bool(c.passed), title, pick(c.yours, lang), pick(c.expected, lang), pick(c.detail, lang), hint
            )
        )
    metas = {c.id: lesson.criteria.get(c.id) for c in raw}
    failed = [c for c in results if not c.passed]
    integrity_failed = any(metas[c.id] and metas[c.id].integrity for c in failed)
    correct = all(c.passed for c in results if metas[c.id] and metas[c.id].correctness)
    if not failed:
        verdict, score = "PASS", 100
    elif integrity_failed and correct:
        verdict, score = "NOT_ON_DEVICE", 0
    else:
        verdict, score = "FAIL", round(100 * (len(results) - len(failed)) / len(results))
    for c in failed:
        messages.append(
            f"{c.title}: {c.yours} / {c.expected}" if lang == "en" else f"{c.title}：{c.yours} / {c.expected}"
        )
    return GradeResult(
        ident, lesson.number, verdict, score, results, messages, time.perf_counter() - t0, child.stdout, costs, lang
    )


# -- a class --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Entry:
    id: str
    path: Path
    exercise: Path | None = field(default=None)


def discover(folder: Path) -> list[Entry]:
    """One entry per submission in ``folder``: each sub-folder and each .py file (hidden names skipped)."""
    entries = []
    for p in sorted(folder.iterdir()):
        if p.name.startswith((".", "__")):
            continue
        if p.is_dir() or p.suffix == ".py":
            entries.append(Entry(p.stem if p.is_file() else p.name, p, find_exercise(p)))
    return entries


def shard(entries: list[Entry], k: int, m: int) -> list[Entry]:
    """Shard ``k`` of ``m`` (1-based): every m-th entry in id order, so shards never overlap."""
    ordered = sorted(entries, key=lambda e: e.id)
    return [e for i, e in enumerate(ordered) if i % m == k - 1]


def grade_many(lesson: Lesson, entries: list[Entry], jobs: int = 1, lang: str = "en", limits=None) -> list[GradeResult]:
    """Grade every entry (``jobs`` children at a time); one row per entry, in id order, none dropped."""
    from concurrent.futures import ThreadPoolExecutor

    def one(entry: Entry) -> GradeResult:
        try:
            return grade_file(lesson, entry.exercise, entry.id, lang, limits)
        except Exception as exc:  # a grader bug must not drop a row either
            return GradeResult(entry.id, lesson.number, "CRASH", 0, [], [f"grader error: {exc!r}"], 0.0)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(one, entries))
    return sorted(results, key=lambda r: r.id)
