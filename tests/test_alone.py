"""The suite's two workers never run another test beside one marked ``alone`` (tests/alone.py), and do run the
others side by side."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).parent

CONFTEST = "from alone import pytest_runtest_protocol  # noqa: F401\n"
INI = "[pytest]\nmarkers =\n    alone: runs alone\n"
RECORD = """
import json, os, time
from pathlib import Path

import pytest


def spend(name, seconds):
    t0 = time.time()
    time.sleep(seconds)
    with open(Path(os.environ["SPANS"]), "a") as f:
        f.write(json.dumps([name, t0, time.time()]) + "\\n")
"""


def test_an_alone_test_runs_with_no_other_beside_it_and_the_others_share(tmp_path):
    """Each file goes to one worker: the alone test is due while the other worker's first test still runs (it waits
    for it), and the other worker's next tests wait for the alone test."""
    spans = tmp_path / "spans.jsonl"
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "pytest.ini").write_text(INI)
    (tmp_path / "test_a.py").write_text(
        RECORD + "".join(f"\n\ndef test_a{i}():\n    spend('a{i}', {1.0 if i == 0 else 0.3})\n" for i in range(6))
    )
    (tmp_path / "test_b.py").write_text(
        RECORD
        + "\n\ndef test_b0():\n    spend('b0', 0.3)\n"
        + "\n\n@pytest.mark.alone\ndef test_alone():\n    spend('alone', 0.6)\n"
        + "".join(f"\n\ndef test_b{i}():\n    spend('b{i}', 0.3)\n" for i in range(1, 4))
    )
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadfile", "."],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(TESTS), "SPANS": str(spans)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    rows = [json.loads(line) for line in spans.read_text().splitlines()]
    assert len(rows) == 11
    alone = next((t0, t1) for name, t0, t1 in rows if name == "alone")
    others = [(t0, t1) for name, t0, t1 in rows if name != "alone"]
    assert not [s for s in others if s[0] < alone[1] and alone[0] < s[1]], "a test ran beside the alone one"
    pairs = [(s, t) for i, s in enumerate(others) for t in others[i + 1 :]]
    assert any(s[0] < t[1] and t[0] < s[1] for s, t in pairs), "the other tests never ran side by side"
