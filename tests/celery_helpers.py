"""A real ``redis-server`` and real Celery workers on 127.0.0.1, started and stopped by a test (the class server's
job path: ``ASCENDSIM_REDIS_URL``). Under ``CI=true`` a missing redis-server or Celery fails the test."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from web_browser import ROOT, free_port

TESTS = Path(__file__).resolve().parent


def need_redis_and_celery() -> None:
    missing = []
    if shutil.which("redis-server") is None:
        missing.append("redis-server (apt-get install -y redis-server)")
    for module in ("celery", "redis"):
        if importlib.util.find_spec(module) is None:
            missing.append(f"the {module} package (pip install -e '.[test]')")
    if missing:
        message = "the Celery tests need " + " and ".join(missing)
        pytest.fail(message) if os.environ.get("CI") == "true" else pytest.skip(message)


@contextlib.contextmanager
def redis_server():
    """A fresh redis-server on a free port (nothing saved to disk); its URL."""
    need_redis_and_celery()
    port = free_port()
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    import redis

    client = redis.Redis.from_url(url)
    deadline = time.monotonic() + 20
    while True:
        try:
            client.ping()
            break
        except redis.ConnectionError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise RuntimeError("redis-server did not start") from None
            time.sleep(0.05)
    try:
        yield url
    finally:
        client.close()
        proc.terminate()
        proc.wait(10)


class Worker:
    """``celery -A app worker`` in a process group of its own (so a test can kill it whole, as a machine dies)."""

    def __init__(self, app: str, env: dict, log: Path, concurrency: int = 1) -> None:
        self.log = log
        self._out = log.open("a")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", app, "worker", "--concurrency", str(concurrency), "-l", "INFO"],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{TESTS}", **env},
            stdout=self._out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 90
        while "ready." not in log.read_text(errors="replace"):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the Celery worker did not start: {log.read_text()[-2000:]}")
            time.sleep(0.1)

    def pool(self) -> list[int]:
        """The worker's pool processes (they run the tasks)."""
        import psutil

        return [p.pid for p in psutil.Process(self.proc.pid).children()]

    def kill(self) -> None:
        """kill -9 the worker and its pool at once, as when its machine dies."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()
        with contextlib.suppress(ProcessLookupError):  # a pool process left behind
            os.killpg(self.proc.pid, signal.SIGKILL)
        self._out.close()


__all__ = ("Worker", "need_redis_and_celery", "redis_server")
