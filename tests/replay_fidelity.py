"""Run by tests/test_grader_replay.py in a fresh process: lesson N's reference, run plainly and recorded + replayed,
on its visible cases and on hidden cases drawn from a fixed seed.

Prints one JSON line: per run, what differs between the plain run of the drive (no recording) and the
grader's replay of what the sandboxed child recorded (every trace column and table, findings, tasks, end
time: ``engine.trace.codec.run_to_doc`` of both), and per output whether the replay verified it and it
equals the plain run's. Both sides run in this process with one BLAS thread, as the grader's worker does.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import types
from pathlib import Path

import numpy as np

HIDDEN_SEED = 7


def _load(path: Path):
    module = types.ModuleType("exercise")
    module.__file__ = str(path)
    sys.modules["exercise"] = module
    exec(compile(path.read_bytes(), str(path), "exec"), module.__dict__)
    return module


def _differences(a, b) -> list[str]:
    from engine.trace.codec import run_to_doc

    doc_a, arr_a = run_to_doc(a)
    doc_b, arr_b = run_to_doc(b)
    out = [f"document field {k}" for k in sorted(set(doc_a) | set(doc_b)) if doc_a.get(k) != doc_b.get(k)]
    for k in sorted(set(arr_a) | set(arr_b)):
        if k not in arr_a or k not in arr_b or not np.array_equal(arr_a[k], arr_b[k]):
            out.append(f"column {k}")
    return out


def _same(x, y) -> bool:
    if isinstance(x, list | tuple):
        return isinstance(y, list | tuple) and len(x) == len(y) and all(map(_same, x, y))
    if x is None or y is None:
        return x is None and y is None
    return isinstance(y, np.ndarray) and np.array_equal(np.asarray(x), y)


def main(number: int) -> None:
    from lessons.catalog import get
    from lessons.child import run_child
    from lessons.credit import NotFromDevice
    from lessons.hidden import draw, runs
    from lessons.reference import Plain
    from lessons.replay import replay
    from lessons.wire import decode, read_first, split

    lesson = get(number)
    drive = lesson.module("drive")
    cases = draw(lesson, HIDDEN_SEED)  # the hidden cases too: their runs replay like the visible ones
    work = Path(tempfile.mkdtemp())
    try:
        copy = work / "solution.py"  # the same file name on both sides: the trace's source lines are the same
        shutil.copy(lesson.solution_file, copy)
        plain = Plain(drive, cases)
        drive.collect(_load(copy), plain)
        child = run_child(lesson, copy, hidden=cases)
        assert child.status == "result", (child.status, child.message)
        _, at = read_first(child.frame)
        doc = decode(split(child.frame.read_bytes()[at:])[0])
        replayed = replay(doc, drive, getattr(drive, "LIBRARY", {}), runs=runs(drive, cases))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report = {
        "runs": sorted(plain.runs),
        "replayed": sorted(replayed.runs),
        "differences": {name: _differences(plain.runs[name], replayed.runs[name]) for name in plain.runs},
        "outputs": {
            key: {
                "verified": not _has(value, NotFromDevice),
                "equal": _same(plain.outputs[key], value),
            }
            for key, value in replayed.outputs.items()
        },
        "events": {name: len(run.trace) for name, run in replayed.runs.items()},
    }
    print(json.dumps(report))


def _has(value, kind) -> bool:
    if isinstance(value, list):
        return any(_has(v, kind) for v in value)
    return isinstance(value, kind)


if __name__ == "__main__":
    main(int(sys.argv[1]))
