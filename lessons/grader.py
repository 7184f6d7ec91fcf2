"""The grader: run a submission in a sandbox, re-execute what it recorded, judge only that re-execution.

How one submission is graded (:func:`grade_file`):

1. its files (the exercise and the regular files beside it; no symlink, no link to a lesson's own files)
   are read by the grader and handed to the child on stdin;
2. the child, ``python -I -B lessons/harness.py FD``, runs in an operating-system sandbox
   (:mod:`lessons.sandbox`: bubblewrap namespaces, a read-only view without the lessons' references and
   checks, a private capped work folder, no network, a seccomp filter, rlimits) and records the program
   at the simulator's API boundary (:mod:`lessons.tape`); its one frame of plain data comes back on
   ``FD``. The grader waits at most the lesson's wall time, then kills the sandbox (and everything in it);
3. a trusted worker process (forked from a clean server, with its own limits) re-executes the recording
   on a fresh simulation with the lesson's settings and the grader's profile (:mod:`lessons.replay`):
   every call must be on the API and every value must come out as recorded, or the verdict is TAMPERED;
4. the lesson's ``check.judge`` and the predict-then-run questions judge the replay's runs, the outputs
   it verified and the trainee's answers. What the child printed, patched or claimed never decides.

Verdicts (:data:`VERDICTS`): ``PASS``, ``FAIL``, ``NOT_ON_DEVICE`` (the numbers are right, but the replay
shows the device did not produce them), ``RUNTIME_ERROR``, ``SYNTAX_ERROR``, ``TIMEOUT`` (wall or CPU
time), ``MEMORY_LIMIT``, ``OUTPUT_LIMIT``, ``EARLY_EXIT``, ``FORBIDDEN`` (the sandbox refused something:
a new process, a write outside the work folder ...), ``TAMPERED`` (a recording that does not replay),
``CRASH`` and ``NO_SUBMISSION``. A failure of the child is always its own: the sandbox, the separate
worker and the limits mean a submission cannot reach the grader, another submission or their files.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
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

from . import sandbox
from .catalog import LANGS, Lesson, Limits, lessons
from .checks import Criterion, pick
from .worker import ONE_THREAD, Server

HARNESS = Path(__file__).resolve().parent / "harness.py"
MAX_SUBMISSION_BYTES = 4 << 20  # a folder larger than this (or with more files) is not copied, only the exercise
MAX_SUBMISSION_FILES = 64
MAX_FRAME_BYTES = 512 << 20
SHOWN_OUTPUT_CHARS = 2000
MAX_MESSAGE_CHARS = 4096  # one message of a report
WORK_MB = 64  # the sandbox's work folder

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
_CHILD_STATUS = {
    "syntax": "SYNTAX_ERROR",
    "exception": "RUNTIME_ERROR",
    "memory": "MEMORY_LIMIT",
    "early_exit": "EARLY_EXIT",
    "forbidden": "FORBIDDEN",
}
UNSANDBOXED = "ran without the sandbox (bubblewrap): nothing isolated this code from the machine"


class GraderError(RuntimeError):
    """The grader cannot run here (the message says why and what to install)."""


@dataclass
class ChildRun:
    """What one child produced: where its frame is (or why there is none)."""

    status: str  # "result", a key of _CHILD_STATUS, or a verdict decided from outside (TIMEOUT, ...)
    frame: Path | None
    message: str
    stdout: str
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


def cap(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f" ... ({len(text) - limit} more characters)"


# -- the submission's files ---------------------------------------------------------------------------
class NotGradable(ValueError):
    """A submission entry that cannot be graded (the message says why)."""


def find_exercise(source: Path, exercise_name: str = "exercise.py") -> Path | None:
    """The file to grade in a submission entry: the entry itself if it is a .py file, else its exercise.py
    (or its only .py file)."""
    if source.is_symlink():
        return None
    if source.is_file():
        return source if source.suffix == ".py" else None
    if (source / exercise_name).is_file():
        return source / exercise_name
    candidates = [p for p in source.glob("*.py") if p.is_file()]
    return candidates[0] if len(candidates) == 1 else None


@cache
def _protected() -> dict:
    """(device, inode) -> path of every lesson's reference and check: a submission may not be a link to one
    (the file itself, graded where it lies, is the reference)."""
    out = {}
    for lesson in lessons():
        for name in sandbox.HIDDEN:
            with contextlib.suppress(OSError):
                st = (lesson.path / name).stat()
                out[(st.st_dev, st.st_ino)] = (lesson.path / name).resolve()
    return out


def _linked(path: Path, st: os.stat_result) -> bool:
    found = _protected().get((st.st_dev, st.st_ino))
    return found is not None and found != path.resolve()


def submission_files(exercise: Path) -> dict[str, bytes]:
    """The exercise and the regular files beside it (its own folder, no sub-folders, no symlinks); only the
    exercise when the folder is large. NotGradable if the exercise itself cannot be used."""
    if exercise.is_symlink() or not exercise.is_file():
        raise NotGradable(f"{exercise.name} is not a regular file")
    st = exercise.stat()
    if _linked(exercise, st):
        raise NotGradable(f"{exercise.name} is a link to one of the lesson's own files")
    if st.st_size > MAX_SUBMISSION_BYTES:
        raise NotGradable(f"{exercise.name} is larger than {MAX_SUBMISSION_BYTES} B")
    files = []
    with contextlib.suppress(OSError):
        for p in sorted(exercise.parent.iterdir()):
            if p != exercise and p.is_file() and not p.is_symlink() and not p.name.startswith("."):
                pst = p.stat()
                if (pst.st_dev, pst.st_ino) not in _protected():
                    files.append(p)
    if (
        len(files) + 1 > MAX_SUBMISSION_FILES
        or sum(p.stat().st_size for p in files) + st.st_size > MAX_SUBMISSION_BYTES
    ):
        files = []
    out = {exercise.name: exercise.read_bytes()}
    for p in files:
        with contextlib.suppress(OSError):
            out[p.name] = p.read_bytes()
    return out


# -- the child --------------------------------------------------------------------------------------------
def _read_all(fd: int, path: Path, cap_bytes: int, flag: list) -> None:
    total = 0
    with open(path, "wb") as out:
        while True:
            try:
                chunk = os.read(fd, 1 << 20)
            except OSError:
                break
            if not chunk:
                break
            total += len(chunk)
            if total > cap_bytes:
                flag.append("too much")  # the grader stops reading: the child blocks and is killed
                break
            out.write(chunk)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _tail(path: Path, limit: int) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read(limit * 4)
    except OSError:
        return ""
    text = data.decode("utf-8", errors="replace")
    size = path.stat().st_size
    return text[:limit] + (f"\n... ({size - limit} more bytes)" if size > limit else "")


def _child_env(work: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "HOME": str(work),
        "PYTHONHASHSEED": "0",
        **ONE_THREAD,
    }


def run_child(lesson: Lesson, exercise: Path, limits: Limits | None = None, sandboxed: bool = True) -> ChildRun:
    """Run ``exercise`` under the lesson's drive, in the sandbox (or, ``sandboxed=False``, as a plain child
    process); never raises for anything the submission does. The frame it sent is left in a temporary
    file the caller removes (``ChildRun.frame``)."""
    limits = limits or lesson.limits
    start = time.perf_counter()
    try:
        files = submission_files(exercise)
    except (NotGradable, OSError) as exc:
        return ChildRun("NO_SUBMISSION", None, str(exc), "", None, 0.0)
    control = {
        "lesson": lesson.package,
        "exercise": exercise.name,
        "files": {name: base64.b64encode(data).decode() for name, data in files.items()},
    }
    tmp = Path(tempfile.mkdtemp(prefix="ascendsim-grade-"))
    child = None
    try:
        child = _run(lesson, limits, control, tmp, sandboxed, start)
        return child
    finally:
        keep = child.frame if child is not None else None
        for p in tmp.iterdir():
            if p != keep:
                shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
        if keep is None:
            tmp.rmdir()


def _run(lesson: Lesson, limits: Limits, control: dict, tmp: Path, sandboxed: bool, start: float) -> ChildRun:
    out_path, err_path, frame_path = tmp / "stdout.txt", tmp / "stderr.txt", tmp / "frame.bin"
    read_fd, write_fd = os.pipe()
    argv = [sys.executable, "-I", "-B", str(HARNESS), str(write_fd)]
    keep = [write_fd]
    if sandboxed:
        filter_r, filter_w = os.pipe()
        os.write(filter_w, sandbox.seccomp_filter())
        os.close(filter_w)
        keep.append(filter_r)
        cmd, cwd, env = sandbox.command(argv, WORK_MB, filter_r), None, {}
        work = Path(sandbox.WORK)
    else:
        work = tmp / "work"
        work.mkdir()
        cmd, cwd, env = argv, work, _child_env(work)
    limit = sandbox.limiter(limits.memory_mb, limits.cpu_s, limits.output_kb)
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=out,
            stderr=err,
            cwd=cwd,
            env=env,
            pass_fds=tuple(keep),
            start_new_session=True,
            preexec_fn=limit,  # noqa: PLW1509 (setrlimit only: no lock a thread could hold)
        )
    for fd in keep:
        os.close(fd)
    flag: list = []
    reader = threading.Thread(target=_read_all, args=(read_fd, frame_path, MAX_FRAME_BYTES, flag), daemon=True)
    reader.start()
    with contextlib.suppress(OSError):
        proc.stdin.write((json.dumps(control) + "\n").encode())
    with contextlib.suppress(OSError):
        proc.stdin.close()
    timed_out = False
    try:
        proc.wait(timeout=limits.wall_s)
    except subprocess.TimeoutExpired:
        timed_out = True
    _kill_group(proc.pid)  # the whole group: the sandbox (and anything left in it) ends with bwrap
    proc.wait()
    reader.join(timeout=10)
    os.close(read_fd)
    wall = time.perf_counter() - start
    stdout = _clean(_tail(out_path, SHOWN_OUTPUT_CHARS) + _tail(err_path, SHOWN_OUTPUT_CHARS), work)
    output_full = any(p.stat().st_size >= limits.output_kb << 10 for p in (out_path, err_path))
    rc = proc.returncode
    signum = -rc if rc is not None and rc < 0 else (rc - 128 if sandboxed and rc and rc > 128 else 0)

    def result(status: str, message: str, frame: Path | None = None) -> ChildRun:
        return ChildRun(status, frame, _clean(cap(message), work), stdout, rc, wall)

    if timed_out:
        return result("TIMEOUT", f"still running after {limits.wall_s:g} s of wall time; the sandbox was killed")
    if flag:
        return result("OUTPUT_LIMIT", f"sent more than {MAX_FRAME_BYTES} B of results")
    if signum == signal.SIGXCPU or (signum == signal.SIGKILL and not frame_path.stat().st_size):
        return result("TIMEOUT", f"used more than {limits.cpu_s} s of CPU time; stopped")
    if output_full or signum == signal.SIGXFSZ:
        return result("OUTPUT_LIMIT", f"printed more than {limits.output_kb} KiB; stopped")
    if frame_path.exists() and frame_path.stat().st_size:
        status, message = _status(frame_path)
        return result(status, message, frame_path if status == "result" else None)
    if "MemoryError" in stdout:
        return result("MEMORY_LIMIT", f"ran out of its {limits.memory_mb} MiB of memory")
    if rc == 0:
        return result("EARLY_EXIT", "the process ended with code 0 before the check collected any result (os._exit?)")
    how = f"signal {signum}" if signum else f"exit code {rc}"
    return result("CRASH", f"the process died ({how}) without sending results")


def _status(frame_path: Path) -> tuple[str, str]:
    """The status and message a frame claims (read cheaply: the status comes first in the header)."""
    from .wire import WireError, read_first

    try:
        header, _ = read_first(frame_path)
        if not isinstance(header, dict):
            raise WireError("the status is not a table")
    except WireError as exc:
        return "TAMPERED", f"the result channel carried a malformed frame ({exc})"
    status = header.get("status")
    if status == "result" or status in _CHILD_STATUS:
        return status, str(header.get("message", ""))
    return "TAMPERED", "the result frame claims no known status"


def _clean(text: str, work: Path) -> str:
    """A message as a trainee reads it: no temporary or sandbox paths."""
    for prefix in (str(work) + os.sep, sandbox.WORK + os.sep):
        text = text.replace(prefix, "")
    return text


# -- judging, in a trusted worker ------------------------------------------------------------------------
class Context:
    """What a check may use besides the replay: the lesson, its settings, and the values the grader computed
    by running the lesson's own (trusted) scenario code."""

    def __init__(self, lesson: Lesson, references: dict) -> None:
        self.lesson = lesson
        self.settings = lesson.settings
        self._references = references

    def reference(self, name: str):
        return self._references[name]

    def truth(self, question: str) -> str:
        return str(self._references[f"truth_{question}"])


