"""The graded child: the submission's code run under the lesson's drive, recorded at the API boundary.

Started by :mod:`lessons.grader` as ``python -I -B harness.py OUT_FD``, inside the sandbox
(:mod:`lessons.sandbox`) or, for a trainee's own file on a machine without bubblewrap, as a plain child
process. It reads one JSON line on stdin: the lesson's package, the submission's files (name -> base64),
which of them is the exercise, the name to show for it and the hidden cases the grader drew
(:mod:`lessons.hidden`). It writes the files into its working folder,
swaps ``engine.asc`` for the recording stand-in (:mod:`lessons.tape`), imports the lesson's drive, compiles
the exercise exactly as Python compiles a source file (byte-order mark and coding cookie included), runs
``drive.collect`` on it and sends one frame (:mod:`lessons.wire`) on ``OUT_FD``: how it ended, the
recording, the trainee's answers (return values of pure functions, predictions) and the outputs it claims.

Nothing here is trusted or defends anything: the submission runs in this process and can change any of
it. The grader believes none of it; it re-executes the recording (:mod:`lessons.replay`) and judges that.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import importlib
import json
import os
import pkgutil
import sys
import traceback
import types

MAX_MESSAGE = 4096  # characters of one message
MAX_FRAMES = 20  # lines of the trainee's traceback
MAX_ANSWER_ITEMS = 4096  # items of one answer (a list, a dict)
MAX_ANSWER_DEPTH = 6
MAX_TEXT = 1000  # characters of one string in an answer
_FORBIDDEN = (errno.EPERM, errno.EACCES, errno.EROFS, errno.EXDEV)  # what the sandbox answers


def bounded(value, depth: int = 0):
    """An answer as plain data, cut to a bounded size and depth (the grader bounds it again)."""
    import numpy as np

    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return value[:MAX_TEXT]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value if value.size <= 1 << 24 and value.dtype.kind in "biuf" else None
    if depth >= MAX_ANSWER_DEPTH:
        return str(value)[:MAX_TEXT]
    if isinstance(value, list | tuple):
        return [bounded(v, depth + 1) for v in list(value)[:MAX_ANSWER_ITEMS]]
    if isinstance(value, dict):
        return {str(k)[:MAX_TEXT]: bounded(v, depth + 1) for k, v in list(value.items())[:MAX_ANSWER_ITEMS]}
    if hasattr(value, "__dict__"):
        return bounded(dict(vars(value)), depth + 1)
    return str(value)[:MAX_TEXT]


def trimmed_traceback(exc: BaseException, files: dict[str, str], hidden: bool = False) -> str:
    """The traceback of ``exc`` cut down to the frames in the trainee's files (``files``: real path -> shown);
    ``hidden``: raised on a hidden case, so only the exception's type, not its message (it could hold the
    case's values)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename in files]
    lines = ["Traceback (your code, most recent call last):"]
    if len(frames) > MAX_FRAMES:
        lines.append(f"  ... {len(frames) - MAX_FRAMES} earlier frames")
        frames = frames[-MAX_FRAMES:]
    for f in frames:
        lines.append(f'  File "{files[f.filename]}", line {f.lineno}, in {f.name}')
        if f.line:
            lines.append(f"    {f.line[:200]}")
    if not frames:
        lines = ["(raised while the lesson's code was using yours)"]
    tail = type(exc).__name__ if hidden else "".join(traceback.format_exception_only(type(exc), exc)).rstrip()
    if len(tail) > MAX_MESSAGE:
        tail = tail[:MAX_MESSAGE] + f" ... ({len(tail) - MAX_MESSAGE} more characters)"
    lines.append(tail)
    return "\n".join(lines)


def error_line(exc: BaseException, path: str) -> int | None:
    """The line of the exercise file ``path`` where ``exc`` was raised (its innermost frame there), or None."""
    if isinstance(exc, SyntaxError):
        return exc.lineno if exc.filename == path else None
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
    return frames[-1].lineno if frames else None


