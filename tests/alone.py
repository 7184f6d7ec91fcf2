"""Tests that run alone (the ``alone`` marker), on a suite that runs on two pytest-xdist workers.

Most of the suite's wall time is waiting for browsers, servers and sandboxes, not computing, so it runs on two
workers (pyproject.toml). A test marked ``alone`` measures time or speed: while it runs (setup, call and teardown)
no other test runs. Every other test holds a shared lock on a "room" while it runs; an ``alone`` test holds it
exclusively. It first takes a "turnstile" that every test passes on its way in and keeps it, so that the other
worker cannot start test after test in front of it while it waits for the room to empty.
"""

from __future__ import annotations

import fcntl

import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    workerinput = getattr(item.config, "workerinput", None)
    if workerinput is None:  # one process (``-n 0``): nothing runs beside it
        return (yield)
    folder = item.config._tmp_path_factory.getbasetemp().parent  # the run's, shared by its workers (and cleaned up)
    alone = item.get_closest_marker("alone") is not None
    with open(folder / "tests.turnstile", "a") as turnstile, open(folder / "tests.room", "a") as room:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        try:
            fcntl.flock(room, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        finally:
            if not alone:
                fcntl.flock(turnstile, fcntl.LOCK_UN)
        try:
            return (yield)
        finally:
            fcntl.flock(room, fcntl.LOCK_UN)
            if alone:
                fcntl.flock(turnstile, fcntl.LOCK_UN)
