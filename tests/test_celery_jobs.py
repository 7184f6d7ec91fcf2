"""The class server's job path (``ASCENDSIM_REDIS_URL``: Celery workers over Redis) keeps the default path's
promises: a request sent again joins its running task, a result stays after a poll took it, a task lost with its
worker (its process, or the whole worker as when a machine dies) is sent again and its run arrives, a task that
always kills its worker is given up and the page told, a cancel frees the session at once, and one run per key is
computed across machines.

A real ``redis-server`` and real Celery workers on 127.0.0.1 (tests/celery_helpers.py); the jobs are the small
ones of tests/celery_probe.py, sent and polled through the same manager a web worker uses, as Dash does.
"""

from __future__ import annotations

import os
import signal
import tempfile
import time
from multiprocessing import get_context
from pathlib import Path

import pytest
from celery_helpers import Worker, redis_server
from test_server_store import SMALL, _compute

from app.server import redis_jobs
from app.server.jobs import Busy, Coordinator
from app.server.leases import LEASE_ENV

pytestmark = pytest.mark.slow

# seconds a lost task's beat and leases outlive it here (30 on a real server); the beat is renewed every third of
# it, and with 2 s a loaded CI machine (two test processes, twenty browsers in the other) once held a renewal back
# past the lease: a task still running was taken as lost and run again
LEASE = "5"


@pytest.fixture(scope="module")
def redis_url():
    with redis_server() as url, pytest.MonkeyPatch.context() as mp:
        mp.setenv("ASCENDSIM_REDIS_URL", url)
        mp.setenv(LEASE_ENV, LEASE)
        yield url


@pytest.fixture(scope="module")
def worker(redis_url, tmp_path_factory):
    log = tmp_path_factory.mktemp("celery") / "worker.log"
    w = Worker("celery_probe", {"ASCENDSIM_REDIS_URL": redis_url, LEASE_ENV: LEASE}, log, concurrency=2)
    yield w
    w.stop()


@pytest.fixture(scope="module")
def manager(worker):
    import celery_probe

    return celery_probe.manager()


def _send(manager, job: str, key: str, *args):
    return manager.call_job_fn(key, manager.func_registry[job], list(args), {})


