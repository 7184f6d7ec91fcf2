"""The child side of grading: run one submission under limits and send back what it did, as data.

Started by :mod:`lessons.grader` as ``python -I -B harness.py FD`` in a temporary copy of the
submission's folder, in its own process group. It reads one JSON line of instructions from stdin
(lesson, file, token, limits), then, before any trainee code runs:

1. caps its own resources: address space (``RLIMIT_AS``), CPU seconds, the size of files it may
   write (its stdout and stderr are files, so this caps printing too), no core dumps;
2. moves the result channel (a pipe) to a private descriptor and closes stdin;
3. imports the engine and the lesson's modules, and fingerprints the functions and classes of
   ``engine.*`` and ``lessons.*`` (to notice monkeypatching later);
4. installs an audit hook (which Python code cannot remove) that ends the process, after telling
   the grader, when the submission starts a process, sends a signal, loads or calls a C library
   through ctypes, imports a module that spawns processes or opens sockets, walks the garbage
   collector's objects, or writes, deletes or renames a file outside its folder.

Then it compiles the submission (a syntax error is reported as such), executes it as the module
``exercise``, and calls the lesson's ``drive.collect(exercise, recorder)``. Whatever happens, it
sends exactly one frame (:mod:`lessons.wire`) with the token and either the recorded data or what
went wrong (the traceback trimmed to the trainee's file), and leaves with ``os._exit`` so nothing the
submission registered (``atexit``, threads) runs after it.

The verdict is never decided here: the grader judges the data in its own process.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback
from pathlib import Path

_REPO = str(Path(__file__).resolve().parents[1])
if _REPO not in sys.path:  # -I leaves the script's folder and the cwd off sys.path: find our own packages
    sys.path.insert(0, _REPO)

import resource  # noqa: E402

EXIT_FORBIDDEN = 70
_PROCESS_EVENTS = frozenset(
    (
        "os.fork",
        "os.forkpty",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "subprocess.Popen",
        "pty.spawn",
        "os.kill",
        "os.killpg",
        "signal.pthread_kill",
        "ctypes.dlopen",
        "ctypes.dlsym",
        "ctypes.call_function",
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
    )
)
# modules that start processes or talk to the network: refused when imported (none is loaded before the guard)
_FORBIDDEN_MODULES = frozenset(
    ("subprocess", "_posixsubprocess", "multiprocessing", "_multiprocessing", "pty", "socket", "_socket")
)
_PATH_EVENTS = frozenset(("os.remove", "os.rename", "os.rmdir", "os.mkdir", "shutil.rmtree", "os.truncate", "os.chmod"))
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


class Recorder:
    """What a lesson's ``drive.collect`` hands back: finished runs and plain values."""

    def __init__(self) -> None:
        self.runs: dict[str, dict] = {}
        self.values: dict[str, object] = {}

    def run(self, key: str, result, max_rows: int | None = 2_000_000, coarse: bool = False) -> None:
        from lessons.wire import pack_run

        self.runs[key] = pack_run(result, max_rows, coarse)

    def value(self, key: str, value) -> None:
        self.values[key] = value


class _Channel:
    def __init__(self, fd: int, token: str) -> None:
        self.fd = os.dup(fd)  # a private, non-inheritable copy; the well-known number is closed
        os.close(fd)
        self.token = token
        self.sent = False

    def send(self, doc: dict) -> None:
        if self.sent:
            return
        from lessons.wire import encode

        data = encode({"token": self.token, **doc})
        self.sent = True
        view = memoryview(data)
        while view:
            n = os.write(self.fd, view)
            view = view[n:]


