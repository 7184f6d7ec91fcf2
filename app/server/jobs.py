"""Background work of a dashboard server: who runs it, how much at once, one run per key, what a session may start.

Every run that takes time (a playground run, a compare, a trainee's exercise) is a Dash background
callback: the click returns at once and the page polls the job (one request in flight at a time; Dash
waits for each answer before asking again). :func:`manager` picks the engine Dash documents for that:
``DiskcacheManager`` by default (jobs are processes of this machine, forked by the server's
:class:`~app.server.launcher.Launcher`; results in its temporary folder: no external service), or
``CeleryManager`` over Redis when ``ASCENDSIM_REDIS_URL`` is set (jobs run on Celery workers on any number
of machines that share the runs folder: ``celery -A app.web.celery_worker worker``).

Inside a job, three guards, each with a local implementation (``flock`` on files in the runs folder: a
lock dies with the process that held it, however it died) and a Redis one (keys with a lease that the
holder renews; a dead holder's lease runs out and another job takes over):

* :meth:`Coordinator.single` — at most one job computes a given run; an identical request that arrives
  meanwhile waits for it and then reads the stored run;
* :meth:`Coordinator.slot` — at most ``slots`` heavy jobs run at once (the others queue, first come first
  served, and know how many are ahead of them); the queue has a bounded length;
* :meth:`Coordinator.session` — a browser session has at most one job running and starts at most
  ``per_minute`` a minute.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import diskcache
from dash import DiskcacheManager
from dash.background_callback.managers.diskcache_manager import _make_job_fn

from .launcher import Launcher

REDIS_ENV = "ASCENDSIM_REDIS_URL"
SLOTS = max(1, os.cpu_count() or 1)  # heavy jobs at once on this machine (a class server: its cores)
QUEUE_MAX = 32  # jobs that may wait for a slot; one more is refused
PER_MINUTE = 10  # jobs a session may start per minute
POLL_S = 0.1
LEASE_S = 30.0  # a Redis lease not renewed for this long belongs to nobody
CACHE_BYTES = 256 * 2**20  # the jobs' results and progress waiting to be fetched
RESULT_KEPT_S = 120.0  # a job's result stays this long after a poll fetched it (the page may ask again)
JOB_KEPT_S = 3600.0  # how long a request's job is remembered (an identical request then polls the same job)


class Busy(RuntimeError):
    """A job cannot start now (the session's limit, a full queue); the message says which, in one line."""

    def __init__(self, key: str, **values) -> None:
        super().__init__(key)
        self.key = key  # a message id of app.present.messages ("web.busy.session", ...)
        self.values = values


def manager(folder: Path):
    """The background-callback manager: Celery over Redis if ``ASCENDSIM_REDIS_URL`` is set, else Diskcache."""
    url = os.environ.get(REDIS_ENV)
    if url:
        from dash import CeleryManager

        from .celery_app import celery_for

        return CeleryManager(celery_for(url))
    return LocalManager(folder / "callbacks")


class LocalManager(DiskcacheManager):
    """Dash's ``DiskcacheManager``, except for how a job's process is made. Dash forks it from the server's
    process, whose other threads may hold locks at that instant (SQLite's, while they poll other jobs); here a
    :class:`~app.server.launcher.Launcher`, made by :meth:`start` once the callbacks are registered and before
    the server has threads, forks it. The job opens the cache afresh (a connection must not cross a fork)."""

    def __init__(self, folder: Path) -> None:
        self.folder = str(folder)
        super().__init__(diskcache.Cache(self.folder, size_limit=CACHE_BYTES))
        self._launcher: Launcher | None = None

    def make_job_fn(self, fn, progress, key=None):
        return _make_job_fn(fn, _PerProcessCache(self.folder), progress)

    def start(self) -> None:
        """Make the launcher (call it once every background callback is registered, while single-threaded)."""
        if self._launcher is None:
            self._launcher = Launcher(self._run_job)

    def _run_job(self, name: str, args: tuple) -> None:
        self.func_registry[name](*args)

    def terminate_job(self, job):
        """Dash's, except that a job ending meanwhile counts as terminated. The launcher reaps a finished job at
        any moment, and Dash's own raised ``NoSuchProcess`` from the job's ``children()`` after it had taken the
        result out of the cache (in ``get_result``): the poll failed and the run never reached its page."""
        import psutil

        with contextlib.suppress(psutil.NoSuchProcess):
            super().terminate_job(job)

    def call_job_fn(self, key, job_fn, args, context):
        """The job of this request: the one an identical request started if it still runs (that request's answer
        was lost with the worker that took it, and the page sent it again), else one forked now."""
        if self._launcher is None:
            raise RuntimeError("LocalManager.start() was not called: jobs would be forked from a threaded server")
        started = self.handle.get(_job_key(key))
        if isinstance(started, tuple) and _alive(*started):
            return started[0]
        self.handle.delete(key)  # what an earlier identical request's job answered: this job answers afresh
        name = next(k for k, fn in self.func_registry.items() if fn is job_fn)
        pid = self._launcher.start(name, (key, self._make_progress_key(key), args, dict(context)))
        self.handle.set(_job_key(key), (pid, _created(pid)), expire=JOB_KEPT_S)
        return pid

    def get_result(self, key, job):
        """Dash's, except that the result stays a while (:data:`RESULT_KEPT_S`) after a poll took it: a worker
        that dies between reading it and answering loses only its answer, and the poll sent again finds it."""
        result = self.handle.get(key, self.UNDEFINED)
        if result is self.UNDEFINED:
            return self.UNDEFINED
        self.handle.touch(key, expire=RESULT_KEPT_S)
        self.clear_cache_entry(self._make_progress_key(key))
        if job:
            self.terminate_job(job)
        return result


def _job_key(key: str) -> str:
    return f"{key}-job"


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


class Coordinator:
    """The guards a job passes, over the runs folder (this machine) or Redis (many machines)."""

    def __init__(self, folder: Path, slots: int = SLOTS, queue_max: int = QUEUE_MAX, per_minute: int = PER_MINUTE):
        self.folder = Path(folder)
        for sub in ("leases", "slots", "queue", "sessions"):
            (self.folder / sub).mkdir(parents=True, exist_ok=True)
        self.slots = slots
        self.queue_max = queue_max
        self.per_minute = per_minute
        url = os.environ.get(REDIS_ENV)
        self._redis = _redis(url) if url else None

    # -- one computation per run ------------------------------------------------------------------------
    @contextlib.contextmanager
    def single(self, key: str, waiting: Callable[[], None] | None = None) -> Iterator[bool]:
        """Hold the run ``key`` while computing it. Yields True to the one job that must compute it; a job that
        found it held waits (calling ``waiting`` now and then) until the holder is done, then yields False."""
        if self._redis is not None:
            with _RedisLease(self._redis, f"ascendsim:run:{key}", waiting) as mine:
                yield mine
            return
        path = self.folder / "leases" / f"{key}.lock"
        with open(path, "a+b") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                mine = True
            except BlockingIOError:
                mine = False
                while True:  # another job computes it: wait for its end (or its death: the lock is then free)
                    if waiting is not None:
                        waiting()
                    try:
                        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        time.sleep(POLL_S)
            try:
                yield mine
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    # -- bounded concurrency ------------------------------------------------------------------------------
    @contextlib.contextmanager
    def slot(self, waiting: Callable[[int], None] | None = None) -> Iterator[None]:
        """Wait for one of the ``slots`` (``waiting(ahead)`` is told how many jobs are ahead), then hold it.
        :class:`Busy` if the queue is full."""
        ticket = self._ticket()
        try:
            while True:
                held = self._try_slot()
                if held is not None:
                    break
                ahead = self._ahead(ticket)
                if waiting is not None:
                    waiting(ahead)
                time.sleep(POLL_S)
        finally:
            self._leave(ticket)
        try:
            yield
        finally:
            held()

    def _ticket(self) -> str:
        if self._redis is not None:
            ticket = str(self._redis.incr("ascendsim:ticket"))
            if self._redis.zcard("ascendsim:queue") >= self.queue_max:
                raise Busy("web.busy.queue", n=self.queue_max)
            self._redis.zadd("ascendsim:queue", {ticket: int(ticket)})
            return ticket
        queue = self.folder / "queue"
        if sum(1 for _ in queue.iterdir()) >= self.queue_max:
            raise Busy("web.busy.queue", n=self.queue_max)
        ticket = f"{time.time_ns():020d}-{uuid.uuid4().hex[:8]}"
        (queue / ticket).touch()
        return ticket

    def _ahead(self, ticket: str) -> int:
        if self._redis is not None:
            rank = self._redis.zrank("ascendsim:queue", ticket)
            return int(rank or 0)
        return sum(1 for p in (self.folder / "queue").iterdir() if p.name < ticket and _fresh(p))

    def _leave(self, ticket: str) -> None:
        if self._redis is not None:
            self._redis.zrem("ascendsim:queue", ticket)
        else:
            (self.folder / "queue" / ticket).unlink(missing_ok=True)

    def _try_slot(self) -> Callable[[], None] | None:
        """A free slot, held until the returned function is called; None if all are taken."""
        if self._redis is not None:
            for i in range(self.slots):
                lease = _RedisLease(self._redis, f"ascendsim:slot:{i}", None)
                if lease.try_take():
                    return lease.release
            return None
        for i in range(self.slots):
            fh = open(self.folder / "slots" / f"{i}.lock", "a+b")  # noqa: SIM115 (held until released)
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.close()
                continue
            return lambda fh=fh: _unlock(fh)
        return None

    # -- what one session may do -----------------------------------------------------------------------------
    @contextlib.contextmanager
    def session(self, session: str) -> Iterator[None]:
        """One job at a time per browser session, and at most ``per_minute`` started a minute (:class:`Busy`)."""
        name = "".join(c for c in str(session) if c.isalnum())[:64] or "anonymous"
        now = time.time()
        if self._redis is not None:
            stamps = f"ascendsim:starts:{name}"
            self._redis.zremrangebyscore(stamps, 0, now - 60)
            if self._redis.zcard(stamps) >= self.per_minute:
                raise Busy("web.busy.rate", n=self.per_minute)
            lease = _RedisLease(self._redis, f"ascendsim:session:{name}", None)
            if not lease.try_take():
                raise Busy("web.busy.session")
            self._redis.zadd(stamps, {uuid.uuid4().hex: now})
            self._redis.expire(stamps, 120)
            try:
                yield
            finally:
                lease.release()
            return
        path = self.folder / "sessions" / f"{name}.lock"
        with open(path, "a+") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise Busy("web.busy.session") from None
            try:
                fh.seek(0)
                stamps = [float(x) for x in fh.read().split() if _number(x) and float(x) > now - 60]
                if len(stamps) >= self.per_minute:
                    raise Busy("web.busy.rate", n=self.per_minute)
                fh.seek(0)
                fh.truncate()
                fh.write(" ".join(map(str, [*stamps, now])))
                fh.flush()
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)


