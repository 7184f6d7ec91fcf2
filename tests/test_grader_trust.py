"""Nothing the child returns is trusted: recordings edited after the fact do not replay, or do not count.

A real recording of lesson 3's reference (made once, in the sandbox) is edited the way a submission that
forges its result channel could edit it; the grader's worker then replays it. Every edit is TAMPERED, or
replays into a run that fails honestly. Also the attacks on the simulated hardware, the run's findings
and the host tiler's cost, each on the lesson that would have rewarded it.
"""

from __future__ import annotations

import copy
import os

import pytest
from hostile_submissions import fast_hardware_l5, free_tiler_l9
from lesson_submissions import reference_recording, write

from lessons import catalog, sandbox
from lessons.child import run_child
from lessons.grader import grade_file, judge_in_worker
from lessons.judge import judge_frame, references
from lessons.wire import encode

L3 = catalog.get(3)

if sandbox.missing():
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: {sandbox.missing()}", pytrace=False)
    pytest.skip(sandbox.missing(), allow_module_level=True)


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    return reference_recording(L3, tmp_path_factory.mktemp("rec"))


def _judge(doc: dict, tmp_path, lesson=L3) -> dict:
    frame = tmp_path / "frame.bin"
    frame.write_bytes(encode({"status": "result", "message": ""}) + encode(doc))
    return judge_in_worker(lesson, frame, references(lesson), lesson.limits)


def _find(doc: dict, name: str) -> list:
    return next(e for e in doc["host"] if e[0] == "c" and e[2] == name)


def test_the_untouched_recording_replays_and_passes(recording, tmp_path):
    out = _judge(recording, tmp_path)
    assert "tampered" not in out and all(c["passed"] for c in out["criteria"])


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ("private", "is not part of the simulator's API"),
        ("finish", "is not part of the simulator's API"),
        ("host_compute", "is not part of the simulator's API"),
        ("unknown_handle", "used before it exists"),
        ("unknown_run", "this lesson does not have"),
        ("other_ptr", "returned"),
        ("library", "may not use"),
        ("extra_block", "never ran here"),
        ("dropped_block", "is not in the recording"),
        ("extra_read", "never ran here"),
        ("short_read", "does not match the recorded host data"),
        ("not_a_list", "host is not a list"),
        ("param_code", "kernel parameter names"),
        ("param_many", "kernel parameter names"),
        ("param_type", "kernel parameter names"),
    ],
)
def test_an_edited_recording_is_tampered(recording, tmp_path, edit, message):
    doc = copy.deepcopy(recording)
    sim = next(e[1] for e in doc["host"] if e[0] == "s")
    if edit == "private":
        doc["host"].insert(3, ["g", sim, "_finished", None, None, None, -1, 0])
    elif edit == "finish":
        doc["host"].insert(3, ["c", sim, "finish", [], {}, None, -1, 0])
    elif edit == "host_compute":
        doc["host"].insert(3, ["c", sim, "host_compute", ["tiling", -5.0, "tiling"], {}, None, -1, 0])
    elif edit == "unknown_handle":
        doc["host"].insert(3, ["c", 9999, "malloc", [16, 0], {}, None, -1, 0])
    elif edit == "unknown_run":
        next(e for e in doc["host"] if e[0] == "s")[2] = "elsewhere"
        message = "a run 'elsewhere' this lesson does not have"
    elif edit == "other_ptr":
        entry = _find(doc, "malloc")
        entry[5] = {"t": [12345, 0]}
    elif edit == "library":
        launch = _find(doc, "launch_kernel")
        launch[3][0] = {"r": "engine.kernels.matmul:matmul_tiled"}
    elif edit == "extra_block":
        doc["blocks"]["1/0/99/0"] = []
    elif edit == "dropped_block":
        doc["blocks"].pop(sorted(doc["blocks"])[0])
    elif edit == "extra_read":
        key = sorted(doc["reads"])[0]
        doc["reads"][key].append(copy.deepcopy(doc["reads"][key][0]))
    elif edit == "short_read":
        key = sorted(doc["reads"])[0]
        doc["reads"][key][0][1] = doc["reads"][key][0][1][:-2]
    elif edit == "not_a_list":
        doc["host"] = {"oops": 1}
    elif edit.startswith("param_"):  # the kernel's parameter names label buffers in the views: names, nothing else
        jit = next(e for e in doc["host"] if e[0] == "j")
        jit[3] = {
            "param_code": ["x", "__import__('os').system('id')"],
            "param_many": [f"p{i}" for i in range(65)],
            "param_type": ["x", {"r": "os:system"}],
        }[edit]
    out = _judge(doc, tmp_path)
    assert "tampered" in out and message in out["tampered"], out


def test_claimed_outputs_are_checked_against_the_replay(recording, tmp_path):
    doc = copy.deepcopy(recording)
    y = doc["outputs"]["y_main"].copy()
    y.view("uint16")[0] ^= 1  # right within the tolerance, but not the bytes the replay's device brought back
    doc["outputs"]["y_main"] = y
    out = _judge(doc, tmp_path)
    numerics = next(c for c in out["criteria"] if c["id"] == "numerics")
    assert not numerics["passed"] and numerics["off_device"] and "not computed by the device" in str(numerics["yours"])


