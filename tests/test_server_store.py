"""The run store heals and stays bounded; one run per key is computed however many jobs ask for it."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import threading
import time
from multiprocessing import get_context
from pathlib import Path

import pytest
from dash.exceptions import PreventUpdate

from app.server.jobs import Busy, Coordinator
from app.server.store import RunSpec, RunStore, StoreError
from app.web.runs import RunRequestError, Runs, usable

SMALL = {"length": 4096, "buffer_num": 2, "tile_length": 1024, "cores": 2}
LESSON_RUN = {"lesson": 1}


def _spec(seed: int = 0, numerics: bool = False) -> RunSpec:
    return RunSpec.of("vector-add", "ascend910b1", {**SMALL, "seed": seed}, numerics=numerics)


def _lesson_spec() -> RunSpec:
    return RunSpec.of("lesson:1", "ascend910b1", {})


@contextlib.contextmanager
def small_disk(path: Path, mb: int):
    """A real file system of ``mb`` MiB mounted at ``path`` (tmpfs; the tests run as root in CI)."""
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={mb}m", "tmpfs", str(path)], capture_output=True, check=False
    )
    if done.returncode != 0:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: cannot mount a small file system: {done.stderr.decode().strip()}")
        pytest.skip("mounting a small file system needs root")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


@pytest.mark.parametrize("damage", ["truncated", "empty", "zeroed", "flipped"])
@pytest.mark.parametrize("kind", ["run", "lesson"])
def test_a_damaged_file_is_set_aside_and_the_run_computed_again(tmp_path, damage, kind):
    spec = _spec() if kind == "run" else _lesson_spec()
    store = RunStore(tmp_path)
    if kind == "run":
        first = store.run(spec)
    else:
        from app.present.walkthrough import run_lesson
        from lessons.catalog import get

        first = run_lesson(get(1))
        store.put(spec, first)
    path = store.path(spec)
    data = path.read_bytes()
    damaged = {
        "truncated": data[: len(data) // 2],
        "empty": b"",
        "zeroed": bytes(len(data)),
        "flipped": data[: len(data) // 2] + bytes([data[len(data) // 2] ^ 0xFF]) + data[len(data) // 2 + 1 :],
    }[damage]
    path.write_bytes(damaged)
    other = RunStore(tmp_path)  # another worker: nothing in memory
    assert other.get(spec) is None  # never a 500: not served, set aside
    assert other.notes[spec.key][0] == "web.note.damaged"
    assert not path.exists() and len(list(tmp_path.glob("*.damaged-*"))) == 1
    if kind == "run":
        again = other.run(spec)
        assert len(again.trace) == len(first.trace) and path.is_file()  # computed again, and stored whole
        assert RunStore(tmp_path).get(spec) is not None


def test_the_folder_stays_under_its_cap_over_sixty_runs_and_lessons_stay(tmp_path):
    from app.present.walkthrough import run_lesson
    from lessons.catalog import get

    probe = RunStore(tmp_path / "probe")
    probe.run(_spec())
    size = probe.path(_spec()).stat().st_size
    cap = 10 * size + size // 2
    store = RunStore(tmp_path / "code", disk_bytes=cap + 200_000)
    store.put(_lesson_spec(), run_lesson(get(1)))
    lesson_size = store.path(_lesson_spec()).stat().st_size
    store.disk_bytes = cap + lesson_size
    for seed in range(60):
        store.run(_spec(seed))
        assert store.disk_use() <= store.disk_bytes, seed
    assert store.path(_lesson_spec()).is_file()  # a lesson's run is the last to go
    assert store.path(_spec(59)).is_file() and not store.path(_spec(0)).is_file()  # least recently used first


def test_runs_of_older_code_are_evicted_first(tmp_path):
    old = tmp_path / "0123456789abcdef"  # a folder of another code version
    RunStore(old).run(_spec(1))
    assert any(old.glob("*.npz"))
    store = RunStore(tmp_path / "fedcba9876543210", disk_bytes=1)
    store.run(_spec(2))
    assert not old.exists()  # emptied and removed, before anything of this code's


def test_a_full_disk_is_one_line_leaves_nothing_behind_and_heals_when_freed(tmp_path):
    with small_disk(tmp_path / "disk", 4) as disk:
        spec = _spec(numerics=True)
        scratch = RunStore(tmp_path / "scratch")
        result = scratch.run(spec)
        size = scratch.path(spec).stat().st_size
        filler = disk / "filler"
        filler.write_bytes(b"x" * (4 * 2**20 - size // 2))  # less room left than the run needs
        store = RunStore(disk / "code")
        with pytest.raises(StoreError) as info:
            store.put(spec, result)
        text = str(info.value)
        assert "\n" not in text and str(disk / "code") in text and "the disk is full" in text and "MB" in text
        assert not any((disk / "code").glob("*.npz")) and not any((disk / "code").glob(".*.tmp"))
        assert RunStore(disk / "code").get(spec) is None  # the failure was not stored as a result
        filler.unlink()  # freed: the same run is stored now
        store.put(spec, result)
        assert RunStore(disk / "code").get(spec) is not None


def test_a_read_only_folder_is_said_in_one_line(tmp_path):
    with small_disk(tmp_path / "disk", 4) as disk:
        (disk / "code").mkdir()
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        why = usable(disk / "code")
        assert why and "\n" not in why and "read-only" in why and str(disk / "code") in why
        runs = Runs(disk)  # a server whose folder is read-only still starts
        assert runs.problem and "read-only" in runs.problem
        request = {"scenario": "vector-add", "params": SMALL, "numerics": False}
        with pytest.raises(RunRequestError, match="read-only"):
            runs.compute(request, "session-aaaaaaaa", lambda phase, values: None)


def test_a_store_that_turns_read_only_mid_session_keeps_what_it_has_and_says_why_in_both_languages(tmp_path):
    """The runs folder is remounted read-only while the server runs: the runs already stored are still served
    (by this worker and by another one), a new run is refused in one line naming the folder and the need, in the
    page's language, and nothing half-written is left; once writable again the same run is made."""
    with small_disk(tmp_path / "disk", 16) as disk:
        runs = Runs(disk)
        kept = {"scenario": "vector-add", "params": SMALL, "numerics": False}
        runs.compute(kept, "session-aaaaaaaa", lambda phase, values: None)
        runs.load(LESSON_RUN)
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        try:
            new = {"scenario": "vector-add", "params": {**SMALL, "seed": 3}, "numerics": False}
            with pytest.raises(RunRequestError) as info:
                runs.compute(new, "session-bbbbbbbb", lambda phase, values: None)
            en, zh = info.value.text("en"), info.value.text("zh")
            assert (
                "read-only" in en and "只读" in zh and all(str(runs.code_dir) in t and "\n" not in t for t in (en, zh))
            )
            other = Runs(disk)  # another worker, nothing in its memory
            assert other.problem and "read-only" in other.problem
            assert other.load(kept).events > 0 and other.load(LESSON_RUN).events > 0  # nothing lost
            assert not list(runs.code_dir.glob(".*.tmp"))
        finally:
            subprocess.run(["mount", "-o", "remount,rw", str(disk)], check=True)
        runs.compute(new, "session-cccccccc", lambda phase, values: None)
        assert Runs(disk).stored(Runs(disk).spec(new))


