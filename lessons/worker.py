"""The trusted workers that replay and judge recordings, each forked from one clean server.

The server is a plain child process of the grader (``python -B -m lessons.worker``), started once with the
grader's modules loaded and one BLAS thread; it is single-threaded, so forking it is safe wherever the
grader runs (a CLI, a web worker with many threads, a test). For each request it forks a worker that sets
its own memory and CPU limits, judges one frame (:func:`lessons.judge.judge_frame`), writes the result as
JSON beside the frame and exits; the server kills a worker that outlives its wall time. A worker that dies
in any way never takes the server or the grader with it.

Protocol, one JSON line each way: request ``{"id", "lesson", "frame", "out", "refs", "memory_mb", "cpu_s",
"wall_s", "keep", "hidden"}`` (``hidden``: the cases the grader drew, :func:`lessons.hidden.encode`) on the
server's stdin; ``{"id", "code"}`` on its stdout when that worker has ended. While it
replays, a worker keeps ``out + ".progress"`` up to date (``{"done", "total", "events"}``: host calls
replayed, of how many, events recorded): how far the judging is, for a page to show.
"""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

# BLAS with one thread, as in the child. The Cube's arithmetic (engine/aicore/cube.py) does not depend on it; the
# lessons' own numpy (a check's expected values) need not either, but a replay then costs no more threads than the
# two cores a grading machine gives it
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
PROGRESS_S = 0.25  # how often a worker rewrites its progress file (and the grader reads it)


# -- the server (its own process) ----------------------------------------------------------------------
def _work(request: dict) -> None:
    """In the forked worker: limits, then the judgement, written whole beside the frame."""
    memory = int(request["memory_mb"]) << 20
    cpu = int(request["cpu_s"])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    from .catalog import get
    from .hidden import decode
    from .judge import cap, judge_frame

    try:
        keep = Path(request["keep"]) if request.get("keep") else None
        lesson, frame = get(int(request["lesson"])), Path(request["frame"])
        progress = _progress_file(request["out"] + ".progress")
        out = judge_frame(lesson, frame, request["refs"], keep, progress, decode(request.get("hidden")))
    except MemoryError:
        out = {"tampered": f"replaying the recording needs more than {request['memory_mb']} MiB"}
    except Exception as exc:  # the engine failed on this recording (or a grader bug): said, never a PASS
        out = {"crash": cap(f"the grader could not replay this recording: {type(exc).__name__}: {exc}")}
    part = request["out"] + ".part"
    with open(part, "w", encoding="utf-8") as f:
        json.dump(out, f)
    os.replace(part, request["out"])


def _progress_file(path: str):
    """A :data:`lessons.replay.Progress` that rewrites ``path`` (atomically) at most every :data:`PROGRESS_S`."""
    last = [0.0]

    def write(done: int, total: int, events: int) -> None:
        now = time.monotonic()
        if now - last[0] < PROGRESS_S:
            return
        last[0] = now
        with open(path + ".part", "w", encoding="utf-8") as f:
            json.dump({"done": done, "total": total, "events": events}, f)
        os.replace(path + ".part", path)

    return write


def serve() -> None:
    from .judge import judge_frame  # noqa: F401  (loaded once, before any fork)

    running: dict[int, tuple[str, float, int]] = {}  # pid -> (request id, deadline, pidfd: readable once it ended)
    pending = b""
    stdin = sys.stdin.buffer.raw
    while True:
        timeout = max(0.0, min((d for _, d, _fd in running.values()), default=time.monotonic() + 1) - time.monotonic())
        exits = {fd: pid for pid, (_, _d, fd) in running.items()}
        ready, _, _ = select.select([stdin, *exits], [], [], min(timeout, 1.0))
        if stdin in ready:
            chunk = os.read(stdin.fileno(), 1 << 16)
            if not chunk:  # the grader is gone: so are its workers
                for pid in running:
                    os.kill(pid, signal.SIGKILL)
                return
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                request = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    try:
                        _work(request)
                    finally:
                        os._exit(0)
                running[pid] = (request["id"], time.monotonic() + float(request["wall_s"]), os.pidfd_open(pid))
        now = time.monotonic()
        for pid, (_, deadline, _fd) in list(running.items()):
            if now > deadline:
                os.kill(pid, signal.SIGKILL)
        for fd in ready:  # a worker ended: said at once (no polling interval between its end and its verdict)
            if fd in exits:
                ident, _, _ = running.pop(exits[fd])
                _, status = os.waitpid(exits[fd], 0)
                os.close(fd)
                sys.stdout.write(json.dumps({"id": ident, "code": os.waitstatus_to_exitcode(status)}) + "\n")
                sys.stdout.flush()


