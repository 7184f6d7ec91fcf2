"""Who runs a dashboard's background jobs, and how a page's polls always get their answer.

:func:`manager` picks the engine Dash documents: ``DiskcacheManager`` by default (jobs are processes of this
machine, forked by the server's :class:`~app.server.launcher.Launcher`; results in its temporary folder: no
external service), or ``CeleryManager`` over Redis when ``ASCENDSIM_REDIS_URL`` is set (jobs run on Celery
workers on any number of machines that share the runs folder: ``celery -A app.web.celery_worker worker``).
Both are changed the same way (:class:`LocalManager` here, :class:`~app.server.redis_jobs.RedisManager`):

* a job-starting request sent again (its answer was lost with the worker that took it) joins the job it started;
* a result stays :data:`~app.server.jobs.RESULT_KEPT_S` after a poll took it (a poll sent again finds it);
* a job that wrote its answer and ended between a poll's two looks (result, then "does it run?") still counts as
  running, so the next poll takes the answer instead of the page giving up;
* a job whose process ended without an answer (killed from outside: the out-of-memory killer, an operator) is
  started again for its page, at most :data:`~app.server.jobs.TAKEOVERS` times; then its answer says so
  (:data:`~app.server.jobs.LOST`); a cancelled job is not.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable
from pathlib import Path

import diskcache
from dash import DiskcacheManager
from dash.background_callback.managers.diskcache_manager import _make_job_fn

from .jobs import CACHE_BYTES, JOB_KEPT_S, LOST, REDIS_ENV, RESULT_KEPT_S, TAKEOVERS
from .launcher import Launcher

log = logging.getLogger("ascendsim")


def manager(folder: Path):
    """The background-callback manager: Celery over Redis if ``ASCENDSIM_REDIS_URL`` is set, else this machine's
    processes (results under ``folder``)."""
    url = os.environ.get(REDIS_ENV)
    if url:
        from .celery_app import celery_for
        from .redis_jobs import RedisManager

        return RedisManager(celery_for(url))
    return LocalManager(folder / "callbacks")


class LocalManager(DiskcacheManager):
    """Dash's ``DiskcacheManager`` with the promises of the module's text, and another way to make a job's process.
    Dash forks it from the server's process, whose other threads may hold locks at that instant (SQLite's, while
    they poll other jobs); here a :class:`~app.server.launcher.Launcher`, made by :meth:`start` once the callbacks
    are registered and before the server has threads, forks it. The job opens the cache afresh (a connection
    must not cross a fork).

    Each request's job is recorded under ``<key>-job`` (its process id and start time, how to start it again, how
    often it was started, whether it was cancelled) and each process id under ``job-<pid>`` (the request it
    answers): a page polls with the process id it was given first, whichever process answers it now."""

    def __init__(self, folder: Path) -> None:
        self.folder = str(folder)
        super().__init__(diskcache.Cache(self.folder, size_limit=CACHE_BYTES))
        self._launcher: Launcher | None = None

    def make_job_fn(self, fn, progress, key=None):
        return _make_job_fn(fn, _PerProcessCache(self.folder), progress)

    def start(self, warm: Callable[[], None] | None = None) -> None:
        """Make the launcher (call it once every background callback is registered, while single-threaded);
        ``warm``: what it runs once before forking jobs (see :class:`~app.server.launcher.Launcher`)."""
        if self._launcher is None:
            self._launcher = Launcher(self._run_job, warm)

    def get_or_create_signing_secret(self, generate):
        """The secret that signs pages' job handles, the same in every worker. Dash keeps it in the jobs' cache,
        which evicts it, oldest first, once full: a worker started after that (one killed, restarted) signs with
        another secret, and every open page's polls it takes stop verifying (the run never arrives). Here it is a
        file beside the cache, made once by whichever worker comes first; Dash's way if the folder cannot keep it."""
        path = Path(self.folder).parent / "signing-secret"
        try:
            if not path.is_file():
                tmp = path.with_name(f".{path.name}.{os.getpid()}")
                tmp.write_bytes(generate())
                tmp.chmod(0o600)
                with contextlib.suppress(FileExistsError):
                    os.link(tmp, path)  # the first worker's wins; the others read it
                tmp.unlink()
            found = path.read_bytes()
        except OSError:
            found = b""
        return found or super().get_or_create_signing_secret(generate)

    def _run_job(self, name: str, args: tuple) -> None:
        self.func_registry[name](*args)

    # -- starting (or joining) the job of a request -------------------------------------------------------------
    def call_job_fn(self, key, job_fn, args, context):
        """The job of this request: the one an identical request started if it still runs (that request's answer
        was lost with the worker that took it, and the page sent it again), else one forked now."""
        if self._launcher is None:
            raise RuntimeError("LocalManager.start() was not called: jobs would be forked from a threaded server")
        with self._deciding(key):
            record = self._record(key)
            # a job that has answered has ended, though its process may stand a moment longer (until it exits and
            # the launcher reaps it)
            if record is not None and self.handle.get(key) is None and _alive(record["pid"], record["created"]):
                return record["pid"]
            self.handle.delete(key)  # what an earlier identical request's job answered: this job answers afresh
            name = next(k for k, fn in self.func_registry.items() if fn is job_fn)
            return self._fork(key, name, (key, self._make_progress_key(key), args, dict(context)), tries=0)

    def _fork(self, key: str, name: str, call: tuple, tries: int) -> int:
        pid = self._launcher.start(name, call)
        record = {"pid": pid, "created": _created(pid), "name": name, "call": call, "tries": tries}
        self.handle.set(_job_key(key), record, expire=JOB_KEPT_S)
        self.handle.set(_pid_key(pid), key, expire=JOB_KEPT_S)
        return pid

    def _deciding(self, key: str):
        """One web worker at a time decides what runs for ``key`` (a lock that frees itself after 10 s)."""
        return diskcache.Lock(self.handle, f"{key}-deciding", expire=10)

    def _record(self, key: str) -> dict | None:
        found = self.handle.get(_job_key(key))
        return found if isinstance(found, dict) else None

    def _key_of(self, job) -> str | None:
        found = self.handle.get(_pid_key(job)) if _pid(job) else None
        return found if isinstance(found, str) else None

    # -- is it running, and was it lost ------------------------------------------------------------------------
    def job_running(self, job):
        """Whether the request's job runs, or has just ended with its answer there to take (Dash asks right after
        it found no result). A job whose process ended without an answer is started again here, and counts as
        running."""
        key = self._key_of(job)
        if key is None:
            return super().job_running(job)
        if self.result_ready(key):
            return True
        record = self._record(key)
        if record is None or record.get("cancelled"):
            return False
        if _alive(record["pid"], record["created"]):
            return True
        return self._take_over(key, record["pid"])

    def _take_over(self, key: str, lost: int) -> bool:
        with self._deciding(key):
            record = self._record(key)
            if record is None or record["pid"] != lost or self.result_ready(key):
                return record is not None  # another poll did it meanwhile
            tries = record["tries"] + 1
            if tries > TAKEOVERS:
                log.warning("job %s: its process ended without an answer %d times; given up", key, tries)
                self.handle.set(key, {"background_callback_error": {"msg": LOST, "tb": ""}}, expire=RESULT_KEPT_S)
                return True
            pid = self._fork(key, record["name"], record["call"], tries)
            log.warning("job %s: process %d ended without an answer; started again as %d", key, lost, pid)
            return True

    # -- results that stay, and cancels -----------------------------------------------------------------------------
    def get_result(self, key, job):
        """Dash's, except that the result stays a while (:data:`RESULT_KEPT_S`) after a poll took it: a worker
        that dies between reading it and answering loses only its answer, and the poll sent again finds it."""
        result = self.handle.get(key, self.UNDEFINED)
        if result is self.UNDEFINED:
            return self.UNDEFINED
        self.handle.touch(key, expire=RESULT_KEPT_S)
        self.clear_cache_entry(self._make_progress_key(key))
        return result

    def terminate_job(self, job):
        """Stop the request's job (a cancel, or a newer click of the same callback). A job that has ended is left
        alone (Dash asks after every result), and so is a process id that no longer belongs to a job of ours (the
        id of an ended job may be another process's by now); Dash's own raised ``NoSuchProcess`` when the
        launcher reaped the job meanwhile, and the poll that had taken the result failed."""
        import psutil

        key = self._key_of(job)
        if key is not None:
            if self.result_ready(key):
                return
            record = self._record(key)
            if record is None:
                return
            self.handle.set(_job_key(key), {**record, "cancelled": True}, expire=JOB_KEPT_S)
            if not _alive(record["pid"], record["created"]):
                return
            job = record["pid"]
        with contextlib.suppress(psutil.NoSuchProcess):
            super().terminate_job(job)


def _job_key(key: str) -> str:
    return f"{key}-job"


def _pid_key(pid) -> str:
    return f"job-{_pid(pid)}"


def _pid(job) -> int:
    """A job's process id as Dash hands it back (an int, or its text); 0 for anything else."""
    try:
        return int(job)
    except (TypeError, ValueError):
        return 0


def _created(pid: int) -> float:
    """When process ``pid`` started (0 if it has already ended): a process id is reused once its process ends."""
    import psutil

    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return 0.0


def _alive(pid: int, created: float) -> bool:
    """Whether the job ``pid`` (started at ``created``) still runs."""
    import psutil

    try:
        proc = psutil.Process(pid)
        return created > 0 and proc.create_time() == created and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


class _PerProcessCache:
    """A diskcache ``Cache`` over ``folder``, opened once in each process that uses it."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self._pid = -1
        self._cache = None

    def _here(self):
        if self._pid != os.getpid():
            self._cache, self._pid = diskcache.Cache(self.folder, size_limit=CACHE_BYTES), os.getpid()
        return self._cache

    def set(self, key, value, **kw):
        return self._here().set(key, value, **kw)

    def get(self, key, default=None, **kw):
        return self._here().get(key, default, **kw)


__all__ = ("LocalManager", "manager")
