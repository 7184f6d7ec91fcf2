"""Jobs on Celery workers over Redis (``ASCENDSIM_REDIS_URL``) with the guarantees of the default path.

Dash's ``CeleryManager`` deletes a job's result when a poll takes it (a poll whose answer is lost with the web
worker that gave it then loses the run), starts a second task when the page sends a job-starting request again
(refused then as a second job of its session), and cannot tell a task lost with its worker from one still
queued. :class:`RedisManager` changes that, with records in the same Redis:

* ``ascendsim:job:<key>`` — the task now answering request ``<key>`` (Dash's result key), how to send it again
  and how often it was sent; ``ascendsim:task:<id>`` — the request a task answers;
* a request sent again while its task runs gets that task (:meth:`RedisManager.call_job_fn`);
* a result stays :data:`~app.server.jobs.RESULT_KEPT_S` after a poll took it (:meth:`RedisManager.get_result`);
* a task beats while it runs (``ascendsim:beat:<id>``, renewed every third of :func:`~app.server.leases.lease_s`
  by the worker: :func:`beat`); a task that began and stopped beating, or ended without an answer, was lost
  with its worker, and the next poll sends it again (at most :data:`~app.server.jobs.TAKEOVERS` times; then the
  page is told).
  The task sent again holds at once what the lost one held (its leases' owner is the request: ``leases``).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid

from dash import CeleryManager
from kombu.utils.json import dumps, loads

from .jobs import JOB_KEPT_S, LOST, RESULT_KEPT_S, TAKEOVERS
from .leases import HELD_KEPT_S, lease_s, release_all

log = logging.getLogger("ascendsim")


def _job(key: str) -> str:
    return f"ascendsim:job:{key}"


def _task(task: str) -> str:
    return f"ascendsim:task:{task}"


def _beat(task: str) -> str:
    return f"ascendsim:beat:{task}"


def _began(task: str) -> str:
    return f"ascendsim:began:{task}"


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisManager(CeleryManager):
    """Dash's ``CeleryManager`` whose requests join their running task, whose results stay a while after they are
    taken, and whose tasks lost with a worker are sent again (see the module's text)."""

    def __init__(self, celery_app) -> None:
        super().__init__(celery_app)
        self.redis = celery_app.backend.client

    # -- starting (or joining) the task of a request -----------------------------------------------------------
    def call_job_fn(self, key, job_fn, args, context):
        """The task of this request: the one an identical request started if it still runs (that request's
        answer was lost with the web worker that took it, and the page sent it again), else one sent now."""
        with self._starting(key):
            record = self._record(key)
            # a task that has answered has ended, though its beat may stand a moment longer (it is stopped after the
            # answer is written, and a beat being renewed as it stops stands for its lease)
            if record and self.handle.backend.get(key) is None and self._running(key, record, take_over=False):
                return _text(record[b"task"])
            self.handle.backend.delete(key)  # what an earlier identical request's task answered
            call = [key, self._make_progress_key(key), args, dict(context)]
            return self._send(key, job_fn.name, dumps(call), tries=0)

    def _send(self, key: str, name: str, call: str, tries: int) -> str:
        task = uuid.uuid4().hex
        with self.redis.pipeline() as pipe:
            pipe.hset(_job(key), mapping={"task": task, "name": name, "call": call, "tries": tries, "cancelled": 0})
            pipe.expire(_job(key), int(JOB_KEPT_S))
            pipe.set(_task(task), key, ex=int(JOB_KEPT_S))
            pipe.execute()
        self.handle.send_task(name, args=loads(call), task_id=task)
        return task

    @contextlib.contextmanager
    def _starting(self, key: str):
        """One web worker at a time decides what runs for ``key`` (a lock that frees itself after 10 s)."""
        lock, me = f"ascendsim:starting:{key}", uuid.uuid4().hex
        deadline = time.monotonic() + 10
        while not self.redis.set(lock, me, nx=True, px=10_000) and time.monotonic() < deadline:
            time.sleep(0.02)
        try:
            yield
        finally:
            if self.redis.get(lock) == me.encode():
                self.redis.delete(lock)

    def _record(self, key: str) -> dict:
        return self.redis.hgetall(_job(key))

    def _key_of(self, job) -> str | None:
        found = self.redis.get(_task(str(job))) if job else None
        return _text(found) if found is not None else None

    # -- is it running, and was it lost ----------------------------------------------------------------------
    def job_running(self, job):
        """Whether the request's task runs, is queued, or has just ended with its answer there to take (Dash asks
        right after it found no result: an answer written in between must still reach the page). A task lost
        with its worker is sent again here, and counts as running."""
        key = self._key_of(job)
        if key is None:
            return super().job_running(job)
        if self.result_ready(key):
            return True
        record = self._record(key)
        return bool(record) and self._running(key, record, take_over=True)

    def _running(self, key: str, record: dict, take_over: bool) -> bool:
        if record.get(b"cancelled") == b"1":
            return False
        task = _text(record[b"task"])
        if self.redis.exists(_beat(task)):
            return True
        state = self.handle.AsyncResult(task).state
        if state in ("SUCCESS", "REVOKED"):
            return False  # ended (its answer taken and gone, or cancelled)
        if state != "FAILURE" and not self.redis.exists(_began(task)):
            return True  # queued
        # it began and stopped beating, or failed outside Dash's own handling: its worker was lost
        return take_over and self._take_over(key, task)

    def _take_over(self, key: str, lost: str) -> bool:
        with self._starting(key):
            record = self._record(key)
            if not record or _text(record[b"task"]) != lost:
                return bool(record)  # another web worker did it meanwhile
            tries = int(record[b"tries"]) + 1
            if tries > TAKEOVERS:
                log.warning("job %s: its worker was lost %d times; given up", key, tries)
                error = {"background_callback_error": {"msg": LOST, "tb": ""}}
                self.handle.backend.set(key, dumps(error))
                return True
            task = self._send(key, _text(record[b"name"]), _text(record[b"call"]), tries)
            log.warning("job %s: task %s was lost with its worker; sent again as %s", key, lost, task)
            return True

    # -- results that stay, and cancels -----------------------------------------------------------------------------
    def get_result(self, key, job):
        """The result, which stays :data:`~app.server.jobs.RESULT_KEPT_S` after this poll took it: a web worker
        that dies between reading it and answering loses only its answer, and the poll sent again finds it."""
        found = self.handle.backend.get(key)
        if found is None:
            return self.UNDEFINED
        self.redis.expire(key, int(RESULT_KEPT_S))
        self.clear_cache_entry(self._make_progress_key(key))
        return loads(found)

    def get_updated_props(self, key):
        """Dash's, except that taking the props deletes the props (Dash's deleted the result)."""
        props = self.handle.backend.get(self._make_set_props_key(key))
        if props is None:
            return {}
        self.clear_cache_entry(self._make_set_props_key(key))
        return loads(props)

    def terminate_job(self, job):
        """Stop the request's task (a cancel, or a newer click of the same callback) and free what it held; a task
        that has ended is left alone (Dash asks after every result)."""
        key = self._key_of(job)
        if key is None:
            if job:
                super().terminate_job(job)
            return
        if self.result_ready(key):
            return
        record = self._record(key)
        task = _text(record[b"task"]) if record else str(job)
        self.redis.hset(_job(key), "cancelled", 1)
        self.handle.control.revoke(task, terminate=True)
        release_all(self.redis, f"job:{key}")


# -- the worker's side: a task beats while it runs --------------------------------------------------------------
_BEATS: dict[str, threading.Event] = {}


def beat(task_id: str, client) -> None:
    """Say that task ``task_id`` began, and keep saying that it runs until :func:`stop_beat` (a thread)."""
    client.set(_beat(task_id), 1, px=int(lease_s() * 1000))  # before "began": one never stands without the other
    client.set(_began(task_id), 1, ex=HELD_KEPT_S)
    stop = _BEATS[task_id] = threading.Event()

    def keep() -> None:
        while not stop.wait(lease_s() / 3):
            with contextlib.suppress(Exception):  # Redis away for a moment: the next turn says it again
                client.set(_beat(task_id), 1, px=int(lease_s() * 1000))

    threading.Thread(target=keep, daemon=True, name=f"beat-{task_id}").start()


def stop_beat(task_id: str, client) -> None:
    stop = _BEATS.pop(task_id, None)
    if stop is not None:
        stop.set()
    with contextlib.suppress(Exception):
        client.delete(_beat(task_id))


def connect_beats(celery_app) -> None:
    """Make every Dash job of ``celery_app`` beat while it runs (called where the Celery application is made)."""
    from celery.signals import task_postrun, task_prerun

    def began(task_id=None, task=None, **_kw) -> None:
        if task is not None and task.app is celery_app and task.name.startswith("background_callback_"):
            beat(task_id, celery_app.backend.client)

    def ended(task_id=None, task=None, **_kw) -> None:
        if task is not None and task.app is celery_app:
            stop_beat(task_id, celery_app.backend.client)

    task_prerun.connect(began, weak=False)
    task_postrun.connect(ended, weak=False)


__all__ = ("RedisManager", "beat", "connect_beats", "stop_beat")
