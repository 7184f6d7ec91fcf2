"""The grader is safe and fair: each broken or cheating submission gets its own verdict, the others carry on."""

import json
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from lesson_submissions import l3_variants, write

from lessons import catalog
from lessons.grader import Entry, grade_many, run_child
from lessons.wire import WireError, decode, encode, split

L3 = catalog.get(3)
REPO = Path(__file__).resolve().parents[1]
SLOW_TO_STOP = {"loop", "sleep"}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory):
    """Every variant graded together, two at a time: one bad submission must not disturb another."""
    folder = tmp_path_factory.mktemp("subs")
    variants = l3_variants()
    quick = [Entry(n, folder / n, write(folder, n, src)) for n, (src, _) in variants.items() if n not in SLOW_TO_STOP]
    slow = [Entry(n, folder / n, write(folder, n, src)) for n, (src, _) in variants.items() if n in SLOW_TO_STOP]
    results = grade_many(L3, quick, jobs=2, limits=L3.limits.replace(wall_s=30))
    results += grade_many(L3, slow, jobs=2, limits=L3.limits.replace(wall_s=2))
    return {r.id: r for r in results}, {n: want for n, (_, want) in variants.items()}


def test_each_submission_gets_its_verdict(verdicts):
    got, want = verdicts
    assert {n: r.verdict for n, r in got.items()} == want


def test_the_messages_say_what_happened(verdicts):
    got, _ = verdicts
    assert "still running after 2 s" in got["loop"].messages[0]
    assert got["exit0"].messages == ["sys.exit(0) was called"]
    assert "os._exit" in got["os_exit0"].messages[0]
    assert "os.fork is not allowed" in got["fork"].messages[0] and "exercise.py:" in got["fork"].messages[0]
    assert "importing subprocess is not allowed" in got["spawn"].messages[0]
    assert "outside the exercise's folder" in got["write_outside"].messages[0]
    assert "check.judge" in got["patch_check"].messages[0]
    assert "drive.collect" in got["patch_drive"].messages[0]
    assert "printed more than 256 KiB" in got["flood"].messages[0]
    syntax = got["syntax"].messages[0]
    assert 'File "exercise.py", line' in syntax and "SyntaxError" in syntax and "/tmp" not in syntax
    raised = got["raises"].messages[0]
    assert 'File "exercise.py"' in raised and "ValueError: my own bug" in raised and "harness" not in raised
    assert not Path("/tmp/ascendsim-outside.txt").exists()


def test_fake_pass_output_and_report_files_are_ignored(verdicts):
    got, _ = verdicts
    fake = got["fake_pass"]
    assert fake.verdict == "FAIL" and fake.score < 100
    assert "PASS: all criteria passed" in fake.stdout  # what it printed is shown, never believed


def test_host_numpy_has_right_numbers_but_no_device_evidence(verdicts):
    got, _ = verdicts
    cheat = {c.id: c.passed for c in got["host_numpy"].criteria}
    assert cheat["numerics"] and not cheat["on_device"] and got["host_numpy"].score == 0


def test_good_and_broken_submissions_do_not_disturb_each_other(verdicts):
    got, _ = verdicts
    assert got["good"].verdict == "PASS" and got["good"].score == 100


def _fake_harness(tmp_path, body: str) -> Path:
    script = tmp_path / "fake_harness.py"
    script.write_text(
        f"import os, sys, time\nsys.path.insert(0, {str(REPO)!r})\nfd = int(sys.argv[1])\n"
        "control = __import__('json').loads(sys.stdin.readline())\n" + body,
        encoding="utf-8",
    )
    return script


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def test_the_whole_process_group_is_killed(tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    body = (
        "if os.fork() == 0:\n"
        f"    open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
        "    time.sleep(600)\n"
        "    os._exit(0)\n"
        "time.sleep(0.3)\n"
        "os._exit(0)\n"
    )
    child = run_child(L3, write(tmp_path, "s", "x = 1\n"), L3.limits.replace(wall_s=20), _fake_harness(tmp_path, body))
    assert child.status == "EARLY_EXIT"
    pid = int(pid_file.read_text())
    deadline = time.time() + 5
    while _alive(pid) and time.time() < deadline:
        time.sleep(0.05)
    assert not _alive(pid), "the forked grandchild survived its grader"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "from lessons.wire import encode\nf = encode({'token': control['token'], 'status': 'result'})\n"
            "os.write(fd, f + f)\n",
            "carried 2 frames",
        ),
        (
            "from lessons.wire import encode\nos.write(fd, encode({'token': 'guessed', 'status': 'result'}))\n",
            "does not carry this run's token",
        ),
        ("os.write(fd, b'PASS PASS PASS')\n", "malformed frame"),
    ],
)
def test_forged_or_doubled_frames_are_tampering(tmp_path, body, message):
    child = run_child(L3, write(tmp_path, "s", "x = 1\n"), L3.limits.replace(wall_s=20), _fake_harness(tmp_path, body))
    assert child.status == "TAMPERED" and message in child.message


def test_frames_carry_plain_data_only():
    doc = {"a": np.arange(6, dtype=np.float16).reshape(2, 3), "b": [1, "x", None, 2.5], "c": {"d": np.int64(4)}}
    back = decode(encode(doc))
    assert back["a"].dtype == np.float16 and back["a"].shape == (2, 3) and (back["a"] == doc["a"]).all()
    assert back["b"] == [1, "x", None, 2.5] and back["c"] == {"d": 4}
    frame = encode({"a": np.zeros(3)})
    header_len = int.from_bytes(frame[8:16], "little")
    header = json.loads(frame[16 : 16 + header_len])
    header["arrays"][0][0] = "object"
    forged = json.dumps(header).encode()
    with pytest.raises(WireError, match="bad array spec"):
        decode(frame[:8] + len(forged).to_bytes(8, "little") + forged + frame[16 + header_len :])
    with pytest.raises(WireError):
        split(frame[:-3])
    assert len(split(frame + frame)) == 2


def test_patching_inside_the_child_cannot_reach_the_grader(tmp_path):
    from lessons import grader

    original = grader.judge
    sneaky = write(tmp_path, "s", "import sys\nsys.modules['lessons.grader'].judge = lambda *a: []\n")
    child = run_child(L3, sneaky, L3.limits.replace(wall_s=20))
    assert child.status == "exception" and "KeyError: 'lessons.grader'" in child.message  # not even loaded there
    assert grader.judge is original and "exercise" not in sys.modules