_REF_LOCK = threading.Lock()


@cache
def _references(package: str) -> dict:
    import importlib

    from .catalog import lessons as all_lessons

    lesson = next(ls for ls in all_lessons() if ls.package == package)
    scenario = importlib.import_module(f"{package}.scenario")
    names = [*getattr(lesson.module("check"), "REFERENCES", ()), *(f"truth_{q.id}" for q in lesson.questions)]
    return {name: getattr(scenario, name)() for name in names}


def references(lesson: Lesson) -> dict:
    """The truths of the lesson's questions and the baselines its check names (``check.REFERENCES``),
    computed once per process by the lesson's own scenario code."""
    with _REF_LOCK:
        return _references(lesson.package)


def judge(lesson: Lesson, data, refs: dict) -> list[Criterion]:
    """The lesson's criteria and the predictions, from a replay (:class:`lessons.checks.Data`)."""
    ctx = Context(lesson, refs)
    criteria = list(lesson.module("check").judge(data, ctx))
    predictions = data.value("predictions") or {}
    for q in lesson.questions:
        yours = predictions.get(q.id) if isinstance(predictions, dict) else None
        yours = None if yours is None else str(yours)[:200]
        truth = ctx.truth(q.id)
        criteria.append(Criterion(f"predict_{q.id}", yours is not None and yours == truth, str(yours), truth, ""))
    return criteria