def _send(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()


def _write_files(control: dict) -> tuple[str, dict[str, str]]:
    """Write the submission into the working folder; (the exercise's path, real path -> name shown)."""
    shown = {}
    here = os.getcwd()
    for name, data in control["files"].items():
        if os.sep in name or name in ("", ".", "..") or name.startswith("."):
            continue
        path = os.path.join(here, name)
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        shown[path] = name
    return os.path.join(here, control["exercise"]), shown


def _import_engine_asc_users() -> None:
    """Import every engine module that uses ``asc`` (its kernels, the scenarios' helpers). Imported after
    :func:`lessons.tape.install`, one would bind the stand-in, and the engine's own calls (a shipped kernel
    a drive runs) would be recorded as the trainee's."""
    import engine.kernels
    import engine.scenarios

    for package in (engine.kernels, engine.scenarios):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            importlib.import_module(info.name)


def main() -> None:
    # the project this harness belongs to comes first: the child imports the grader's own engine and lessons
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out_fd = int(sys.argv[1])
    control = json.loads(sys.stdin.readline())
    sys.stdin.close()
    path, shown = _write_files(control)
    from lessons.hidden import decode, runs

    sys.path.insert(0, os.getcwd())
    import numpy  # noqa: F401

    _import_engine_asc_users()  # before the stand-in: the engine's own kernels keep the real asc
    from lessons.tape import Recorder, Tape, install
    from lessons.wire import encode

    tape = Tape()
    install(tape)
    drive = importlib.import_module(f"{control['lesson']}.drive")
    cases = decode(control.get("hidden"))
    rec = None
    doc: dict
    try:
        try:
            with open(path, "rb") as f:
                code = compile(f.read(), path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError, UnicodeDecodeError) as exc:
            detail = "".join(traceback.format_exception_only(type(exc), exc)).replace(path, shown[path]).rstrip()
            message = {"status": "syntax", "message": detail[:MAX_MESSAGE], "line": error_line(exc, path)}
            _send(out_fd, encode(message))
            os._exit(0)
        module = types.ModuleType("exercise")
        module.__file__ = path
        sys.modules["exercise"] = module
        exec(code, module.__dict__)
        rec = Recorder(tape, runs(drive, cases), getattr(drive, "LIBRARY", {}), cases)
        drive.collect(module, rec)
        values = {k: bounded(v) for k, v in rec.values.items()}
        values["predictions"] = bounded(getattr(module, "PREDICTIONS", None))
        doc = {
            "status": "result",
            "host": tape.host,
            "blocks": tape.blocks,
            "files": tape.files,
            "reads": {str(h): reads for h, reads in tape.reads.items()},
            "values": values,
            "outputs": rec.outputs,
        }
    except SystemExit as exc:
        doc = {"status": "early_exit", "message": f"sys.exit({str(exc.code)[:200]!r}) was called"}
    except MemoryError:
        doc = {"status": "memory", "message": "MemoryError"}
    except OSError as exc:
        status = "forbidden" if exc.errno in _FORBIDDEN else "exception"
        message = trimmed_traceback(exc, shown, getattr(rec, "case", None) is not None)
        doc = {"status": status, "message": message, "line": error_line(exc, path)}
    except BaseException as exc:  # the trainee's error: report it, trimmed to their files
        case = getattr(rec, "case", None)
        message = trimmed_traceback(exc, shown, case is not None)
        doc = {"status": "exception", "message": message, "line": error_line(exc, path)}
        if case is not None:  # said by its kind only; the grader names the kind in the trainee's language
            doc["hidden"] = case.kind
    _flush()
    status = {
        "status": doc.pop("status"),
        "message": str(doc.pop("message", ""))[: 3 * MAX_MESSAGE],
        "line": doc.pop("line", None),
    }
    if "hidden" in doc:
        status["hidden"] = doc.pop("hidden")
    try:
        data = encode(doc) if status["status"] == "result" else b""
    except MemoryError:
        status, data = {"status": "memory", "message": "MemoryError while sending the results"}, b""
    _send(out_fd, encode(status))
    _send(out_fd, data)
    os._exit(0)


if __name__ == "__main__":
    main()
