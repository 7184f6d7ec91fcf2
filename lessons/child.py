"""One graded child: the submission's files, the sandboxed (or plain) process that runs them, what it sent.

:func:`run_child` reads the submission (the exercise and the regular files beside it: no symlink, no link to
a lesson's own files), starts ``python -I -B lessons/harness.py FD`` in the sandbox (:mod:`lessons.sandbox`)
with the lesson's limits, hands it the files on stdin, waits at most the wall time (then kills the sandbox
and everything in it) and keeps the frame it sent on ``FD`` in a temporary file. It never raises for anything
the submission does; what the child claims is only its status (read size-capped here) and a recording that
only a trusted worker decodes.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from . import sandbox
from .catalog import Lesson, Limits, lessons
from .hidden import encode
from .judge import cap
from .worker import ONE_THREAD

HARNESS = Path(__file__).resolve().parent / "harness.py"
MAX_SUBMISSION_BYTES = 4 << 20  # a folder larger than this (or with more files) is not copied, only the exercise
MAX_SUBMISSION_FILES = 64
MAX_FRAME_BYTES = 512 << 20
SHOWN_OUTPUT_CHARS = 2000
MAX_LINE = 1_000_000  # an error line beyond this is not one of an exercise file
WORK_MB = 64  # the sandbox's work folder
CPU_POLL_S = 0.25  # how often the CPU time of a child's process tree is read
CHILD_STATUS = {
    "syntax": "SYNTAX_ERROR",
    "exception": "RUNTIME_ERROR",
    "memory": "MEMORY_LIMIT",
    "early_exit": "EARLY_EXIT",
    "forbidden": "FORBIDDEN",
}


@dataclass
class ChildRun:
    """What one child produced: where its frame is (or why there is none)."""

    status: str  # "result", a key of _CHILD_STATUS, or a verdict decided from outside (TIMEOUT, ...)
    frame: Path | None
    message: str
    stdout: str
    returncode: int | None
    wall_s: float
    line: int | None = None  # the exercise file's line its error names (only to mark it: it decides nothing)
    hidden: str | None = None  # the kind of hidden case its exception escaped from, as it says (a report only)


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


def _wait(proc: subprocess.Popen, wall_s: float, cpu_s: float) -> tuple[bool, bool]:
    """Wait for the child at most ``wall_s`` while the kernel's count of CPU seconds for the child and all its
    descendants stays below ``cpu_s``; then kill its whole group (the sandbox and anything left in it ends with
    bwrap) and reap it. Returns whether the wall time ran out and whether the CPU time did. Both are judged
    from outside (``/proc``), nothing the submission can report or shape: a process that kills itself is not
    mistaken for one the CPU limit stopped, and forked processes cannot share out a per-process limit."""
    timed_out = cpu_out = False
    deadline = time.monotonic() + wall_s
    with os.fdopen(os.pidfd_open(proc.pid), "rb", buffering=0) as pidfd:
        while not select.select([pidfd], [], [], min(CPU_POLL_S, max(0.0, deadline - time.monotonic())))[0]:
            if time.monotonic() >= deadline:
                timed_out = True
                break
            if _tree_cpu_s(proc.pid) >= cpu_s:
                cpu_out = True
                break
    _kill_group(proc.pid)
    proc.wait()
    return timed_out, cpu_out


def _tree_cpu_s(root: int) -> float:
    """CPU seconds (user + system, with the children each process reaped) of ``root`` and its living
    descendants, found by their parent links in ``/proc/PID/stat``. Only PIDs from ``root`` on are read: a
    descendant is numbered after its ancestor unless the PID counter wrapped round between them, and then
    it is still bounded by the per-process ``RLIMIT_CPU`` and by the wall time."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) < root:
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue  # ended while listed
        pid = int(name)
        parents[pid] = int(fields[1])  # field 4, ppid (fields after the name start at field 3, the state)
        ticks[pid] = sum(int(x) for x in fields[11:15])  # fields 14-17: utime, stime, cutime, cstime
    tree = {root}
    for pid in sorted(parents):  # an ancestor before its descendants (same wrap-round caveat as above)
        if parents[pid] in tree:
            tree.add(pid)
    return sum(ticks.get(pid, 0) for pid in tree) / os.sysconf("SC_CLK_TCK")


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


