"""A class's load on one server: N real browser users at once against ``gunicorn -w 2``.

Each user opens the lessons page, steps lesson 1 twenty times, goes to the playground by the menu, then runs
a matmul of its own shape (numerics on, 256 to 1024) and waits until its run is drawn. Measured: run-to-views
per user (click to the step label showing the run's event count), errors, the machine's CPU and the server's
resident memory (the gunicorn workers and the jobs they fork), sampled every 0.2 s.

``python -m tests.class_load --users 5,10,20,40`` prints the table (a benchmark: figures, no pass/fail);
``--phases`` adds each user's progress lines with their times, and ``CLASS_LOAD_LOG=FILE`` keeps the server's log.
The acceptance test (tests/test_class_load.py: 20 users on ``gunicorn -w 2``, each with a small run, every one
sees their own run) is in the suite. ``--http`` replays what each page sends without browsers
(tests/class_load_http.py). The browsers' CPU column is a lower bound: renderers that exit between samples are
not counted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from engine.scenarios.runner import run_scenario
from tests.web_browser import CHROMIUM, CHROMIUM_ARGS, SAID, VIEWPORT, Server

STEPS = 20
TIMEOUT_S = 240
POLL_MS = 50  # how often a user looks at the page for what it waits for (Playwright's default looks at every
# animation frame: twenty pages redrawn 60 times a second, browser work no trainee causes)


def shape(i: int, small: bool = False) -> tuple[int, int, int]:
    """User ``i``'s own matmul: distinct for every user, 256 to 1024 on each side (``small``: 64 to 320)."""
    if small:
        return 64 + 16 * (i % 13), 64 + 32 * (i // 13 % 7), 64 + 16 * (i % 5)
    return 256 + 64 * (i % 13), 256 + 128 * (i // 13 % 7), 256 + 32 * (i % 5)


def events(m: int, n: int, k: int) -> int:
    return len(run_scenario("matmul", numerics=False, m=m, n=n, k=k).result.trace)


@dataclass
class Load:
    users: int
    run_to_views_s: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    server_said: list[str] = field(default_factory=list)  # the server log's errors and worker timeouts
    phases: dict[int, list[tuple[float, str]]] = field(default_factory=dict)  # per user: (s after the click, text)
    cpu_percent: list[float] = field(default_factory=list)
    rss_mb: list[float] = field(default_factory=list)
    cpu_s: dict[str, float] = field(default_factory=dict)  # CPU seconds used: the server (with its jobs), the browsers

    def row(self) -> str:
        t = sorted(self.run_to_views_s)
        p50 = statistics.median(t) if t else float("nan")
        p95 = t[min(len(t) - 1, round(0.95 * (len(t) - 1)))] if t else float("nan")
        cpu = statistics.mean(self.cpu_percent) if self.cpu_percent else 0.0
        return (
            f"| {self.users} | {len(t)}/{self.users} | {p50:.1f} | {p95:.1f} | {len(self.errors)} | {cpu:.0f} % | "
            f"{max(self.rss_mb, default=0):.0f} MB | {self.cpu_s.get('server', 0):.0f} s | "
            f"{self.cpu_s.get('browsers', 0):.0f} s |"
        )


def _cpu_s(processes) -> float:
    """CPU seconds of ``processes`` and of the children they have reaped."""
    import psutil

    total = 0.0
    for p in processes:
        with contextlib.suppress(psutil.Error):
            t = p.cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
    return total


def _server_rss_mb(root_pid: int) -> float:
    import psutil

    try:
        root = psutil.Process(root_pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0
    for p in procs:
        with contextlib.suppress(psutil.Error):
            total += p.memory_info().rss
    return total / 2**20


async def _user(browser, url: str, i: int, expected: int, load: Load, steps: int, small: bool) -> None:
    context = await browser.new_context(viewport=VIEWPORT)
    page = await context.new_page()
    page.set_default_timeout(TIMEOUT_S * 1000)
    try:
        if steps:  # the lessons page first (0 steps: straight to the playground)
            await page.goto(url + "/")
            await page.wait_for_selector("#step-label")
        for s in range(2, steps + 2):
            await page.click("#step-forward")
            await page.wait_for_function(
                "s => (document.getElementById('step-label').innerText.match(/(\\d+) \\//) || [])[1] == s",
                arg=s,
                polling=POLL_MS,
            )
        if steps:  # on to the playground as a trainee goes, by the menu (the page is not loaded again)
            await page.click("#nav-playground")
        else:
            await page.goto(url + "/playground")
        await page.wait_for_selector("#pg-params .param")
        for ident, value in zip(("pg-m", "pg-n", "pg-k"), shape(i, small), strict=True):
            await page.fill(f"#{ident}", str(value))
        if not await page.is_checked("#pg-numerics input"):
            await page.click("#pg-numerics input")
        t0 = time.perf_counter()
        await page.click("#pg-run")
        watch = asyncio.create_task(_watch(page, t0, load.phases.setdefault(i, [])))
        try:
            await page.wait_for_function(
                "n => (document.getElementById('step-label') || {}).innerText?.includes(' / ' + n)",
                arg=expected,
                polling=POLL_MS,
            )
        finally:
            watch.cancel()
        load.run_to_views_s.append(time.perf_counter() - t0)
    except Exception as exc:  # a user who never saw their run: counted, with what went wrong
        said = ""
        with contextlib.suppress(Exception):
            said = await page.evaluate(SAID)
        load.errors.append(f"user {i}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}; the page says {said}")
    finally:
        await context.close()


async def _watch(page, t0: float, seen: list[tuple[float, str]]) -> None:
    """Record each change of the job's progress line (queued, simulating, storing, preparing) with its time."""
    last = None
    while True:
        with contextlib.suppress(Exception):
            text = await page.evaluate("() => (document.getElementById('pg-progress') || {}).innerText || ''")
            text = text.splitlines()[0] if text else ""
            phase = text.split(":")[0]
            if phase != last:
                seen.append((round(time.perf_counter() - t0, 1), text[:60]))
                last = phase
        await asyncio.sleep(0.5)


async def _drive(url: str, users: int, expected: list[int], load: Load, steps: int, small: bool) -> None:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        await asyncio.gather(*(_user(browser, url, i, expected[i], load, steps, small) for i in range(users)))
        await browser.close()


def measure(
    users: int, workers: int = 2, steps: int = STEPS, small: bool = False, http: bool = False, threads: int = 0
) -> Load:
    """One class of ``users`` on a fresh ``gunicorn -w workers`` over an empty runs folder (``small``: each
    user's matmul 64 to 320 on a side instead of 256 to 1024; ``http``: clients that send what a page sends,
    without browsers: tests/class_load_http.py)."""
    import psutil

    expected = [] if http else [events(*shape(i, small)) for i in range(users)]
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp), workers=workers, log_dir=Path(tmp), threads=threads)
        load = Load(users)
        done = threading.Event()

        def sample() -> None:
            psutil.cpu_percent()
            me = psutil.Process()
            while not done.wait(0.2):
                load.cpu_percent.append(psutil.cpu_percent())
                load.rss_mb.append(_server_rss_mb(server.proc.pid))
                with contextlib.suppress(psutil.Error):
                    ours = me.children(recursive=True)
                    served = {p.pid for p in psutil.Process(server.proc.pid).children(recursive=True)}
                    served.add(server.proc.pid)
                    load.cpu_s["server"] = _cpu_s(p for p in ours if p.pid in served)
                    load.cpu_s["browsers"] = _cpu_s(p for p in ours if p.pid not in served)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            if http:
                from tests.class_load_http import drive

                drive(server.url, users, [shape(i, small) for i in range(users)], load)
            else:
                asyncio.run(_drive(server.url, users, expected, load, steps, small))
        finally:
            done.set()
            sampler.join()
            server.stop()
            log = server.log.read_text(errors="replace").splitlines()
            load.server_said = [x for x in log if any(w in x for w in ("TIMEOUT", "Error", "Traceback"))]
            if os.environ.get("CLASS_LOAD_LOG"):  # the whole log, for a closer look
                Path(os.environ["CLASS_LOAD_LOG"]).write_text("\n".join(log))
    return load


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", default="5,10,20,40", help="classes to measure, e.g. 5,10,20,40")
    parser.add_argument("--steps", type=int, default=STEPS, help="steps each user takes before running")
    parser.add_argument("--small", action="store_true", help="each user's matmul 64 to 320 on a side")
    parser.add_argument("--phases", action="store_true", help="also print each user's progress lines, timed")
    parser.add_argument("--http", action="store_true", help="HTTP clients that send what a page sends, no browsers")
    parser.add_argument("--threads", type=int, default=0, help="gunicorn --threads (0: its sync workers)")
    args = parser.parse_args()
    print(
        "| users | runs seen | run-to-views p50 (s) | p95 (s) | errors | CPU (mean) | server RSS (max) "
        "| server CPU | browsers' CPU |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for users in (int(x) for x in args.users.split(",")):
        load = measure(users, steps=args.steps, small=args.small, http=args.http, threads=args.threads)
        print(load.row(), flush=True)
        for e in load.errors[:3]:
            print(f"    {e}")
        for line in load.server_said[:10]:
            print(f"    server: {line[:300]}")
        if args.phases:
            for user, seen in sorted(load.phases.items()):
                print(f"    user {user}: " + "; ".join(f"{t} s {text or '(none)'}" for t, text in seen))


if __name__ == "__main__":
    main()
