"""A class on one server: every run arrives (late polls, a killed worker), the store heals, nothing is a 500.

Real servers in child processes (``ascendsim web`` and ``gunicorn -w 2``), Debian's Chromium through
Playwright, and plain HTTP for what a browser would never send.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from celery_helpers import Worker, redis_server
from test_server_store import small_disk
from web_browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, ROOT, VIEWPORT, Server, Tab, need_browser

from app.present.messages import t as msg
from engine.scenarios.runner import run_scenario

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def browser():
    need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _play(tab: Tab, m: int, n: int, k: int, numerics: bool) -> None:
    p = tab.page
    p.wait_for_selector("#pg-params .param")
    for field, value in (("pg-m", m), ("pg-n", n), ("pg-k", k)):
        p.fill(f"#{field}", str(value))
    if p.is_checked("#pg-numerics input") != numerics:
        p.click("#pg-numerics input")
    p.click("#pg-run")


@functools.cache  # the 8192^3 run takes 6 s to count: once for all the killed-worker variants
def _events(m: int, n: int, k: int, numerics: bool = False) -> int:
    return len(run_scenario("matmul", numerics=numerics, m=m, n=n, k=k).result.trace)


# -- polls answered late ------------------------------------------------------------------------------------
# each variant its own run (a stored one comes at once), long enough for several of its polls: an 8192^3
# timing-only job became short enough (5 s) that CI saw only 3 polls at 1 s each, so that variant has the longest
# job the playground takes (4096^3 with numerics: 6.4 s simulated here)
LATE = [(0.35, (8192, 8192, 7680), False), (1.0, (4096, 4096, 4096), True)]  # (delay, shape, numerics)


@pytest.mark.parametrize(("delay_s", "shape", "numerics"), LATE)
def test_a_run_arrives_when_every_poll_is_answered_late(plain_server, delay_s, shape, numerics):
    """The old page fired its poll every 300 ms whether or not the last one had been answered, and dropped the
    answers it had superseded: once a poll took 350 ms a finished run never appeared. Also: the job's polls back
    off while it runs (assets/player.js), one in flight at a time."""
    need_browser()
    from playwright.async_api import async_playwright

    server = plain_server

    async def scenario() -> tuple[float, int]:
        async with async_playwright() as p:
            b = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = await (await b.new_context(viewport=VIEWPORT)).new_page()
            polls = [0]
            sent: list[float] = []  # when each of the job's polls left the page
            answered: list[float] = []  # when each one's answer reached it
            page.on("response", lambda r: answered.append(time.monotonic()) if "cacheKey=" in r.url else None)

            async def late(route):
                if "_dash-update-component" in route.request.url:
                    polls[0] += 1
                    if "cacheKey=" in route.request.url:
                        sent.append(time.monotonic())
                    await asyncio.sleep(delay_s)
                await route.continue_()

            await page.route("**/*", late)
            await page.goto(server.url + "/playground")
            await page.wait_for_selector("#pg-params .param")
            for field, value in zip(("pg-m", "pg-n", "pg-k"), shape, strict=True):
                await page.fill(f"#{field}", str(value))
            if await page.is_checked("#pg-numerics input") != numerics:
                await page.click("#pg-numerics input")
            t0 = time.monotonic()
            await page.click("#pg-run")
            await page.wait_for_function(  # a playground run of hundreds of thousands of events is drawn
                "() => +(((document.getElementById('step-label') || {}).innerText || '').match(/ \\/ (\\d+)/)"
                " || [0, 0])[1] >= 400000",
                timeout=180_000,
            )
            took = time.monotonic() - t0
            shown = await page.inner_text("#step-label")
            await b.close()
            return took, polls[0], shown, sent, answered

    took, polls, shown, sent, answered = asyncio.run(scenario())
    assert shown.endswith(f" / {_stored_events(server.runs, shape, numerics)}")  # this run
    print(f"\n{delay_s * 1000:.0f} ms late polls: the {shape} run arrived after {took:.1f} s, {polls} requests")
    assert polls < took / delay_s + 40  # one poll in flight at a time: not 3.3 a second whatever happens
    # how long the page waited after each answer before it polled again (the server's time is not in it)
    waits = [nxt - got for got, nxt in zip(answered, sent[1:], strict=False)]
    print(f"waits before a poll: first {[round(w, 2) for w in waits[:4]]}, last {[round(w, 2) for w in waits[-4:]]}")
    assert len(waits) >= 4, "the job was too short to see its polls back off"
    assert all(w > 0 for w in waits)  # one poll in flight: the next leaves after the last one's answer
    slope = statistics.linear_regression(range(len(waits)), waits).slope
    assert slope > 0.03  # later polls wait longer: 60 ms more each in assets/player.js, at least half of it seen


@pytest.mark.slow
def test_a_lost_answer_is_asked_for_again_and_the_page_says_so(tmp_path):
    """A worker that dies while it answers leaves the page without an answer: the page sends the request again,
    the run arrives, and a note says an answer was lost and asked for again (in the page's language)."""
    need_browser()
    from playwright.async_api import async_playwright

    server = Server(tmp_path)
    want = _events(256, 256, 256, numerics=False)

    async def scenario() -> tuple[int, str, str, bool]:
        async with async_playwright() as p:
            b = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = await (await b.new_context(viewport=VIEWPORT)).new_page()
            lost = [0]

            async def lose_once(route):  # the first answer after Run is lost, as with a worker killed meanwhile
                body = route.request.post_data_buffer or b""
                if "_dash-update-component" in route.request.url and b'"pg-run"' in body and not lost[0]:
                    lost[0] += 1
                    await route.abort("connectionreset")
                    return
                await route.continue_()

            await page.goto(server.url + "/playground")
            await page.wait_for_selector("#pg-params .param")
            hidden_before = await page.locator(".conn-note").is_hidden()
            await page.route("**/*", lose_once)
            for field, value in zip(("pg-m", "pg-n", "pg-k"), (256, 256, 256), strict=True):
                await page.fill(f"#{field}", str(value))
            if await page.is_checked("#pg-numerics input"):
                await page.click("#pg-numerics input")
            await page.click("#pg-run")
            await page.wait_for_function(
                "n => (document.getElementById('step-label') || {}).innerText?.includes(' / ' + n)",
                arg=want,
                timeout=60_000,
            )
            note = page.locator(".conn-note")
            await note.wait_for(state="visible", timeout=5_000)
            en = await note.inner_text()
            await page.click("#lang-switch input[value='zh']")
            await page.wait_for_function(
                "() => /[\\u4e00-\\u9fff]/.test(document.querySelector('.conn-note').innerText)"
            )
            zh = await note.inner_text()
            ARTIFACTS.mkdir(exist_ok=True)
            await page.screenshot(path=str(ARTIFACTS / "resent-note-zh.png"))
            await b.close()
            return lost[0], en, zh, hidden_before

    try:
        lost, en, zh, hidden_before = asyncio.run(scenario())
    finally:
        server.stop()
    assert lost == 1 and hidden_before
    assert en == msg("web.resent", "en") and zh == msg("web.resent", "zh")


@pytest.mark.parametrize("answer", ["job", "result"])
def test_a_run_arrives_although_an_answer_is_cut_off_after_its_headers(plain_server, answer):
    """A worker killed while it writes an answer leaves the page with a status line and half a body: the old page
    waited for the rest forever (Dash reads the body outside its error handling), showing its idle text. The
    page reads the whole answer before it counts as answered, and asks again (assets/player.js). ``job``: the
    Run click's answer (the job to poll) is cut; ``result``: the poll that carries the finished run."""
    need_browser()
    from cut_proxy import CutProxy
    from playwright.sync_api import sync_playwright

    def cut(path: str, body: bytes) -> bool:
        if "_dash-update-component" not in path:
            return False
        if answer == "job":
            return b'"cacheKey"' in body and b'"response"' not in body
        return "cacheKey=" in path and b'"pg-last"' in body

    proxy = CutProxy(plain_server.port, cut)
    shape = (512, 384, 256) if answer == "job" else (384, 512, 256)  # each its own run
    try:
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            tab = Tab(b.new_context(viewport=VIEWPORT), proxy.url).open("/playground")
            _play(tab, *shape, numerics=True)
            tab.wait_steps(_events(*shape, numerics=True), timeout=60_000, stage=f"after the {answer} answer was cut")
            b.close()
    finally:
        proxy.close()
    assert proxy.done.is_set(), f"no {answer} answer went through the proxy to cut"


# -- requests no browser sends --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def plain_server(tmp_path_factory):
    runs = tmp_path_factory.mktemp("http")
    server = Server(runs)
    server.runs = runs
    yield server
    server.stop()


def _post(url: str, body: bytes, content_type: str = "application/json") -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_a_body_over_the_cap_is_413(plain_server):
    status, _ = _post(plain_server.url + "/_dash-update-component", b"{" + b" " * (3 << 20) + b"}")
    assert status == 413


GARBAGE = [None, [], {}, "x", "abc", 10**12, -1, 1e308, True, ["a", 1], {"a": [1, {"b": None}]}, "9" * 500]


def _deps(url: str) -> list[dict]:
    with urllib.request.urlopen(url + "/_dash-dependencies", timeout=30) as r:
        return json.loads(r.read())


def _payload(dep: dict, inputs: list, states: list, changed: str) -> dict:
    outputs = dep["output"]
    if outputs.startswith(".."):
        specs = [o for o in outputs.strip(".").split("...") if o]
        out = [{"id": s.rsplit(".", 1)[0], "property": s.rsplit(".", 1)[1]} for s in specs]
    else:
        out = {"id": outputs.rsplit(".", 1)[0], "property": outputs.rsplit(".", 1)[1]}
    return {"output": outputs, "outputs": out, "inputs": inputs, "state": states, "changedPropIds": [changed]}


def _value(dep_item: dict, value):
    ident = dep_item["id"]
    if ident.startswith("{"):  # a pattern-matching id: a list of the matching components
        parsed = json.loads(ident)
        concrete = {k: (0 if v == ["ALL"] or v == ["MATCH"] else v) for k, v in parsed.items()}
        return [{"id": concrete, "property": dep_item["property"], "value": value}]
    return {"id": ident, "property": dep_item["property"], "value": value}


def test_malformed_values_for_every_callback_input_are_never_a_500(plain_server):
    """Every callback of the app, every one of its inputs and states given each kind of garbage in turn."""
    url = plain_server.url
    statuses: dict[int, int] = {}
    failures = []
    for dep in _deps(url):
        if dep.get("clientside_function"):
            continue
        items = [*dep["inputs"], *dep.get("state", [])]
        for i, target in enumerate(items):
            for g, garbage in enumerate(GARBAGE[i % 3 :: 3]):
                values = [_value(d, garbage if j == i else None) for j, d in enumerate(items)]
                body = _payload(
                    dep,
                    values[: len(dep["inputs"])],
                    values[len(dep["inputs"]) :],
                    f"{target['id']}.{target['property']}",
                )
                status, text = _post(url + "/_dash-update-component", json.dumps(body).encode())
                statuses[status] = statuses.get(status, 0) + 1
                if status >= 500:
                    failures.append((dep["output"][:80], target, g, status, text[:200]))
    body = {"output": "no-such.children", "outputs": {"id": "no-such", "property": "children"}, "inputs": []}
    status, _ = _post(url + "/_dash-update-component", json.dumps(body).encode())
    assert status == 400  # an unknown callback: said, not a 500
    status, _ = _post(url + "/_dash-update-component", b"this is not json")
    assert 400 <= status < 500
    print(f"\n{sum(statuses.values())} malformed callback requests: {statuses}")
    assert not failures, failures[:5]


# -- a killed worker ----------------------------------------------------------------------------------------
def _job_parents(master: int) -> set[int]:
    """The gunicorn workers that have a job right now (a child of the worker's job launcher)."""
    import psutil

    out = set()
    for worker in psutil.Process(master).children():
        if any(launcher.children() for launcher in worker.children()):
            out.add(worker.pid)
    return out


def _job_workers(master: int, after_s: float, within_s: float = 30.0) -> set[int]:
    """The worker whose launcher runs the job, once it has one and ``after_s`` has passed."""
    time.sleep(after_s)
    deadline = time.monotonic() + within_s
    while not (found := _job_parents(master)) and time.monotonic() < deadline:
        time.sleep(0.005)
    return found


@pytest.fixture(scope="module")
def workers(tmp_path_factory):
    """One ``gunicorn -w 2`` for the killed-worker runs (gunicorn starts a new worker for each one killed)."""
    runs = tmp_path_factory.mktemp("killed")
    server = Server(runs, workers=2)
    server.runs = runs
    yield server
    server.stop()


def _stored_events(runs_dir, shape, numerics: bool = False) -> int:
    """The events of the playground run of ``shape`` the server stored: what its page must show."""
    from app.web.runs import Runs

    found = Runs(runs_dir)
    request = {"scenario": "matmul", "params": dict(zip("mnk", shape, strict=True)), "numerics": numerics}
    result = found.store.get(found.spec(request))
    assert result is not None, f"the run {shape} was not stored"
    return len(result.trace)


@pytest.mark.slow
@pytest.mark.parametrize("after_s", [0.0, 0.5, 1.0, 3.0])
def test_a_run_arrives_although_the_worker_that_started_it_is_killed(browser, workers, after_s):
    """At 0.0 the worker dies as soon as its job exists, mostly before it has answered the click; later, mostly
    between polls, and now and then while it answers one (the page then used to keep the job's last progress
    and never ask again: test_a_run_arrives_although_answers_are_lost makes that certain). Each variant runs its
    own shape (a stored run would arrive at once)."""
    shape = (8192, 8192, 8192 - 32 * int(after_s * 2))  # timing only, about 6 s: still running when the worker dies
    context = browser.new_context(viewport=VIEWPORT)
    tab = Tab(context, workers.url).open("/playground")
    _play(tab, *shape, numerics=False)
    killed = _job_workers(workers.proc.pid, after_s)
    assert len(killed) == 1, killed  # the worker whose launcher runs the job, not the other one
    for pid in killed:
        os.kill(pid, signal.SIGKILL)
    stage = f"after workers {sorted(killed)} were killed at {after_s} s"
    try:
        tab.wait_steps(10**6, timeout=120_000, stage=stage, at_least=True)  # a run of millions of events is drawn
    except AssertionError as exc:
        raise AssertionError(f"{exc}\nthe server's log ends:\n{workers.log.read_text()[-3000:]}") from None
    assert tab.step()[1] == _stored_events(workers.runs, shape)  # and it is this run
    assert tab.text("#pg-error").strip() == ""
    context.close()


@pytest.mark.slow
def test_a_run_arrives_although_answers_are_lost(browser, tmp_path):
    """What a worker killed while it answers leaves: the server did the work (started the job, handed out its
    progress, its result) and the page never got the answer. Here the answer to the click, to the first poll and
    to the poll that carries the result are each lost once (the request went through, its answer is dropped)."""
    lost: list[str] = []

    def answer(route):
        request = route.request
        if "pg-last.data" not in (request.post_data or ""):
            route.continue_()  # not the playground's job
            return
        response = route.fetch()
        stage = "poll" if "cacheKey=" in request.url else "start"
        if stage == "poll" and '"response"' in response.text():
            stage = "result"
        if stage not in lost:
            lost.append(stage)
            route.abort("connectionreset")
        else:
            route.fulfill(response=response)

    server = Server(tmp_path)
    try:
        shape = (4096, 4096, 4096)  # timing only, about 2 s: a few polls
        context = browser.new_context(viewport=VIEWPORT)
        tab = Tab(context, server.url).open("/playground")
        context.route("**/_dash-update-component*", answer)
        _play(tab, *shape, numerics=False)
        tab.wait_steps(_events(*shape), timeout=60_000, stage="after answers were lost")
        assert lost == ["start", "poll", "result"]
        assert tab.text("#pg-error").strip() == ""  # the click sent again polled the job it had started
        context.close()
    finally:
        server.stop()


@pytest.mark.slow
def test_on_celery_a_click_sent_again_joins_its_task_and_a_result_taken_is_there_again(tmp_path):
    """The class server's job path (a real Redis, a real Celery worker, two web workers) answers what a page that
    lost answers sends again (assets/player.js), over HTTP as the page sends it: the Run click sent again gets the
    task the first started (Dash's manager started a second, refused as a second job of the tab), a poll sent
    again after the one that took the result gets the result again (Dash's had deleted it), and the run plays."""
    import requests
    from class_load_http import Page, fill_playground, views

    with redis_server() as url:
        env = {"ASCENDSIM_REDIS_URL": url, "ASCENDSIM_RUNS": str(tmp_path), "PYTHONPATH": str(ROOT)}
        worker = Worker("app.web.celery_worker", env, tmp_path / "worker.log")
        server = Server(tmp_path, workers=2, log_dir=tmp_path, env=env)
        try:
            deps = requests.get(server.url + "/_dash-dependencies", timeout=60).json()
            page = Page(server.url, "/playground", deps)
            fill_playground(page, (2048, 2048, 2048), "celerytab00000001", numerics=False)
            dep = page.dep("pg-last.data", "pg-error.children")
            first = page.call(dep, "pg-run.n_clicks")  # its answer lost with the worker that gave it...
            again = page.call(dep, "pg-run.n_clicks")  # ...so the page sends the click again
            assert again["job"].rpartition("~")[0] == first["job"].rpartition("~")[0]  # the same task
            query = f"&cacheKey={again['cacheKey']}&job={again['job']}"
            deadline = time.monotonic() + 120
            while "response" not in (result := page.call(dep, "pg-run.n_clicks", query)):
                assert time.monotonic() < deadline, "no result within 120 s"
                time.sleep(0.25)
            assert page.call(dep, "pg-run.n_clicks", query).get("response") == result["response"]  # sent again
            run = page.held["run.data"]
            assert page.held.get("pg-error.children") == "" and run["params"]["m"] == "2048"
            views(page, run)
            assert page.held["window.data"]["n"] == page.held["meta.data"]["n"] > 10_000
        finally:
            server.stop()
            worker.stop()


# -- the store at the web's level ------------------------------------------------------------------------------
def test_an_unusable_runs_folder_is_one_line_at_start(tmp_path):
    with small_disk(tmp_path / "ro", 2) as disk:
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        done = subprocess.run(
            [sys.executable, "-m", "app.cli", "web", "--runs-dir", str(disk), "--port", "1"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 2 and "Traceback" not in done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "--runs-dir" in lines[0] and "read-only" in lines[0] and str(disk) in lines[0]


def test_a_read_only_store_keeps_serving_and_says_why_a_run_cannot_be_kept(browser, tmp_path):
    with small_disk(tmp_path / "ro", 8) as disk:
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        server = Server(disk, workers=2, log_dir=tmp_path)  # gunicorn boots although it cannot write there
        try:
            context = browser.new_context(viewport=VIEWPORT)
            tab = Tab(context, server.url).open("/")
            tab.page.wait_for_selector("#step-label")  # lesson 1, computed in memory
            assert "read-only" in tab.text("#player-status")
            tab.open("/playground")
            _play(tab, 64, 64, 64, numerics=True)
            tab.page.wait_for_function("() => document.getElementById('pg-error').innerText.includes('read-only')")
            error = tab.text("#pg-error")
            assert str(disk) in error and "\n" not in error.strip()
            context.close()
        finally:
            server.stop()


def test_a_full_disk_is_said_and_the_same_run_succeeds_once_freed(browser, tmp_path):
    with small_disk(tmp_path / "disk", 6) as disk:
        server = Server(disk, log_dir=tmp_path)
        try:
            context = browser.new_context(viewport=VIEWPORT)
            tab = Tab(context, server.url).open("/playground")
            filler = disk / "filler"
            free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
            filler.write_bytes(b"x" * max(0, free - 8192))
            _play(tab, 256, 256, 256, numerics=False)
            tab.page.wait_for_function("() => document.getElementById('pg-error').innerText.includes('full')")
            assert str(disk) in tab.text("#pg-error")
            filler.unlink()
            tab.page.click("#pg-run")
            tab.wait_steps(_events(256, 256, 256), stage="after the disk was freed")
            context.close()
        finally:
            server.stop()


def test_a_damaged_lesson_file_is_recomputed_and_the_page_says_so(browser, tmp_path):
    server = Server(tmp_path)
    try:
        context = browser.new_context(viewport=VIEWPORT)
        Tab(context, server.url).open("/").page.wait_for_selector("#step-label")
    finally:
        server.stop()
    (stored,) = list(tmp_path.rglob("lesson-*.npz"))
    stored.write_bytes(stored.read_bytes()[:100])  # truncated
    server = Server(tmp_path)
    try:
        tab = Tab(context, server.url).open("/")
        tab.page.wait_for_selector("#step-label")
        assert "damaged" in tab.text("#player-status")
        assert list(tmp_path.rglob("lesson-*.npz")) and list(tmp_path.rglob("*.damaged-*"))
        tab.assert_no_errors()
        context.close()
    finally:
        server.stop()