def _compute(directory: str, request: dict, counter: str, session: str) -> None:
    import engine.scenarios.runner

    real = engine.scenarios.runner.run_scenario

    def counted(*args, **kwargs):
        with open(counter, "a") as fh:
            fh.write("x")
        time.sleep(0.5)  # long enough for the other job to arrive while this one computes
        return real(*args, **kwargs)

    engine.scenarios.runner.run_scenario = counted
    Runs(directory).compute(request, session, lambda phase, values: None)


def test_two_identical_requests_at_once_compute_the_run_once(tmp_path):
    request = {"scenario": "vector-add", "params": {**SMALL, "seed": 7}, "numerics": False}
    counter = tmp_path / "simulations"
    Runs(tmp_path / "runs")  # the code folder exists before the jobs start
    ctx = get_context("fork")
    jobs = [
        ctx.Process(target=_compute, args=(str(tmp_path / "runs"), request, str(counter), f"session{i}aaaaaaaa"))
        for i in range(2)
    ]
    for job in jobs:
        job.start()
    for job in jobs:
        job.join(60)
    assert [job.exitcode for job in jobs] == [0, 0]
    assert counter.read_text() == "x"  # one simulation; the other job joined it
    assert Runs(tmp_path / "runs").stored(Runs(tmp_path / "runs").spec(request))


