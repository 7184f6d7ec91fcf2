"""The job launcher (``app/server/launcher.py``): background jobs are forked by a process made while the server was
single-threaded, never by a server thread while other threads hold locks."""

from __future__ import annotations

import gc
import os
import signal
import threading
import time

import diskcache
import psutil
import pytest

from app.collector import RUN_THRESHOLDS
from app.server.launcher import Launcher, LauncherGone


def _ended(pid: int) -> bool:
    """Whether process ``pid`` has ended (gone, or a zombie not yet reaped)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _wait(predicate, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def _job(folder: str):
    """What a Dash job does first: open the jobs' cache afresh and write to it."""

    def run(name: str, args: tuple) -> None:
        if name == "crash":
            raise RuntimeError("a job that fails")
        if name == "sleep":
            time.sleep(args[0])
        if name == "collector":  # what the job's garbage collector was set to
            diskcache.Cache(folder).set("collector", (gc.get_threshold(), gc.get_freeze_count()))
        diskcache.Cache(folder).set(f"done-{args[-1]}", os.getpid())

    return run


@pytest.fixture
def launched(tmp_path):
    launcher = Launcher(_job(str(tmp_path)))
    yield launcher, diskcache.Cache(str(tmp_path))
    launcher.close()


def test_jobs_start_and_finish_while_other_threads_are_inside_sqlite(launched):
    """The server's threads poll the jobs' cache many times a second; a job forked from one of them would inherit
    SQLite's mutex held and hang. Every job the launcher forks finishes."""
    launcher, cache = launched
    stop = threading.Event()

    def poll():
        i = 0
        while not stop.is_set():
            cache.set(f"poll-{i % 50}", b"x" * 1000)
            cache.get(f"poll-{(i + 7) % 50}")
            i += 1

    threads = [threading.Thread(target=poll) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        pids = {}
        for n in range(20):
            pids[n] = launcher.start("write", (n,))
        finished = [n for n in pids if _wait(lambda n=n: cache.get(f"done-{n}") is not None)]
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert finished == list(range(20))
    assert {cache.get(f"done-{n}") for n in pids} == set(pids.values())  # each job is the process it said


def test_a_job_is_the_launchers_child_and_is_cancelled_by_its_pid(launched):
    launcher, cache = launched
    pid = launcher.start("sleep", (60, "long"))
    job = psutil.Process(pid)
    assert job.ppid() == launcher.pid != os.getpid()
    os.kill(pid, signal.SIGKILL)  # what Dash's cancel does with the pid it was given
    assert _wait(lambda: _ended(pid))
    assert _wait(lambda: not psutil.pid_exists(pid))  # reaped by the launcher, not left a zombie
    assert cache.get("done-long") is None


def test_a_crashing_job_leaves_the_launcher_serving(launched):
    launcher, cache = launched
    launcher.start("crash", ("x",))
    launcher.start("write", ("after",))
    assert _wait(lambda: cache.get("done-after") is not None)


def test_the_launcher_ends_with_its_server_and_says_so_when_gone(tmp_path):
    launcher = Launcher(_job(str(tmp_path)))
    pid = launcher.pid
    assert psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    launcher.close()
    assert not psutil.pid_exists(pid)

    other = Launcher(_job(str(tmp_path)))
    os.kill(other.pid, signal.SIGKILL)
    os.waitpid(other.pid, 0)
    with pytest.raises(LauncherGone, match=f"process {other.pid}"):
        other.start("write", ("never",))
    other.close()


def test_a_result_is_delivered_although_its_job_is_reaped_while_dash_cleans_it_up(tmp_path, monkeypatch):
    """Dash's ``get_result`` takes the result out of the cache, then terminates the job; a job the launcher reaped
    in between (its ``children()`` raise NoSuchProcess) must not turn the poll into an error and lose the run."""
    from app.server.managers import LocalManager

    manager = LocalManager(tmp_path / "callbacks")
    manager.handle.set("result-key", {"run": 1})
    job = psutil.Popen(["sleep", "30"])

    def vanished(self, recursive=False):
        raise psutil.NoSuchProcess(self.pid)

    monkeypatch.setattr(psutil.Process, "children", vanished)
    try:
        assert manager.get_result("result-key", job.pid) == {"run": 1}
    finally:
        job.kill()
        job.wait()


def test_a_process_forked_after_the_launcher_makes_its_own(launched):
    """A server's worker forked from the process that made the launcher (gunicorn --preload) must not share its
    socket: its first job makes a launcher of its own, whose child the job is."""
    launcher, cache = launched
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker
        code = 1
        try:
            job = launcher.start("write", ("from-worker",))
            ok = psutil.Process(job).ppid() == launcher.pid  # the job is the new launcher's child
            os.write(write, f"{job} {launcher.pid} {int(ok)}".encode())
            if _wait(lambda: cache.get("done-from-worker") is not None):
                code = 0
            launcher.close()
        finally:
            os._exit(code)
    os.close(write)
    job, worker_launcher, ok = (int(x) for x in os.read(read, 100).split())
    os.close(read)
    _pid, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0 and ok == 1
    assert worker_launcher != launcher.pid  # the parent's launcher is untouched, and still serves
    assert cache.get("done-from-worker") == job
    launcher.start("write", ("after-fork",))
    assert _wait(lambda: cache.get("done-after-fork") is not None)


def test_a_request_sent_again_polls_the_job_it_started_and_a_taken_result_is_there_again(tmp_path):
    """What a page sends when an answer was lost with the worker that gave it (app/web/assets/player.js): the
    click sent again polls the job the first one started while it runs, and a poll sent again finds the result
    the first poll took. A new identical click once the job has answered gets a job of its own and its own answer,
    even while the answered job's process is still there."""
    from app.server.managers import LocalManager

    folder = tmp_path / "callbacks"
    manager = LocalManager(folder)

    def job(result_key, _progress_key, args, _context):
        time.sleep(args[0])
        diskcache.Cache(str(folder)).set(result_key, {"slept": args[0]})
        time.sleep(args[0])  # the process stays a while after its answer

    manager.func_registry = {"job": job}
    manager.start()
    try:
        first = manager.call_job_fn("k", job, (1.0,), {})
        assert manager.call_job_fn("k", job, (1.0,), {}) == first  # the click sent again: the same job
        assert _wait(lambda: manager.get_result("k", first) is not manager.UNDEFINED)
        assert manager.get_result("k", first) == {"slept": 1.0}  # a poll sent again: the result is still there
        assert not _ended(first)  # answered, its process still there
        again = manager.call_job_fn("k", job, (0.5,), {})  # a later click with the same inputs
        assert again != first
        assert manager.get_result("k", again) is manager.UNDEFINED  # not what the ended job answered
        assert _wait(lambda: manager.get_result("k", again) == {"slept": 0.5})
    finally:
        manager._launcher.close()


def test_an_answer_written_between_a_polls_two_looks_still_reaches_the_page(tmp_path):
    """Dash asks for the result, then whether the job runs: a job that wrote its answer and ended in between must
    count as running, so the next poll takes the answer (Dash's own manager said "ended": the page stopped
    polling and the run never arrived). Also: a finished job's process id is never killed again."""
    from app.server.managers import LocalManager

    folder = tmp_path / "callbacks"
    manager = LocalManager(folder)

    def job(result_key, _progress_key, args, _context):
        time.sleep(args[0])
        diskcache.Cache(str(folder)).set(result_key, {"slept": args[0]})

    manager.func_registry = {"job": job}
    manager.start()
    try:
        pid = manager.call_job_fn("k", job, (0.3,), {})
        assert manager.get_result("k", pid) is manager.UNDEFINED
        assert _wait(lambda: _ended(pid))
        assert manager.job_running(pid)
        assert manager.get_result("k", pid) == {"slept": 0.3}
        manager.terminate_job(pid)  # what Dash does next: the job has ended, so nothing is killed
    finally:
        manager._launcher.close()


def _poll(manager, key: str, job, timeout: float = 30.0):
    """What a page's polls get, as Dash asks: the result, or None when Dash would stop polling without one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = manager.get_result(key, job)
        if found is not manager.UNDEFINED:
            return found
        if not manager.job_running(job):
            return None
        time.sleep(0.05)
    raise AssertionError(f"no answer for {key} within {timeout} s")


def _marked_job(folder, marker):
    def job(result_key, _progress_key, args, _context):
        with open(marker, "a") as fh:
            fh.write(f"{os.getpid()}\n")
        if args[0] == "die":
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(args[0])
        diskcache.Cache(str(folder)).set(result_key, {"slept": args[0]})

    return job


def test_a_job_whose_process_is_killed_is_started_again_for_its_page_and_one_that_always_dies_is_given_up(tmp_path):
    """The out-of-memory killer or an operator ends a job's process: the page's next poll starts it again (at most
    TAKEOVERS times) and the run arrives; a job that always dies is given up and its answer says so; a cancelled
    job is not started again."""
    from app.server.jobs import LOST, TAKEOVERS
    from app.server.managers import LocalManager

    folder, marker = tmp_path / "callbacks", tmp_path / "ran"
    manager = LocalManager(folder)
    job = _marked_job(folder, marker)
    manager.func_registry = {"job": job}
    manager.start()

    def ran() -> list[int]:
        return [int(x) for x in marker.read_text().split()] if marker.exists() else []

    try:
        first = manager.call_job_fn("killed", job, (1.0,), {})
        assert _wait(ran)
        os.kill(first, signal.SIGKILL)
        assert _poll(manager, "killed", first) == {"slept": 1.0}
        assert len(ran()) == 2

        marker.unlink()
        doomed = manager.call_job_fn("doomed", job, ("die",), {})
        assert _poll(manager, "doomed", doomed) == {"background_callback_error": {"msg": LOST, "tb": ""}}
        assert len(ran()) == 1 + TAKEOVERS

        marker.unlink()
        cancelled = manager.call_job_fn("cancelled", job, (5.0,), {})
        assert _wait(ran)
        manager.terminate_job(cancelled)
        assert _poll(manager, "cancelled", cancelled) is None  # Dash stops polling, with no answer
        assert len(ran()) == 1
    finally:
        manager._launcher.close()


def test_every_worker_signs_with_one_secret_that_a_full_jobs_cache_does_not_evict(tmp_path):
    """Dash kept the secret that signs a page's job handles in the jobs' cache; once the cache was full it was
    evicted, and a worker started afterwards signed with a new one, so open pages' polls no longer verified."""
    from app.server.managers import LocalManager

    folder = tmp_path / "callbacks"
    first, second = LocalManager(folder), LocalManager(folder)
    secret = first.get_or_create_signing_secret(lambda: os.urandom(32))
    assert len(secret) == 32
    assert second.get_or_create_signing_secret(lambda: os.urandom(32)) == secret
    first.handle.clear()  # what eviction does to everything the cache holds
    restarted = LocalManager(folder)
    assert restarted.get_or_create_signing_secret(lambda: os.urandom(32)) == secret
    assert oct((tmp_path / "signing-secret").stat().st_mode & 0o777) == "0o600"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left behind


def test_what_the_warm_up_did_is_in_every_job_and_a_failing_one_leaves_the_launcher_serving(tmp_path):
    seen: dict = {}
    folder = str(tmp_path)

    def warm() -> None:
        seen["warm pid"] = os.getpid()

    def run(name: str, args: tuple) -> None:  # the job reports what its process inherited from the launcher
        diskcache.Cache(folder).set(f"done-{args[-1]}", seen.get("warm pid"))

    launcher = Launcher(run, warm)
    try:
        launcher.start("write", ("a",))
        launcher.start("write", ("b",))
        cache = diskcache.Cache(folder)
        assert _wait(lambda: cache.get("done-a") is not None and cache.get("done-b") is not None)
        assert cache.get("done-a") == cache.get("done-b") == launcher.pid  # warmed once, in the launcher
        assert "warm pid" not in seen  # and not in the server's process
    finally:
        launcher.close()

    def broken() -> None:
        raise RuntimeError("a warm-up that fails")

    launcher = Launcher(_job(folder), broken)
    try:
        launcher.start("write", ("after a failed warm-up",))
        assert _wait(lambda: diskcache.Cache(folder).get("done-after a failed warm-up") is not None)
    finally:
        launcher.close()


def test_a_job_collects_garbage_as_runs_need_and_never_walks_what_it_inherited(launched):
    """A job collects at the thresholds for runs (app.collector: a few collections, not hundreds) and finds
    the launcher's objects frozen (its collections neither walk nor copy what it inherited)."""
    launcher, cache = launched
    launcher.start("collector", ("c",))
    assert _wait(lambda: cache.get("done-c") is not None)
    thresholds, frozen = cache.get("collector")
    assert tuple(thresholds) == RUN_THRESHOLDS
    assert frozen > 1000  # every module the launcher imported, at least