def judge_frame(lesson: Lesson, frame: Path, refs: dict) -> dict:
    """Replay and judge a child's frame (in whichever process calls it): the criteria and costs, or why not."""
    from .checks import Data
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
        replayed = replay(doc, drive, getattr(drive, "LIBRARY", {}))
    except (WireError, Tampered) as exc:
        return {"tampered": cap(str(exc))}
    data = Data(replayed, doc.get("values") or {})
    try:
        criteria = judge(lesson, data, refs)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        return {"tampered": cap(f"the recording is incomplete: {type(exc).__name__}: {exc}")}
    costs = None
    main = lesson.module("check").MAIN_RUN
    if main and data.has_run(main):
        from .costs import cost_table

        costs = cost_table(data.run(main))
    return {"criteria": [c.__dict__ for c in criteria], "costs": costs}


_SERVER = Server()


def judge_in_worker(lesson: Lesson, frame: Path, refs: dict, limits: Limits) -> dict:
    """:func:`judge_frame` in a fresh worker process (:mod:`lessons.worker`) with its own memory, CPU and wall
    limits: a recording that would exhaust the grader only exhausts its worker."""
    memory, cpu = max(2048, 2 * limits.memory_mb), 2 * limits.cpu_s + 30
    out = _SERVER.judge(lesson.number, frame, refs, memory, cpu, 2 * limits.wall_s + 60)
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
) -> GradeResult:
    """Grade one submission end to end; never raises because of what the submission does.

    ``sandboxed=False`` runs the child without bubblewrap (a trainee's own file on their own machine): the
    report then says so. With ``sandboxed=True`` and no bubblewrap, :class:`GraderError`.
    """
    if lang not in LANGS:
        raise ValueError(f"--lang must be one of {', '.join(LANGS)}, got {lang!r}")
    if sandboxed and (why := sandbox.missing()):
        raise GraderError(why)
    limits = limits or lesson.limits
    ident = ident or (exercise.name if exercise else "?")
    t0 = time.perf_counter()
    not_run = [CriterionResult(c, None, _title(lesson, c, lang)[0]) for c in lesson.criteria]
    notes = [] if sandboxed else [UNSANDBOXED]
    if exercise is None or not exercise.exists():
        return GradeResult(ident, lesson.number, "NO_SUBMISSION", 0, not_run, [VERDICTS["NO_SUBMISSION"][0]], 0.0)
    refs: dict = {}

    def prepare() -> None:  # while the child runs: the grader's own numbers, and the server workers fork from
        refs.update(references(lesson))
        _SERVER.start()

    computing = threading.Thread(target=prepare, daemon=True)
    computing.start()
    child = run_child(lesson, exercise, limits, sandboxed)
    computing.join()
    if child.status != "result":
        verdict = _CHILD_STATUS.get(child.status, child.status)
        messages = [*notes, child.message or VERDICTS[verdict][0]]
        return GradeResult(
            ident, lesson.number, verdict, 0, not_run, messages, time.perf_counter() - t0, child.stdout, lang=lang
        )
    try:
        judged = judge_in_worker(lesson, child.frame, refs, limits)
    finally:
        with contextlib.suppress(OSError):
            child.frame.unlink()
            child.frame.parent.rmdir()
    if "tampered" in judged or "crash" in judged:
        verdict = "TAMPERED" if "tampered" in judged else "CRASH"
        messages = [*notes, judged.get("tampered") or judged["crash"]]
        return GradeResult(
            ident, lesson.number, verdict, 0, not_run, messages, time.perf_counter() - t0, child.stdout, lang=lang
        )
    results = []
    for c in judged["criteria"]:
        title, hint = _title(lesson, c["id"], lang)
        results.append(
            CriterionResult(
                c["id"],
                bool(c["passed"]),
                title,
                cap(pick(c["yours"], lang)),
                cap(pick(c["expected"], lang)),
                cap(pick(c["detail"], lang)),
                hint,
            )
        )
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
    )


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
    lesson: Lesson, entries: list[Entry], jobs: int = 1, lang: str = "en", limits=None, sandboxed: bool = True
) -> list[GradeResult]:
    """Grade every entry (``jobs`` children at a time); one row per entry, in id order, none dropped."""
    from concurrent.futures import ThreadPoolExecutor

    if sandboxed and (why := sandbox.missing()):
        raise GraderError(why)

    def one(entry: Entry) -> GradeResult:
        try:
            return grade_file(lesson, entry.exercise, entry.id, lang, limits, sandboxed)
        except Exception as exc:  # a grader bug must not drop a row either
            return GradeResult(entry.id, lesson.number, "CRASH", 0, [], [cap(f"grader error: {exc!r}")], 0.0)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(one, entries))
    return sorted(results, key=lambda r: r.id)