def test_a_session_runs_one_job_at_a_time_and_a_few_a_minute(tmp_path):
    jobs = Coordinator(tmp_path, per_minute=3)
    with jobs.session("tab1aaaaaaaa"):
        with pytest.raises(Busy) as info, jobs.session("tab1aaaaaaaa"):
            pass
        assert info.value.key == "web.busy.session"
        with jobs.session("tab2bbbbbbbb"):  # another tab is not held up
            pass
    for _ in range(2):
        with jobs.session("tab1aaaaaaaa"):
            pass
    with pytest.raises(Busy) as info, jobs.session("tab1aaaaaaaa"):
        pass
    assert info.value.key == "web.busy.rate" and info.value.values == {"n": 3}


def test_the_same_requests_job_started_again_passes_the_session_while_the_first_still_runs(tmp_path):
    """A worker killed after it forked a job but before it kept the job's process id: the page sends its request
    again, another worker starts the job again, and the first one, orphaned, still holds the session. The second
    must join the first's computation, not tell the trainee that a run of theirs is going."""
    jobs = Coordinator(tmp_path, per_minute=4)
    with jobs.session("tab1aaaaaaaa", "run-a"):
        with jobs.session("tab1aaaaaaaa", "run-a"):
            pass
        for other in ("run-b", None):
            with pytest.raises(Busy) as info, jobs.session("tab1aaaaaaaa", other):
                pass
            assert info.value.key == "web.busy.session"
    with pytest.raises(Busy), jobs.session("tab1aaaaaaaa", "run-b"), jobs.session("tab1aaaaaaaa", "run-a"):
        pass  # the work a job once held is not a pass once it has ended
    for _ in range(2):  # the job that joined did not count as a start: two more fit in the minute's four
        with jobs.session("tab1aaaaaaaa", "run-c"):
            pass
    with pytest.raises(Busy) as info, jobs.session("tab1aaaaaaaa", "run-d"):
        pass
    assert info.value.key == "web.busy.rate"


def test_slots_bound_the_jobs_and_tell_each_how_many_are_ahead(tmp_path):
    jobs = Coordinator(tmp_path, slots=1, queue_max=2)
    seen = []
    with jobs.slot():
        ctx = get_context("fork")
        waiter = ctx.Process(target=_wait_for_slot, args=(str(tmp_path), str(tmp_path / "ahead")))
        waiter.start()
        deadline = time.time() + 10
        while not (tmp_path / "ahead").exists() and time.time() < deadline:
            time.sleep(0.05)
        seen.append((tmp_path / "ahead").read_text())
    waiter.join(20)
    assert waiter.exitcode == 0 and seen[0].startswith("0")  # queued, nobody ahead of it, then it ran
    assert (tmp_path / "ran").exists()


def _wait_for_slot(folder: str, out: str) -> None:
    jobs = Coordinator(Path(folder), slots=1, queue_max=2)

    def waiting(ahead: int) -> None:
        if not os.path.exists(out):  # whole or not at all: the test reads it as soon as it exists
            Path(out + ".part").write_text(str(ahead))
            os.replace(out + ".part", out)

    with jobs.slot(waiting):
        Path(folder, "ran").touch()


def test_the_first_views_are_prepared_in_the_job_as_a_request_would_render_them_and_leave_with_their_run(tmp_path):
    from app.web import render

    runs = Runs(tmp_path, disk_bytes=64 << 20)
    request = {"scenario": "matmul", "profile": "ascend910b1", "params": {"m": 128, "n": 64, "k": 64}}
    phases = []
    runs.compute(request, "s" * 16, lambda phase, _v: phases.append(phase), "zh")
    assert phases[-1] == "preparing"
    loaded = runs.load(request)
    meta = render.meta(loaded)
    key = (0, meta["window"], meta["cores"][0], "zh", ())
    kept = runs.prepared(loaded, key)
    assert kept is not None and kept == json.loads(json.dumps(render.window(loaded, *key)))
    assert runs.prepared(loaded, (0, meta["window"], meta["cores"][0], "en", ())) is None  # only the job's language
    assert runs.prepared(loaded, (1, meta["window"], meta["cores"][0], "zh", ())) is None
    from plotly.utils import PlotlyJSONEncoder

    from app.web import player

    views = runs.prepared_views(request, "zh")  # the run's views too (its whole analysis: no request does it)
    assert views == json.loads(json.dumps(render.run_views(loaded, "zh", True), cls=PlotlyJSONEncoder))
    assert runs.prepared_views(request, "en") is None
    doc = json.loads(runs.views_path(runs.spec(request), "zh").read_text())
    doc["views"][3] = "drawn by the job"
    runs.views_path(runs.spec(request), "zh").write_text(json.dumps(doc))
    assert player.Callbacks(runs).run_views(meta, "zh", request)[3] == "drawn by the job"  # served, not drawn
    spec = runs.spec(request)
    runs.store.disk_bytes = 0  # everything goes: the prepared views with their run
    runs.store.evict()
    assert not runs.views_path(spec, "zh").exists() and not runs.store.path(spec).exists()