def _unlock(fh) -> None:
    """Release a flock explicitly before closing: a process forked meanwhile shares the open file, and only an
    unlock (not a close) releases it for every holder of that file."""
    with contextlib.suppress(OSError):
        fcntl.flock(fh, fcntl.LOCK_UN)
    fh.close()


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _fresh(path: Path, max_age_s: float = 3600.0) -> bool:
    """A queue ticket of a job that may still be waiting (one its dead owner left behind stops counting)."""
    try:
        return time.time() - path.stat().st_mtime < max_age_s
    except OSError:
        return False


def _redis(url: str):
    import redis

    return redis.Redis.from_url(url)


class _RedisLease:
    """A key held for its owner while a thread renews it; a dead owner's key expires after ``LEASE_S``."""

    def __init__(self, client, key: str, waiting: Callable[[], None] | None) -> None:
        self.client, self.key, self.waiting = client, key, waiting
        self.owner = uuid.uuid4().hex
        self._stop = threading.Event()
        self._renew: threading.Thread | None = None

    def try_take(self) -> bool:
        if not self.client.set(self.key, self.owner, nx=True, px=int(LEASE_S * 1000)):
            return False
        self._renew = threading.Thread(target=self._keep, daemon=True)
        self._renew.start()
        return True

    def _keep(self) -> None:
        while not self._stop.wait(LEASE_S / 3):
            if self.client.get(self.key) != self.owner.encode():
                return
            self.client.pexpire(self.key, int(LEASE_S * 1000))

    def release(self) -> None:
        self._stop.set()
        with contextlib.suppress(Exception):
            if self.client.get(self.key) == self.owner.encode():
                self.client.delete(self.key)

    def __enter__(self) -> bool:
        if self.try_take():
            return True
        while True:
            if self.waiting is not None:
                self.waiting()
            if self.try_take():
                return False
            time.sleep(POLL_S)

    def __exit__(self, *exc) -> None:
        self.release()


__all__ = ("PER_MINUTE", "QUEUE_MAX", "REDIS_ENV", "SLOTS", "Busy", "Coordinator", "manager")
