"""The one process that forks a dashboard's background jobs, made while the server is still single-threaded.

Dash's ``DiskcacheManager`` forks each job from the process that received the click. A web server is
multi-threaded (``ascendsim web`` serves each request in a thread), and a fork copies only the forking
thread: a lock another thread held at that instant stays held in the child forever. The job's first
act is to open the jobs' SQLite cache, and the page's other threads are inside SQLite many times a
second (every page polls its job), so the child would often hang on SQLite's own mutex before it
reports a thing: the page then shows its idle text and the run never arrives. (A probe of that
pattern, four threads using a diskcache while a fifth forks, hung 36 of 40 children.)

So the server forks once, when it is built and has no other thread yet: a launcher process that only
waits on a socket pair. Each job is a request to it (the job's name and arguments, pickled); the
launcher, single-threaded, forks the job and answers its process id, which Dash uses to poll and to
cancel the job. The launcher reaps its finished children and exits when the server closes its end.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import socket
import struct
import sys
import threading
import traceback
from collections.abc import Callable

from ..collector import before_forking_jobs

_SIZE = struct.Struct("!I")
REAP_S = 0.2  # how often the launcher reaps its finished jobs while no request comes


class LauncherGone(RuntimeError):
    """The launcher process is no longer there (killed from outside); the server must be restarted."""


class Launcher:
    """Forks ``run(name, args)`` in a process of its own for each :meth:`start`, from a process made now.

    Make it while the calling process has one thread; a process forked from this one later (a server's
    worker) makes its own launcher on first use."""

    def __init__(self, run: Callable[[str, tuple], None], warm: Callable[[], None] | None = None) -> None:
        self._run, self._warm = run, warm
        self._lock = threading.Lock()
        self._spawn()

    def _spawn(self) -> None:
        ours, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:  # the launcher
            ours.close()
            code = 0
            try:
                _warm(self._warm)
                before_forking_jobs()
                _serve(theirs, self._run)
            except BaseException:  # said on stderr; the process ends either way
                traceback.print_exc()
                code = 1
            finally:
                _flush()
                os._exit(code)
        theirs.close()
        self.pid, self._owner, self._sock = pid, os.getpid(), ours

    def start(self, name: str, args: tuple) -> int:
        """Fork the job ``name`` with ``args`` (picklable); its process id."""
        data = pickle.dumps((name, args), protocol=pickle.HIGHEST_PROTOCOL)
        with self._lock:
            if self._owner != os.getpid():  # this process was forked from the one that made the launcher
                with contextlib.suppress(OSError):
                    self._sock.close()  # this process's copy of the other launcher's end
                self._spawn()
            try:
                _send(self._sock, data)
                reply = _recv(self._sock)
            except OSError as exc:
                raise LauncherGone(f"the job launcher (process {self.pid}) is gone: {exc}") from None
            if reply is None:
                raise LauncherGone(f"the job launcher (process {self.pid}) is gone: restart the server")
        (pid,) = struct.unpack("!q", reply)
        return pid

    def close(self) -> None:
        """End the launcher (jobs it started run on to their end)."""
        with contextlib.suppress(OSError):
            self._sock.close()
        if self._owner == os.getpid():
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(self.pid, 0)


def _serve(sock: socket.socket, run: Callable[[str, tuple], None]) -> None:
    while True:
        _reap()
        ready, _w, _x = select.select([sock], [], [], REAP_S)
        if not ready:
            continue
        data = _recv(sock)
        if data is None:  # the server closed its end (or died)
            return
        name, args = pickle.loads(data)
        pid = os.fork()
        if pid == 0:  # the job
            sock.close()
            code = 0
            try:
                run(name, args)
            except BaseException:  # a job's failure is its own; Dash reports what it stored
                traceback.print_exc()
                code = 1
            finally:
                _flush()
                os._exit(code)
        _send(sock, struct.pack("!q", pid))


def _warm(warm: Callable[[], None] | None) -> None:
    """Run ``warm`` once in the launcher, before it forks any job: every job inherits what it imported and cached
    (a request sent meanwhile waits in the socket). A failure only costs speed: said on stderr, and the launcher
    serves on."""
    if warm is None:
        return
    try:
        warm()
    except Exception:
        traceback.print_exc()
        _flush()


def _reap() -> None:
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


def _send(sock: socket.socket, data: bytes) -> None:
    sock.sendall(_SIZE.pack(len(data)) + data)


def _recv(sock: socket.socket) -> bytes | None:
    head = _exactly(sock, _SIZE.size)
    if head is None:
        return None
    return _exactly(sock, _SIZE.unpack(head)[0])


def _exactly(sock: socket.socket, n: int) -> bytes | None:
    parts, got = [], 0
    while got < n:
        chunk = sock.recv(n - got)
        if not chunk:
            return None
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


__all__ = ("Launcher", "LauncherGone")
