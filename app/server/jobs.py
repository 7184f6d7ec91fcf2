"""Background work of a dashboard server: how much at once, one run per key, what a session may start.

Every run that takes time (a playground run, a compare, a trainee's exercise) is a Dash background
callback: the click returns at once and the page polls the job (:mod:`~app.server.managers` picks and
changes the engine that runs it, on this machine or on Celery workers). The constants here are what both
engines keep: a result stays :data:`RESULT_KEPT_S` after a poll took it, a request's job is remembered
:data:`JOB_KEPT_S`, a job lost with its process is started again :data:`TAKEOVERS` times.

Inside a job, three guards, each with a local implementation (``flock`` on files in the runs folder: a
lock dies with the process that held it, however it died) and a Redis one (keys with a lease that the
holder renews; a dead holder's lease runs out and another job takes over: :mod:`~app.server.leases`):

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
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from .leases import POLL_S, RedisLease, job_owner, lease_s, redis_client

REDIS_ENV = "ASCENDSIM_REDIS_URL"
SLOTS = max(1, os.cpu_count() or 1)  # heavy jobs at once on this machine (a class server: its cores)
QUEUE_MAX = 32  # jobs that may wait for a slot; one more is refused
TICKET_STALE_S = 10.0  # a queue ticket not refreshed for this long is a lost job's (a waiting job looks every POLL_S)
PER_MINUTE = 10  # jobs a session may start per minute
CACHE_BYTES = 256 * 2**20  # the jobs' results and progress waiting to be fetched
RESULT_KEPT_S = 120.0  # a job's result stays this long after a poll fetched it (the page may ask again)
JOB_KEPT_S = 3600.0  # how long a request's job is remembered (an identical request then polls the same job)
TAKEOVERS = 3  # times a job lost with its process or worker is started again for its page; then the page is told
LOST = "ascendsim: the job's process was lost"  # the error a request's result says when its job was given up


class Busy(RuntimeError):
    """A job cannot start now (the session's limit, a full queue); the message says which, in one line."""

    def __init__(self, key: str, **values) -> None:
        super().__init__(key)
        self.key = key  # a message id of app.present.messages ("web.busy.session", ...)
        self.values = values


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
        self._redis = redis_client(url) if url else None
        self._swept = 0.0

    def _drop_stale_tickets(self) -> None:
        """Forget queue tickets whose job no longer says it waits (lost with its worker or machine)."""
        self._swept = time.monotonic()
        tickets = self._redis.zrange(_QUEUE, 0, -1)
        if tickets:
            alive = self._redis.mget([_waiting(t.decode()) for t in tickets])
            gone = [t for t, a in zip(tickets, alive, strict=True) if a is None]
            if gone:
                self._redis.zrem(_QUEUE, *gone)

    # -- one computation per run ------------------------------------------------------------------------
    @contextlib.contextmanager
    def single(self, key: str, waiting: Callable[[], None] | None = None) -> Iterator[bool]:
        """Hold the run ``key`` while computing it. Yields True to the one job that must compute it; a job that
        found it held waits (calling ``waiting`` now and then) until the holder is done, then yields False."""
        if self._redis is not None:
            with RedisLease(self._redis, f"ascendsim:run:{key}", waiting, job_owner()) as mine:
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
            while True:  # first come, first served: a job takes a slot only when fewer than ``slots`` wait before it
                ahead = self._ahead(ticket)
                held = self._try_slot() if ahead < self.slots else None
                if held is not None:
                    break
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
            self._drop_stale_tickets()
            if self._redis.zcard(_QUEUE) >= self.queue_max:
                raise Busy("web.busy.queue", n=self.queue_max)
            ticket = str(self._redis.incr("ascendsim:ticket"))
            self._redis.set(_waiting(ticket), 1, px=int(lease_s() * 1000))
            self._redis.zadd(_QUEUE, {ticket: int(ticket)})
            return ticket
        queue = self.folder / "queue"
        waiting = 0
        for p in queue.iterdir():
            if _fresh(p):
                waiting += 1
            else:  # a ticket its job no longer refreshes (lost with its process)
                p.unlink(missing_ok=True)
        if waiting >= self.queue_max:
            raise Busy("web.busy.queue", n=self.queue_max)
        ticket = f"{time.time_ns():020d}-{uuid.uuid4().hex[:8]}"
        (queue / ticket).touch()
        return ticket

    def _ahead(self, ticket: str) -> int:
        if self._redis is not None:  # a waiting job says it still waits; one lost with its machine stops counting
            self._redis.set(_waiting(ticket), 1, px=int(lease_s() * 1000))
            if time.monotonic() - self._swept > lease_s() / 3:
                self._drop_stale_tickets()
            rank = self._redis.zrank(_QUEUE, ticket)
            return int(rank or 0)
        with contextlib.suppress(OSError):  # still waiting: the ticket stays fresh
            os.utime(self.folder / "queue" / ticket)
        return sum(1 for p in (self.folder / "queue").iterdir() if p.name < ticket and _fresh(p))

    def _leave(self, ticket: str) -> None:
        if self._redis is not None:
            self._redis.zrem(_QUEUE, ticket)
            self._redis.delete(_waiting(ticket))
        else:
            (self.folder / "queue" / ticket).unlink(missing_ok=True)

    def _try_slot(self) -> Callable[[], None] | None:
        """A free slot, held until the returned function is called; None if all are taken."""
        if self._redis is not None:
            for i in range(self.slots):
                lease = RedisLease(self._redis, f"ascendsim:slot:{i}", None, job_owner())
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
    def session(self, session: str, work: str | None = None) -> Iterator[None]:
        """One job at a time per browser session, and at most ``per_minute`` started a minute (:class:`Busy`).

        ``work`` names what the job computes (a run's key). On this machine a job of the session that computes
        the same thing passes instead of being refused: it is the same request's job started again, its first
        job having lost the worker that started it before the worker kept its process id (the first runs on,
        orphaned); the second then waits for the first's computation (:meth:`single`). With Redis a request
        sent again polls the same Celery task, so the case does not arise."""
        name = "".join(c for c in str(session) if c.isalnum())[:64] or "anonymous"
        now = time.time()
        if self._redis is not None:
            stamps = f"ascendsim:starts:{name}"
            self._redis.zremrangebyscore(stamps, 0, now - 60)
            owner = job_owner()  # a task sent again for the same request (its worker lost) is the same job
            again = owner is not None and self._redis.zscore(stamps, owner) is not None
            if self._redis.zcard(stamps) >= self.per_minute and not again:
                raise Busy("web.busy.rate", n=self.per_minute)
            lease = RedisLease(self._redis, f"ascendsim:session:{name}", None, owner)
            if not lease.try_take():
                raise Busy("web.busy.session")
            self._redis.zadd(stamps, {owner or uuid.uuid4().hex: now})
            self._redis.expire(stamps, 120)
            try:
                yield
            finally:
                lease.release()
            return
        path = self.folder / "sessions" / f"{name}.lock"
        doing = path.with_suffix(".work")  # what the holder computes, while it holds the lock
        with open(path, "a+") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if work and _read(doing) == work:
                    yield  # the same request's job again: it joins the first one's computation
                    return
                raise Busy("web.busy.session") from None
            try:
                doing.write_text(work or "")
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
                with contextlib.suppress(OSError):
                    doing.write_text("")
                fcntl.flock(fh, fcntl.LOCK_UN)


_QUEUE = "ascendsim:queue"


def _waiting(ticket: str) -> str:
    return f"ascendsim:waiting:{ticket}"


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


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


def _fresh(path: Path, max_age_s: float = TICKET_STALE_S) -> bool:
    """A queue ticket of a job that may still be waiting: its job refreshes it at every look (one its dead owner
    left behind stops counting, and is swept by the next job that queues)."""
    try:
        return time.time() - path.stat().st_mtime < max_age_s
    except OSError:
        return False


__all__ = (
    "JOB_KEPT_S",
    "LOST",
    "PER_MINUTE",
    "QUEUE_MAX",
    "REDIS_ENV",
    "RESULT_KEPT_S",
    "SLOTS",
    "TAKEOVERS",
    "Busy",
    "Coordinator",
)
