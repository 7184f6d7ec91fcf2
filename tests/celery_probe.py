"""Small Dash jobs on the class server's job path (:class:`app.server.redis_jobs.RedisManager` over a real Redis and
real Celery workers), for tests/test_celery_jobs.py: ``celery -A celery_probe worker`` runs them, and the test
process sends and polls them through the same manager, as a web worker does."""

from __future__ import annotations

import os
import signal
import time
from functools import cache
from pathlib import Path

from app.server.celery_app import celery_for
from app.server.jobs import Coordinator
from app.server.redis_jobs import RedisManager


def sleep_job(seconds: float, marker: str) -> dict:
    """Note this process in ``marker``, sleep, answer."""
    with open(marker, "a") as fh:
        fh.write(f"{os.getpid()}\n")
    time.sleep(seconds)
    return {"slept": seconds}


def die_job(marker: str) -> dict:
    """Kill the worker process that runs it, every time (a job that always takes its worker down)."""
    with open(marker, "a") as fh:
        fh.write(f"{os.getpid()}\n")
    os.kill(os.getpid(), signal.SIGKILL)
    return {}


def session_job(folder: str, session: str, seconds: float) -> dict:
    """Hold ``session``'s one job for ``seconds`` (the leases are the class server's, in Redis)."""
    with Coordinator(Path(folder)).session(session):
        Path(folder, "holding").write_text(str(os.getpid()))
        time.sleep(seconds)
    return {"held": seconds}


JOBS = {"sleep": sleep_job, "die": die_job, "session": session_job}


@cache
def manager() -> RedisManager:
    """The manager over ``ASCENDSIM_REDIS_URL``, with the jobs above registered as its tasks."""
    made = RedisManager(celery_for(os.environ["ASCENDSIM_REDIS_URL"]))
    for name, fn in JOBS.items():
        made.register(name, fn, False)
    return made


def __getattr__(name: str):
    if name == "app":  # what ``celery -A celery_probe`` looks for
        return manager().handle
    raise AttributeError(name)
