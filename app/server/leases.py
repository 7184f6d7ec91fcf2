"""Leases in Redis: what a job holds (its run, a slot, its session) on a class server of many machines.

A lease is a key that names its owner and expires unless the owner renews it, so a job lost with its worker or
its machine lets go of what it held after :func:`lease_s` and another job takes it over. The owner of a Celery
task's leases is the request the task answers (:func:`job_owner`): a task sent again for that request holds at
once what the lost one held, and a cancelled job's leases are freed at once (:func:`release_all`).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import uuid
from collections.abc import Callable

POLL_S = 0.1  # how often a job waiting for a lease (or a lock, or a slot) looks again
LEASE_S = 30.0  # a Redis lease not renewed for this long belongs to nobody (ASCENDSIM_LEASE_S changes it)
LEASE_ENV = "ASCENDSIM_LEASE_S"
HELD_KEPT_S = 3600  # how long the list of what an owner holds is kept


def redis_client(url: str):
    import redis

    return redis.Redis.from_url(url)


class RedisLease:
    """A key held for its owner while a thread renews it; a dead owner's key expires after :func:`lease_s`.

    The owner is the request the job answers when the job is a Celery task (:func:`job_owner`): a task sent again
    for the same request (its worker was lost) holds at once what the lost one held, instead of waiting for the
    lease to run out or being refused as a second job of its session. Every key an owner holds is listed under
    ``ascendsim:held:<owner>``, so a cancelled job's keys are freed at once (:func:`release_all`)."""

    def __init__(self, client, key: str, waiting: Callable[[], None] | None, owner: str | None = None) -> None:
        self.client, self.key, self.waiting = client, key, waiting
        self.owner = owner or uuid.uuid4().hex
        self._stop = threading.Event()
        self._renew: threading.Thread | None = None

    def try_take(self) -> bool:
        ms = int(lease_s() * 1000)
        if not self.client.eval(_TAKE, 1, self.key, self.owner, ms):
            return False
        self.client.sadd(_held(self.owner), self.key)
        self.client.expire(_held(self.owner), HELD_KEPT_S)
        self._stop.clear()
        self._renew = threading.Thread(target=self._keep, daemon=True)
        self._renew.start()
        return True

    def _keep(self) -> None:
        while not self._stop.wait(lease_s() / 3):
            with contextlib.suppress(Exception):  # Redis away for a moment: the next turn tries again
                if not self.client.eval(_RENEW, 1, self.key, self.owner, int(lease_s() * 1000)):
                    return  # no longer ours (released by a cancel, or taken over after it ran out)

    def release(self) -> None:
        self._stop.set()
        with contextlib.suppress(Exception):
            self.client.eval(_RELEASE, 1, self.key, self.owner)
            self.client.srem(_held(self.owner), self.key)

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


# a lease is taken when free or already its owner's; renewed and released only by its owner (atomic in Redis)
_TAKE = """local v = redis.call('get', KEYS[1])
if v == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
if v then return 0 end
redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1"""
_RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0"
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"


def _held(owner: str) -> str:
    return f"ascendsim:held:{owner}"


def release_all(client, owner: str) -> None:
    """Free every lease ``owner`` holds (its job was cancelled: its worker may be gone before it could)."""
    for key in client.smembers(_held(owner)):
        client.eval(_RELEASE, 1, key, owner)
    client.delete(_held(owner))


def lease_s() -> float:
    """How long a Redis lease lives unless renewed (``ASCENDSIM_LEASE_S``, default :data:`LEASE_S`): how long a
    job lost with its machine holds its run, its slot and its session before another job takes them over."""
    try:
        value = float(os.environ.get(LEASE_ENV) or LEASE_S)
    except ValueError:
        return LEASE_S
    return value if value > 0 else LEASE_S


def job_owner() -> str | None:
    """The request the running Celery task answers (the first argument of a Dash job: its result key), or None
    outside one: who holds the task's leases."""
    import sys

    if "celery" not in sys.modules:
        return None
    from celery import current_task

    request = getattr(current_task, "request", None) if current_task else None
    args = getattr(request, "args", None) or ()
    return f"job:{args[0]}" if args and isinstance(args[0], str) else None


__all__ = ("LEASE_ENV", "LEASE_S", "POLL_S", "RedisLease", "job_owner", "lease_s", "redis_client", "release_all")