def _limit(limits: dict) -> None:
    memory = int(limits["memory_mb"]) << 20
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    cpu = int(limits["cpu_s"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    output = int(limits["output_kb"]) << 10
    resource.setrlimit(resource.RLIMIT_FSIZE, (output, output))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _fingerprint() -> dict:
    """Identity of every function and class (and their methods) of engine.* and lessons.*."""
    out = {}
    for name, mod in list(sys.modules.items()):
        if mod is None or not (name.startswith(("engine", "lessons.")) or name == "lessons"):
            continue
        out[name] = id(mod)
        for attr, value in list(vars(mod).items()):
            if isinstance(value, type) or callable(value):
                out[f"{name}.{attr}"] = (id(value), id(getattr(value, "__code__", None)))
            if isinstance(value, type) and value.__module__ == name:
                for k, v in list(vars(value).items()):
                    if callable(v) or isinstance(v, staticmethod | classmethod | property):
                        out[f"{name}.{attr}.{k}"] = (id(v), id(getattr(v, "__code__", None)))
    return out


def _changed(before: dict, after: dict) -> list[str]:
    return sorted(k for k, v in before.items() if after.get(k, v) != v or k not in after)


def _install_guard(channel: _Channel, work_dir: str) -> None:
    inside = work_dir.rstrip(os.sep) + os.sep

    def outside(path) -> bool:
        if isinstance(path, int):
            return False  # an already-open descriptor
        text = os.fsdecode(path) if isinstance(path, bytes | os.PathLike) else str(path)
        full = os.path.normpath(os.path.join(work_dir, text))
        return not (full + os.sep).startswith(inside) and full != os.devnull

    def refuse(what: str) -> None:
        frames = [f for f in traceback.extract_stack() if f.filename == _SUBMISSION[0]]
        where = f" ({_SUBMISSION[1]}:{frames[-1].lineno})" if frames else ""
        channel.send({"status": "forbidden", "message": f"{what}{where}"})
        _flush()
        os._exit(EXIT_FORBIDDEN)

    def hook(event: str, args: tuple) -> None:
        if event in _PROCESS_EVENTS:
            refuse(f"{event} is not allowed in an exercise")
        elif event == "import" and args and str(args[0]).split(".")[0] in _FORBIDDEN_MODULES:
            refuse(f"importing {args[0]} is not allowed in an exercise")
        elif event == "open" and len(args) >= 3:
            path, mode, flags = args[0], args[1], args[2]
            writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & _WRITE_FLAGS
            )
            if writes and path is not None and outside(path):
                refuse(f"writing {path!r} (outside the exercise's folder) is not allowed")
        elif event in _PATH_EVENTS and args and outside(args[0]):
            refuse(f"{event} on {args[0]!r} (outside the exercise's folder) is not allowed")

    sys.addaudithook(hook)


def _flush() -> None:
    """What the submission printed is shown to the trainee; os._exit would drop what is still buffered."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()


_SUBMISSION = ["", ""]  # (real path, name shown to the trainee), set once before the submission runs


def trimmed_traceback(exc: BaseException, path: str, shown: str) -> str:
    """The traceback of ``exc`` cut down to the frames in the trainee's file."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
    lines = ["Traceback (your code, most recent call last):"]
    for f in frames:
        lines.append(f'  File "{shown}", line {f.lineno}, in {f.name}')
        if f.line:
            lines.append(f"    {f.line}")
    if not frames:
        lines = ["(raised while the lesson's check was using your code)"]
    lines.extend(line.rstrip("\n") for line in traceback.format_exception_only(type(exc), exc))
    return "\n".join(lines)


def main() -> None:
    control = json.loads(sys.stdin.readline())
    sys.stdin.close()
    os.close(0)
    os.open(os.devnull, os.O_RDONLY)  # fd 0 again: nothing more to read
    _limit(control["limits"])
    channel = _Channel(int(sys.argv[1]), control["token"])
    path = os.path.abspath(control["file"])
    shown = control.get("shown", os.path.basename(path))
    _SUBMISSION[0], _SUBMISSION[1] = path, shown
    import numpy  # noqa: F401  (before the guard: imports read files and may load libraries)

    import engine
    import engine.analysis

    lesson = control["lesson"]
    drive = __import__(f"{lesson}.drive", fromlist=["collect"])
    __import__(f"{lesson}.check", fromlist=["judge"])
    __import__(f"{lesson}.scenario", fromlist=["scenario"])
    engine.Simulation("ascend910b1")  # warm the profile cache
    before = _fingerprint()
    _install_guard(channel, os.path.dirname(path))
    status: dict
    try:
        try:
            source = Path(path).read_text(encoding="utf-8")
            code = compile(source, path, "exec")
        except SyntaxError as exc:
            detail = "".join(traceback.format_exception_only(type(exc), exc)).replace(path, shown)
            channel.send({"status": "syntax", "message": detail.rstrip()})
            os._exit(0)
        module = type(sys)("exercise")
        module.__file__ = path
        sys.modules["exercise"] = module
        rec = Recorder()
        exec(code, module.__dict__)
        drive.collect(module, rec)
        rec.value("predictions", getattr(module, "PREDICTIONS", None))  # the answers to every lesson's questions
        status = {"status": "result", "runs": rec.runs, "values": rec.values}
    except SystemExit as exc:
        status = {"status": "early_exit", "message": f"sys.exit({exc.code!r}) was called"}
    except MemoryError:
        status = {"status": "memory", "message": "MemoryError"}
    except BaseException as exc:  # the trainee's error: report it, trimmed to their file
        status = {"status": "exception", "message": trimmed_traceback(exc, path, shown)}
    status["tampered"] = _changed(before, _fingerprint())
    _flush()
    try:
        channel.send(status)
    except MemoryError:
        channel.send({"status": "memory", "message": "MemoryError while sending the results"})
    os._exit(0)


if __name__ == "__main__":
    main()