# -- the client (in the grader) -------------------------------------------------------------------------
class Server:
    """The grader's handle on its worker server: started on first use, restarted if it ever died."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._done: dict[str, tuple[threading.Event, list]] = {}
        self._count = 0

    def start(self) -> None:
        with self._lock:
            self._ensure()

    def _ensure(self) -> subprocess.Popen:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        root = str(Path(__file__).resolve().parents[1])
        path = os.environ.get("PYTHONPATH")
        env = {**os.environ, **ONE_THREAD, "PYTHONPATH": root + (os.pathsep + path if path else "")}
        self._proc = subprocess.Popen(
            [sys.executable, "-B", "-m", "lessons.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        threading.Thread(target=self._listen, args=(self._proc,), daemon=True).start()
        return self._proc

    def _listen(self, proc: subprocess.Popen) -> None:
        for line in proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            with self._lock:
                found = self._done.pop(msg.get("id"), None)
            if found is not None:
                found[1].append(msg.get("code"))
                found[0].set()
        with self._lock:  # the server ended: whoever still waits hears it
            waiting, self._done = self._done, {}
        for event, box in waiting.values():
            box.append(None)
            event.set()

    def judge(
        self,
        number: int,
        frame: Path,
        refs: dict,
        memory_mb: int,
        cpu_s: int,
        wall_s: float,
        keep: Path | None = None,
        progress: Callable[[dict], None] | None = None,
        hidden: tuple = (),
    ) -> dict | None:
        """The worker's result for ``frame``, or None if it ended without one (killed, out of limits); with
        ``keep``, the worker also writes the replayed main run there (:func:`lessons.judge.keep_run`).
        ``progress`` hears the worker's progress file (``{"done", "total", "events"}``) as it changes; ``hidden``:
        the cases the grader drew, judged too."""
        from .hidden import encode

        out = frame.with_name(frame.name + ".verdict.json")
        said = out.with_name(out.name + ".progress")
        event, box = threading.Event(), []
        with self._lock:
            self._count += 1
            ident = str(self._count)
            request = {
                "id": ident,
                "lesson": number,
                "frame": str(frame),
                "out": str(out),
                "refs": refs,
                "memory_mb": memory_mb,
                "cpu_s": cpu_s,
                "wall_s": wall_s,
                "keep": str(keep) if keep else None,
                "hidden": encode(hidden),
            }
            self._done[ident] = (event, box)
            proc = self._ensure()
            try:
                proc.stdin.write((json.dumps(request) + "\n").encode())
                proc.stdin.flush()
            except OSError:
                self._done.pop(ident, None)
                return None
        deadline, heard = time.monotonic() + wall_s + 30, None
        while not event.wait(PROGRESS_S) and time.monotonic() < deadline:
            if progress is not None:
                try:
                    now = json.loads(said.read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    continue
                if now != heard:
                    heard = now
                    progress(now)
        try:
            return json.loads(out.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        finally:
            for path in (out, said, said.with_name(said.name + ".part")):  # a worker killed mid-write leaves .part
                path.unlink(missing_ok=True)


if __name__ == "__main__":
    serve()
