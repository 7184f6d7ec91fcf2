"""Long runs show progress on stderr, and Ctrl-C stops them with a one-line partial summary."""

from __future__ import annotations

import io
import signal
import subprocess
import sys
import time

import pytest

import app.cli.budget
from app.cli import main
from app.cli.budget import Progress


def test_progress_line_has_count_rate_and_time_left():
    p = Progress(1_000_000, "matmul", estimate_s=10.0)
    p.start = time.perf_counter() - 4.0
    p(400_000)
    line = p.line()
    assert line.startswith("matmul: 400,000 of about 1,000,000 events (40 %), 0.10 M events/s, 4 s")
    assert "about 6 s left" in line
    p.stage = "writing t.json"
    assert p.line() == "matmul: writing t.json, 4 s"


def test_a_rerun_adds_to_the_count():
    p = Progress(100, "x")
    p(60)
    p(10)  # a new simulation (a re-run for --report) starts counting from zero
    assert p.done == 70


def test_progress_is_drawn_only_for_runs_that_take_a_while():
    quiet, shown = io.StringIO(), io.StringIO()
    with Progress(10, "short", stream=quiet, after_s=5.0) as p:
        p(5)
        time.sleep(0.6)
    with Progress(10, "long", stream=shown, after_s=0.0) as p:
        p(5)
        time.sleep(0.6)
    assert quiet.getvalue() == ""
    assert shown.getvalue().startswith("long: 5 of about 10 events (50 %)") and shown.getvalue().endswith("\n")


@pytest.mark.parametrize("command", ["run", "trace"])
def test_ctrl_c_stops_the_run_with_a_partial_summary(command, monkeypatch, tmp_path, capsys):
    calls = []

    def interrupt(self, rows):
        calls.append(rows)
        if len(calls) == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(app.cli.budget.Progress, "__call__", interrupt)
    out = tmp_path / "t.json"
    args = [command, "matmul", "--m", "2048", "--n", "2048", "--k", "2048", "--no-numerics"]
    args += ["--out", str(out)] if command == "trace" else ["--csv", str(tmp_path / "p.csv")]
    assert main(args) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("interrupted: matmul stopped after "), err
    assert "events simulated" in err[0] and err[0].endswith("nothing was written")
    assert list(tmp_path.iterdir()) == []  # no output, no temporary file


def _ctrl_c_as_at_a_terminal() -> None:
    """In the child, before it runs: SIGINT's default disposition, which Python turns into KeyboardInterrupt. A test
    runner started in the background by a shell (``pytest &``, a CI script's ``... &``) passes SIGINT on ignored,
    and Python keeps a disposition it inherits as ignored: the child would then run on through the signal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow
def test_a_real_sigint(tmp_path):
    """SIGINT to a long timing-only run once it shows progress (it is simulating, seconds before its end): exit 130,
    progress then one summary line, no traceback, no file."""
    out = tmp_path / "t.json"
    cmd = [sys.executable, "-m", "app.cli", "trace", "matmul", "--m", "16384", "--n", "8192", "--k", "8192"]
    child = subprocess.Popen(
        [*cmd, "--no-numerics", "--out", str(out)],
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_ctrl_c_as_at_a_terminal,  # noqa: PLW1509 (sets one signal disposition: no lock, no import)
    )
    t0 = time.monotonic()
    first = child.stderr.readline()  # the first progress line, written while the run simulates
    child.send_signal(signal.SIGINT)
    sent = time.monotonic() - t0
    _out, rest = child.communicate(timeout=60)
    err = first + rest
    lines = err.strip().splitlines()
    said = f"SIGINT sent {sent:.1f} s after the start, the child ended {time.monotonic() - t0:.1f} s after it: {err}"
    assert " M events/s" in first or "running for" in first, said  # progress was shown
    assert child.returncode == 130, said
    assert "Traceback" not in err and lines[-1].startswith("interrupted: matmul stopped after"), said
    assert list(tmp_path.iterdir()) == []