def test_a_recording_that_would_exhaust_the_grader_is_stopped_by_the_workers_limits(recording, tmp_path):
    """A forged recording need not have run in the child: 48 GiB of device memory, each byte touched."""
    from engine import Simulation

    doc = copy.deepcopy(recording)
    at = next(i for i, e in enumerate(doc["host"]) if e[0] == "c" and e[2] == "malloc")
    first, rt = doc["host"][at], doc["host"][at][1]
    sim = Simulation()  # where the replay's allocator will put the next buffer, as a forger would work it out
    sim.acl.init()
    sim.acl.rt.set_device(0)
    sim.acl.rt.malloc(*first[3])
    big = 48 << 30
    ptr, _ = sim.acl.rt.malloc(big, 0)
    doc["host"][at + 1 : at + 1] = [
        ["c", rt, "malloc", [big, 0], {}, {"t": [ptr, 0]}, -1, 0],
        ["c", rt, "memset", [ptr, big, 1, big], {}, 0, -1, 0],
    ]
    out = _judge(doc, tmp_path)
    assert "tampered" in out, out


def test_faster_hardware_in_the_child_does_not_make_the_replay_faster(tmp_path):
    lesson = catalog.get(5)
    result = grade_file(lesson, write(tmp_path, "fast", fast_hardware_l5()), "fast")
    assert result.verdict == "FAIL", result.messages
    failed = {c.id for c in result.criteria if c.passed is False}
    assert "speedup" in failed, failed


def test_a_free_tiler_in_the_child_costs_the_grader_full_price(tmp_path):
    lesson = catalog.get(9)
    result = grade_file(lesson, write(tmp_path, "free", free_tiler_l9()), "free")
    assert result.verdict in ("FAIL", "TAMPERED"), result.messages
    if result.verdict == "FAIL":
        assert "host_time" in {c.id for c in result.criteria if c.passed is False}


_SPIN = "while True:\n    pass\n"
_IGNORE_XCPU = "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\n"


@pytest.mark.parametrize(
    ("tail", "status", "message"),
    [
        (_SPIN, "TIMEOUT", "2 s of CPU time"),
        (_IGNORE_XCPU + _SPIN, "TIMEOUT", "2 s of CPU time"),  # the kernel's SIGKILL a second later is not waited for
        (
            "import threading\nthreading.Thread(target=lambda: [0 for _ in iter(int, 1)]).start()\n" + _SPIN,
            "TIMEOUT",
            "2 s of CPU time",
        ),
        ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", "CRASH", "signal 9"),
        (_IGNORE_XCPU + "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", "CRASH", "signal 9"),
    ],
    ids=["spin", "spin_ignoring_sigxcpu", "two_threads", "self_kill", "self_kill_ignoring_sigxcpu"],
)
def test_the_cpu_verdict_is_judged_from_outside(tmp_path, tail, status, message):
    """CPU time is read from /proc by the grader: a process that kills itself with SIGKILL is a crash, not a
    CPU timeout, and one that ignores SIGXCPU is stopped at the limit all the same."""
    limits = L3.limits.replace(cpu_s=2, wall_s=30)
    child = run_child(L3, write(tmp_path, "sub", L3.solution_file.read_text(encoding="utf-8") + "\n" + tail), limits)
    assert (child.status, message in child.message) == (status, True), child.message
    if status == "TIMEOUT":
        assert child.wall_s < 15  # stopped by the CPU limit, not by the wall time


def test_the_replay_says_how_far_it_is_from_its_own_count(recording, tmp_path):
    """Judging progress is the grader's count of host calls replayed and events recorded, call by call."""
    frame = tmp_path / "frame.bin"
    frame.write_bytes(encode({"status": "result", "message": ""}) + encode(recording))
    heard = []
    out = judge_frame(L3, frame, references(L3), progress=lambda *v: heard.append(v))
    assert all(c["passed"] for c in out["criteria"])
    total = len(recording["host"])
    assert [d for d, _, _ in heard] == list(range(1, total + 1)) and {t for _, t, _ in heard} == {total}
    events = [e for _, _, e in heard]
    assert events == sorted(events) and events[-1] > 0


def test_a_graded_file_reports_the_workers_replay_progress(tmp_path):
    lesson = catalog.get(7)  # long enough a replay for the worker's progress file to be read while it runs
    heard = []
    result = grade_file(lesson, lesson.solution_file, progress=lambda phase, v=None: heard.append((phase, v)))
    assert result.verdict == "PASS"
    assert [p for p, v in heard if v is None] == ["running", "judging"]
    values = [v for p, v in heard if v is not None]
    assert values and all(p == "judging" and 1 <= v["done"] <= v["total"] for (p, v) in heard if v is not None)
    assert [v["done"] for v in values] == sorted(v["done"] for v in values)