def _poll(manager, key: str, job: str, timeout: float = 60):
    """What a page's polls get, as Dash asks (the result, else whether the job runs): the result, or None when
    Dash would stop polling without one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = manager.get_result(key, job)
        if found is not manager.UNDEFINED:
            return found
        if not manager.job_running(job):
            return None
        time.sleep(0.1)
    raise AssertionError(f"no answer for {key} within {timeout} s")


def _ran(marker: Path) -> list[int]:
    return [int(x) for x in marker.read_text().split()] if marker.exists() else []


def _wait(predicate, timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_a_request_sent_again_joins_its_task_and_a_taken_result_is_there_again(manager, tmp_path):
    marker = tmp_path / "ran"
    first = _send(manager, "sleep", "join", 1.0, str(marker))
    assert _send(manager, "sleep", "join", 1.0, str(marker)) == first  # the click sent again: the same task
    assert _poll(manager, "join", first) == {"slept": 1.0}
    assert manager.get_result("join", first) == {"slept": 1.0}  # a poll sent again: the result is still there
    assert len(_ran(marker)) == 1
    manager.redis.set(redis_jobs._beat(first), 1, px=5000)  # its beat outlives it a moment (stopped after its answer)
    again = _send(manager, "sleep", "join", 0.2, str(marker))  # a later click with the same inputs
    assert again != first and manager.get_result("join", again) is manager.UNDEFINED
    assert _poll(manager, "join", again) == {"slept": 0.2}


def test_an_answer_written_between_a_polls_two_looks_still_reaches_the_page(manager, tmp_path):
    """Dash asks for the result, then whether the job runs: a task that answered and ended in between counts as
    running, so the next poll takes its answer (Dash's own manager said "ended" and the page stopped polling)."""
    job = _send(manager, "sleep", "race", 0.5, str(tmp_path / "ran"))
    assert manager.get_result("race", job) is manager.UNDEFINED
    assert _wait(lambda: manager.handle.AsyncResult(job).state == "SUCCESS")
    assert manager.job_running(job)
    assert manager.get_result("race", job) == {"slept": 0.5}


@pytest.mark.parametrize("after_s", [0.5, 1.0])
def test_a_task_whose_worker_process_is_killed_is_sent_again_and_answers(manager, worker, tmp_path, after_s):
    marker = tmp_path / "ran"
    job = _send(manager, "sleep", f"killed-{after_s}", 3.0, str(marker))
    assert _wait(lambda: _ran(marker))
    time.sleep(after_s)
    os.kill(_ran(marker)[0], signal.SIGKILL)
    assert _poll(manager, f"killed-{after_s}", job) == {"slept": 3.0}
    assert len(_ran(marker)) == 2  # sent once more, on a process of the worker that replaced the lost one


def test_a_task_lost_with_its_whole_worker_is_sent_again_to_another(manager, worker, redis_url, tmp_path):
    """kill -9 of the worker and its pool, as when its machine dies: the task stops beating, and the next poll after
    the lease has run out sends it again; the worker started meanwhile runs it."""
    marker = tmp_path / "ran"
    job = _send(manager, "sleep", "machine", 3.0, str(marker))
    assert _wait(lambda: _ran(marker))
    time.sleep(1.0)
    worker.kill()
    other = Worker("celery_probe", {"ASCENDSIM_REDIS_URL": redis_url, LEASE_ENV: LEASE}, worker.log, concurrency=2)
    try:
        assert _poll(manager, "machine", job, timeout=90) == {"slept": 3.0}
        assert len(_ran(marker)) == 2
        assert _ran(marker)[1] in other.pool()
    finally:
        worker.__dict__.update(other.__dict__)  # the module's worker is the new one from now on


def test_a_task_that_always_kills_its_worker_is_given_up_and_the_page_told(manager, tmp_path):
    from app.server.jobs import LOST, TAKEOVERS

    marker = tmp_path / "ran"
    job = _send(manager, "die", "poison", str(marker))
    answer = _poll(manager, "poison", job, timeout=90)
    assert answer == {"background_callback_error": {"msg": LOST, "tb": ""}}
    assert len(_ran(marker)) == 1 + TAKEOVERS  # not forever


def test_a_cancelled_task_frees_its_session_at_once(manager, tmp_path):
    job = _send(manager, "session", "held", str(tmp_path), "tab1aaaaaaaa", 30.0)
    assert _wait((tmp_path / "holding").exists)
    jobs = Coordinator(tmp_path / "here")
    with pytest.raises(Busy) as info, jobs.session("tab1aaaaaaaa"):
        pass
    assert info.value.key == "web.busy.session"
    manager.terminate_job(job)
    with jobs.session("tab1aaaaaaaa"):  # not after the 30 s job, not after the lease: now
        pass
    assert _poll(manager, "held", job) is None  # cancelled: Dash stops polling with no answer


# -- the guards in Redis, without Celery ---------------------------------------------------------------------------
def _compute_on_its_own_machine(directory: str, request: dict, counter: str, session: str, machine: str) -> None:
    tempfile.tempdir = machine  # each "machine" has its own temporary folder (where local locks would be)
    _compute(directory, request, counter, session)


def test_two_machines_asking_for_one_run_compute_it_once(redis_url, tmp_path):
    request = {"scenario": "vector-add", "params": {**SMALL, "seed": 11}, "numerics": False}
    counter = tmp_path / "simulations"
    machines = [tmp_path / "machine-a", tmp_path / "machine-b"]
    for m in machines:
        m.mkdir()
    ctx = get_context("fork")
    jobs = [
        ctx.Process(
            target=_compute_on_its_own_machine,
            args=(str(tmp_path / "runs"), request, str(counter), f"session{i}aaaaaaaa", str(machines[i])),
        )
        for i in range(2)
    ]
    for job in jobs:
        job.start()
    for job in jobs:
        job.join(60)
    assert [job.exitcode for job in jobs] == [0, 0]
    assert counter.read_text() == "x"  # one simulation; the job on the other machine joined it


def _hold_run(folder: str, key: str, held: str) -> None:
    with Coordinator(Path(folder)).single(key):
        Path(held).touch()
        time.sleep(60)


def test_a_run_held_by_a_job_lost_with_its_machine_is_taken_over_when_its_lease_runs_out(redis_url, tmp_path):
    held = tmp_path / "held"
    holder = get_context("fork").Process(target=_hold_run, args=(str(tmp_path / "a"), "run-key", str(held)))
    holder.start()
    assert _wait(held.exists)
    os.kill(holder.pid, signal.SIGKILL)
    holder.join()
    waited = []
    t0 = time.monotonic()
    with Coordinator(tmp_path / "b").single("run-key", lambda: waited.append(1)) as mine:
        took = time.monotonic() - t0
    assert not mine and waited  # it waited for the holder, then went on (and computes the run itself)
    assert took < float(LEASE) + 2


def test_a_session_runs_one_job_at_a_time_and_a_few_a_minute_across_machines(redis_url, tmp_path):
    a, b = Coordinator(tmp_path / "a", per_minute=3), Coordinator(tmp_path / "b", per_minute=3)
    with a.session("tab9aaaaaaaa"), pytest.raises(Busy) as info, b.session("tab9aaaaaaaa"):
        pass
    assert info.value.key == "web.busy.session"
    for jobs in (b, a):
        with jobs.session("tab9aaaaaaaa"):
            pass
    with pytest.raises(Busy) as info, b.session("tab9aaaaaaaa"):
        pass
    assert info.value.key == "web.busy.rate" and info.value.values == {"n": 3}