def run_child(
    lesson: Lesson, exercise: Path, limits: Limits | None = None, sandboxed: bool = True, hidden: tuple = ()
) -> ChildRun:
    """Run ``exercise`` under the lesson's drive, in the sandbox (or, ``sandboxed=False``, as a plain child
    process), on its visible cases and the ``hidden`` cases the grader drew (:mod:`lessons.hidden`); never
    raises for anything the submission does. The frame it sent is left in a temporary file the caller removes
    (``ChildRun.frame``)."""
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
        "hidden": encode(hidden),
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
    cmd = sandbox.limited(cmd, limits.memory_mb, limits.cpu_s, limits.output_kb)
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
    timed_out, cpu_out = _wait(proc, limits.wall_s, limits.cpu_s)
    reader.join(timeout=10)
    os.close(read_fd)
    wall = time.perf_counter() - start
    stdout = _clean(_tail(out_path, SHOWN_OUTPUT_CHARS) + _tail(err_path, SHOWN_OUTPUT_CHARS), work)
    output_full = any(p.stat().st_size >= limits.output_kb << 10 for p in (out_path, err_path))
    rc = proc.returncode
    signum = -rc if rc is not None and rc < 0 else (rc - 128 if sandboxed and rc and rc > 128 else 0)

    def result(
        status: str, message: str, frame: Path | None = None, line: int | None = None, hidden: str | None = None
    ) -> ChildRun:
        return ChildRun(status, frame, _clean(cap(message), work), stdout, rc, wall, line, hidden)

    if timed_out:
        return result("TIMEOUT", f"still running after {limits.wall_s:g} s of wall time; the sandbox was killed")
    if flag:
        return result("OUTPUT_LIMIT", f"sent more than {MAX_FRAME_BYTES} B of results")
    if cpu_out or signum == signal.SIGXCPU:
        return result("TIMEOUT", f"used more than {limits.cpu_s} s of CPU time; stopped")
    if output_full or signum == signal.SIGXFSZ:
        return result("OUTPUT_LIMIT", f"printed more than {limits.output_kb} KiB; stopped")
    if frame_path.exists() and frame_path.stat().st_size:
        status, message, line, hidden = _status(frame_path)
        return result(status, message, frame_path if status == "result" else None, line, hidden)
    if "MemoryError" in stdout:
        return result("MEMORY_LIMIT", f"ran out of its {limits.memory_mb} MiB of memory")
    if rc == 0:
        return result("EARLY_EXIT", "the process ended with code 0 before the check collected any result (os._exit?)")
    how = f"signal {signum}" if signum else f"exit code {rc}"
    return result("CRASH", f"the process died ({how}) without sending results")


def _status(frame_path: Path) -> tuple[str, str, int | None, str | None]:
    """The status, message, error line and hidden case kind a frame claims (read cheaply: the status comes first
    in the header)."""
    from .wire import WireError, read_first

    try:
        header, _ = read_first(frame_path)
        if not isinstance(header, dict):
            raise WireError("the status is not a table")
    except WireError as exc:
        return "TAMPERED", f"the result channel carried a malformed frame ({exc})", None, None
    status = header.get("status")
    line = header.get("line")
    line = line if type(line) is int and 1 <= line <= MAX_LINE else None
    hidden = header.get("hidden")
    hidden = hidden[:40] if isinstance(hidden, str) else None
    if status == "result" or status in CHILD_STATUS:
        return status, str(header.get("message", "")), line, hidden
    return "TAMPERED", "the result frame claims no known status", None, None


def _clean(text: str, work: Path) -> str:
    """A message as a trainee reads it: no temporary or sandbox paths."""
    for prefix in (str(work) + os.sep, sandbox.WORK + os.sep):
        text = text.replace(prefix, "")
    return text
