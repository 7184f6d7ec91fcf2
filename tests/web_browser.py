"""Helpers for the real-browser tests: the server started on a free port (as a trainee or a class would
start it), Debian's headless Chromium through Playwright, and pages that record console errors."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-dev-shm-usage",
    "--enable-unsafe-swiftshader",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
]
VIEWPORT = {"width": 1600, "height": 1000}
STEP = re.compile(r"(\d+) / (\d+)")


def need_browser() -> None:
    """Under CI a missing browser fails the test; elsewhere it skips it."""
    missing = []
    if importlib.util.find_spec("playwright") is None:
        missing.append("the playwright package (pip install -e '.[test]')")
    if not Path(CHROMIUM).exists():
        missing.append(f"{CHROMIUM} (apt-get install -y chromium)")
    if missing:
        message = "the browser tests need " + " and ".join(missing)
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


@contextlib.contextmanager
def browser_and_server(runs_dir: Path):
    """Chromium and a dashboard server on ``runs_dir`` for a module's tests; both stopped after them."""
    need_browser()
    from playwright.sync_api import sync_playwright

    server = Server(runs_dir)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield browser, server
            browser.close()
    finally:
        server.stop()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A dashboard server in a child process: ``ascendsim web`` or gunicorn with several workers."""

    def __init__(
        self, runs_dir: Path, workers: int = 0, log_dir: Path | None = None, env: dict | None = None, threads: int = 0
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "ASCENDSIM_RUNS": str(runs_dir), "PYTHONPATH": str(ROOT), **(env or {})}
        if workers:
            if importlib.util.find_spec("gunicorn") is None:
                message = "the multi-worker test needs gunicorn (pip install -e '.[test]')"
                pytest.fail(message) if os.environ.get("CI") == "true" else pytest.skip(message)
            cmd = [
                sys.executable,
                "-m",
                "gunicorn",
                "-w",
                str(workers),
                *(["--threads", str(threads)] if threads else []),
                "-b",
                f"127.0.0.1:{self.port}",
                "app.web:server",
            ]
        else:
            cmd = [sys.executable, "-m", "app.cli", "web", "--port", str(self.port), "--runs-dir", str(runs_dir)]
        self.log = (log_dir or runs_dir) / "server.log"
        self._out = self.log.open("w")
        self.proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=self._out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited: {self.log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(self.url + "/", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"the server did not answer on {self.url}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self._out.close()


SAID = """() => ['step-label', 'pg-error', 'pg-progress', 'pg-note', 'player-status']
    .map(i => i + ': ' + ((document.getElementById(i) || {}).innerText || '-')).join(' | ')"""  # what a page says


class Tab:
    """One browser page with its console errors recorded."""

    def __init__(self, context, url: str) -> None:
        self.page = context.new_page()
        self.url = url
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.set_default_timeout(30_000)

    def open(self, path: str = "/") -> Tab:
        self.page.goto(self.url + path)
        return self

    def step(self) -> tuple[int, int]:
        m = STEP.search(self.page.inner_text("#step-label"))
        assert m, self.page.inner_text("#step-label")
        return int(m.group(1)), int(m.group(2))

    def wait_step(self, i: int, n: int | None = None, timeout: float = 30_000) -> None:
        """Until the step label shows step ``i`` (1-based) [of ``n``]."""
        tail = f" / {n}" if n is not None else " / "
        self._until(
            "([i, tail]) => { const t = (document.getElementById('step-label') || {}).innerText || '';"
            " const m = t.match(/(\\d+) \\/ (\\d+)/); return m && +m[1] === i && t.includes(tail); }",
            [i, tail],
            timeout,
            f"step {i}{tail} not shown",
        )

    def wait_steps(self, n: int, timeout: float = 60_000, stage: str = "", at_least: bool = False) -> None:
        """Until a run of ``n`` steps (``at_least``: of ``n`` or more) is loaded and drawn (on a timeout, what the
        page said instead)."""
        self._until(
            "([n, least]) => { const m = ((document.getElementById('step-label') || {}).innerText || '')"
            ".match(/ \\/ (\\d+)/); return !!m && (least ? +m[1] >= n : +m[1] === n); }",
            [n, at_least],
            timeout,
            f"no run of {n} steps drawn {stage}",
        )

    def _until(self, script: str, arg: list, timeout: float, failed: str) -> None:
        """Until ``script(arg)`` is true in the page; on a timeout an AssertionError: ``failed`` and what the page
        said."""
        try:
            self.page.wait_for_function(script, arg=arg, timeout=timeout)
        except Exception as exc:
            raise AssertionError(f"{failed}; {self._said()}") from exc

    def _said(self) -> str:
        """What the page shows where a run, a step or a problem would be said, and its last console errors."""
        return f"the page says {self.page.evaluate(SAID)}; its console errors: {self.errors[-3:]}"

    def cursor(self, graph: str = "timeline-graph") -> float:
        """The time (us) the cursor laid over a chart stands at."""
        return float(self.page.get_attribute(f"#{graph} > .cursor", "data-x"))

    def text(self, selector: str) -> str:
        return self.page.inner_text(selector)

    def choose(self, dropdown, option: str) -> None:
        """Pick ``option`` in a dcc.Dropdown (``dropdown``: its id, a string or a pattern-matching dict)."""
        if isinstance(dropdown, dict):
            self.page.click(f"[id='{json.dumps(dropdown, separators=(',', ':'), sort_keys=True)}']")
        else:
            self.page.click(f"#{dropdown}")
        self.page.get_by_role("option", name=option, exact=True).click()
        if self.page.get_by_role("option", name=option, exact=True).count():
            self.page.keyboard.press("Escape")  # close the list if it stayed open

    def shot(self, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def assert_no_errors(self) -> None:
        assert not self.errors, "browser console errors:\n" + "\n".join(self.errors[:10])
