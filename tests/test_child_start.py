"""A trainee's child process starts while another thread of the grader computes a matrix product.

The grader computes a lesson's reference run while the submission's child runs (``lessons/grader.py``), and a web
exercise job does the same. Starting the child must not fork the grader's whole process: a fork runs OpenBLAS's
``pthread_atfork`` handler, which waits for its worker threads while a product in another thread waits for them
too, and both wait forever (a grader of two jobs hung so). The race is rare, so the test checks what makes it possible:
that starting a child runs no at-fork handler of the grader's process (Python runs its own handlers exactly when it
forks the whole process for a ``preexec_fn``). It runs in a process of its own, so that a hang is a timeout, not a
hung suite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lessons import sandbox

pytestmark = pytest.mark.slow

SCRIPT = """
import json, os, sys, tempfile, threading
from pathlib import Path
import numpy as np
from lessons import catalog
from lessons.child import run_child

lesson = catalog.get(3)
a = np.random.default_rng(0).random((300, 300))
done = threading.Event()

def products():  # BLAS busy on its worker threads the whole time
    while not done.is_set():
        a @ a

forks = []  # the grader's process forked with its at-fork handlers run (Python's and, in C, OpenBLAS's)
os.register_at_fork(before=lambda: forks.append(1))
worker = threading.Thread(target=products, daemon=True)
worker.start()
statuses = []
with tempfile.TemporaryDirectory() as tmp:
    for i in range(3):
        exercise = Path(tmp) / f"sub{i}.py"
        exercise.write_text(lesson.solution_file.read_text(encoding="utf-8"), encoding="utf-8")
        child = run_child(lesson, exercise, sandboxed=sys.argv[1] == "sandboxed")
        statuses.append(child.status)
        if child.frame is not None:
            Path(child.frame).unlink(missing_ok=True)
done.set()
worker.join()  # no product in flight when the interpreter exits (exiting with a thread inside OpenBLAS can hang)
print(json.dumps({"statuses": statuses, "forks": len(forks)}))
"""


@pytest.mark.parametrize("mode", ["sandboxed", "plain"])
def test_a_child_starts_while_another_thread_multiplies_matrices(mode):
    if mode == "sandboxed" and sandbox.missing():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: {sandbox.missing()}", pytrace=False)
        pytest.skip(sandbox.missing())
    root = Path(__file__).resolve().parents[1]
    try:
        out = subprocess.run(
            [sys.executable, "-c", SCRIPT, mode], cwd=root, capture_output=True, text=True, timeout=60, check=False
        )
    except subprocess.TimeoutExpired as exc:
        said = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        if said.strip():  # every child ran and was reported: the script's own exit hung, not a child's start
            pytest.fail(f"the script hung after its children ran ({said.strip()}): in its exit, not a child's start")
        pytest.fail("starting the child hung while another thread was inside a matrix product")
    assert out.returncode == 0, out.stderr
    # the race is rare; what makes it possible is not: a child started with the process's at-fork handlers run
    assert json.loads(out.stdout) == {"statuses": ["result"] * 3, "forks": 0}