def test_the_job_plays_its_run_with_the_inputs_the_run_drew_and_checks_nothing_it_does_not_show(tmp_path, monkeypatch):
    """The job renders a run's first views with the A and B its scenario drew (drawing them again cost a 2048^3
    job 0.06 s), and does not compare C with numpy (a verdict no playground view shows: 0.1 s); another worker,
    which draws A and B from the run's parameters, renders the same views."""
    from plotly.utils import PlotlyJSONEncoder

    from app.web import render
    from engine.scenarios import kernels

    drawn, compared = [], []
    draw, tolerance = RunSpec.inputs, kernels.matmul_tolerance
    monkeypatch.setattr(RunSpec, "inputs", lambda spec: drawn.append(spec) or draw(spec))
    monkeypatch.setattr(kernels, "matmul_tolerance", lambda *a: compared.append(a) or tolerance(*a))
    request = {"scenario": "matmul", "profile": "ascend910b1", "params": {"m": 96, "n": 160, "k": 64}, "numerics": True}
    runs = Runs(tmp_path)
    runs.compute(request, "s" * 16, lambda _p, _v: None, "en")
    assert drawn == [] and compared == []
    views = runs.prepared_views(request, "en")
    assert views[2]["data"] and any(trace.get("z") for trace in views[2]["data"])  # A and B drawn as heatmaps
    other = Runs(tmp_path)
    loaded = other.load(request)
    assert drawn == [runs.spec(request)]
    assert views == json.loads(json.dumps(render.run_views(loaded, "en", True), cls=PlotlyJSONEncoder))


def test_a_worker_answers_a_playground_runs_first_requests_from_its_job_without_loading_it(tmp_path):
    """The page's first three questions about a playground run (its description, its views, its first window with
    the timeline and the pipeline) are answered from what the run's job kept: another worker answers them without
    loading the run (the 8192^3 run took 1.3 s to read and index), the same as from the loaded run. Anything else
    (another window, a page that has a viewport of the run already, another language) loads it."""
    from plotly.utils import PlotlyJSONEncoder

    from app.web import player
    from app.web.layout import FOLLOWING

    def same(x) -> object:
        return json.loads(json.dumps(x, cls=PlotlyJSONEncoder))

    request = {"scenario": "matmul", "profile": "ascend910b1", "params": {"m": 192, "n": 128, "k": 256}}
    Runs(tmp_path).compute(request, "s" * 16, lambda _p, _v: None, "zh")
    other = Runs(tmp_path)  # another worker: nothing in its memory
    loads = []
    other.load = lambda run: loads.append(run) or (_ for _ in ()).throw(AssertionError("loaded"))
    preloads = []
    other.preload = preloads.append
    cb = player.Callbacks(other)
    described = cb.load_run(request, "zh", None)
    meta, expand = described[0], described[6]
    views = cb.run_views(meta, "zh", request)
    assert preloads == []  # not while the page waits for its first window
    for box in ("tl-expand", "tl-follow"):  # set by the description: the first window draws the timeline with them
        with pytest.raises(PreventUpdate):
            cb.zoom(None, None, None, expand, FOLLOWING, request, 0, "zh", None, trigger=box)
    req = {"run": meta["key"], "core": meta["cores"][0], "lang": "zh", "bps": [], "first": 0, "count": meta["window"]}
    req = {**req, "step": 0, "sig": "page's own"}
    answer = cb.fetch_window(req, request, expand, FOLLOWING, None)
    assert loads == [] and preloads == [request]  # loaded afterwards, in a thread, for the next window
    assert answer[0]["sig"] == "page's own"

    fresh = Runs(tmp_path)  # the same questions answered from the loaded run, nothing kept
    fresh.views_path(fresh.spec(request), "zh").unlink()
    loaded_cb = player.Callbacks(fresh)
    assert same(described) == same(loaded_cb.load_run(request, "zh", None))
    assert same(views) == same(loaded_cb.run_views(meta, "zh", request))
    assert same(answer) == same(loaded_cb.fetch_window(req, request, expand, FOLLOWING, None))

    for changed in ({**req, "first": 1}, {**req, "lang": "en"}, {**req, "bps": [{"kind": "COMPUTE"}]}):
        assert other.prepared_answer(request, changed, expand, FOLLOWING, None) is None
    assert other.prepared_answer(request, req, expand, [], None) is None  # not following the cursor
    assert other.prepared_answer(request, req, expand, FOLLOWING, answer[1]) is None  # a viewport of the run
    assert other.prepared_meta(request, "en") is None and other.prepared_views({"lesson": 1}, "zh") is None
    other.store.path(other.spec(request)).unlink()  # a run whose file went: described as not finished
    assert other.prepared_meta(request, "zh") is None


