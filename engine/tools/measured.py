"""A command's wall time and peak resident memory, measured from a small process of its own.

Measured from a large process (``ascendsim bench`` holds a 3.7 M-event replay by the time it measures its scale
table), a child's peak memory would read at least the parent's: Linux keeps the parent's high-water mark through
``fork`` and ``exec`` in the child's ``ru_maxrss`` (a 13 MB ``python -c`` spawned by a 1.5 GB process reported
1552 MB). A fresh interpreter has a small memory of its own, and its children inherit only that, so the command
is started by one (:data:`_MEASURE`), which reports what ``wait4`` says of it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

_MEASURE = """
import json, os, subprocess, sys, tempfile, time
with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
    t0 = time.perf_counter()
    child = subprocess.Popen(json.loads(sys.argv[1]), stdout=out, stderr=err)
    _pid, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - t0
    child.returncode = os.waitstatus_to_exitcode(status)
    out.seek(0)
    err.seek(0)
    doc = {"status": child.returncode, "wall_s": wall, "peak_kb": usage.ru_maxrss}
    json.dump({**doc, "stdout": out.read().decode(), "stderr": err.read().decode()}, sys.stdout)
"""


@dataclass(frozen=True)
class Measured:
    status: int  # the command's exit status
    wall_s: float  # from its start to its end
    peak_kb: int  # its peak resident memory, KiB (``ru_maxrss`` on Linux)
    stdout: str
    stderr: str


def measured(cmd: list[str]) -> Measured:
    """Run ``cmd`` (started by a small interpreter of its own, see the module) and measure it."""
    helper = subprocess.run(
        [sys.executable, "-c", _MEASURE, json.dumps(cmd)], capture_output=True, text=True, check=True
    )
    doc = json.loads(helper.stdout)
    return Measured(doc["status"], doc["wall_s"], doc["peak_kb"], doc["stdout"], doc["stderr"])
