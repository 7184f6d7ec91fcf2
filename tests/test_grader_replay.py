"""Replay fidelity: for every lesson's reference, the grader's replay of what the sandboxed child recorded is
the same run as the plain run of the drive: every trace column and table, every finding and task, the end
time, and every output (``tests/replay_fidelity.py``, in a fresh process with one BLAS thread)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from lessons import catalog, sandbox
from lessons.worker import ONE_THREAD

HELPER = Path(__file__).resolve().parent / "replay_fidelity.py"

if sandbox.missing():
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: {sandbox.missing()}", pytrace=False)
    pytest.skip(sandbox.missing(), allow_module_level=True)


def _fidelity(number: int) -> dict:
    done = subprocess.run(
        [sys.executable, str(HELPER), str(number)],
        capture_output=True,
        text=True,
        env={**os.environ, **ONE_THREAD},
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_every_reference_replays_to_the_same_run():
    numbers = [lesson.number for lesson in catalog.lessons()]
    with ThreadPoolExecutor(2) as pool:
        reports = dict(zip(numbers, pool.map(_fidelity, numbers), strict=True))
    for number, report in reports.items():
        assert report["runs"] == report["replayed"] and report["runs"], number
        assert all(not d for d in report["differences"].values()), (number, report["differences"])
        assert all(o["verified"] and o["equal"] for o in report["outputs"].values()), (number, report["outputs"])
        assert sum(report["events"].values()) > 0