def test_a_job_waiting_for_a_slot_reports_each_change_once(tmp_path):
    """A waiting job looks for a slot ten times a second; each report is a write to the jobs' cache that every
    waiting page's poll reads, so only a change is reported."""
    runs = Runs(tmp_path / "runs")
    said: list[tuple[str, dict]] = []
    request = {"scenario": "vector-add", "params": {**SMALL, "seed": 11}, "numerics": False}
    with contextlib.ExitStack() as held:
        for _ in range(runs.coordinator.slots):  # every slot taken: the job queues
            held.enter_context(runs.coordinator.slot())
        job = threading.Thread(target=runs.compute, args=(request, "tab3cccccccc", lambda p, v: said.append((p, v))))
        job.start()
        deadline = time.monotonic() + 10
        while not said and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)  # ten looks at the slots
    job.join(60)
    phases = [p for p, _v in said]
    assert phases.count("queued") == 1 and said[0] == ("queued", {"ahead": 0})
    assert "simulating" in phases and runs.stored(runs.spec(request))


def test_jobs_waiting_for_a_slot_are_served_first_come_first_served(tmp_path):
    """A class's runs arrive together: the one that queued first runs first, so no run waits behind later ones."""
    jobs = Coordinator(tmp_path, slots=1, queue_max=8)
    order: list[str] = []

    def job(name: str) -> None:
        with jobs.slot():
            order.append(name)
            time.sleep(0.03)

    threads = []
    with jobs.slot():
        for name in "abcdef":
            threads.append(threading.Thread(target=job, args=(name,)))
            threads[-1].start()
            time.sleep(0.04)  # each queues after the one before it
        time.sleep(0.3)
    for t in threads:
        t.join(20)
    assert order == list("abcdef")


def test_a_preload_waits_before_it_loads_the_run(tmp_path):
    """The run a page had its first window of from the job is loaded in a thread, but only once that answer has
    had time to go out (the load holds the interpreter); then the next window finds it loaded."""
    import time

    request = {"scenario": "matmul", "profile": "ascend910b1", "params": {"m": 64, "n": 64, "k": 64}}
    Runs(tmp_path).compute(request, "s" * 16, lambda _p, _v: None, "en")
    other = Runs(tmp_path)
    key = other.spec(request).key
    other.preload(request, after_s=0.6)
    time.sleep(0.3)
    assert key not in other._loaded and key not in other._building
    deadline = time.monotonic() + 30
    while key not in other._loaded and time.monotonic() < deadline:
        time.sleep(0.05)
    assert key in other._loaded


def test_the_job_frees_its_simulation_before_it_prepares_the_views(tmp_path, monkeypatch):
    """A finished simulation is a graph of reference cycles that only a full collection frees (an 8192^3 run's held
    about 100 MB in its job while the replay was built on top); the job frees it before preparing the views."""
    import weakref

    from engine.simulation import Simulation

    made, alive_at_prepare = [], []
    init, prepare = Simulation.__init__, Runs.prepare

    def recorded_init(self, *a, **k):
        made.append(weakref.ref(self))
        init(self, *a, **k)

    def recorded_prepare(self, *a, **k):
        alive_at_prepare.extend(ref() is not None for ref in made)
        return prepare(self, *a, **k)

    monkeypatch.setattr(Simulation, "__init__", recorded_init)
    monkeypatch.setattr(Runs, "prepare", recorded_prepare)
    params = {"m": 256, "n": 128, "k": 192}
    request = {"scenario": "matmul", "profile": "ascend910b1", "params": params, "numerics": True}
    Runs(tmp_path).compute(request, "s" * 16, lambda _p, _v: None, "en")
    assert alive_at_prepare == [False]
