"""A launch's TilingData travels in the recording as plain data and is validated on replay.

A real recording of lesson 2's reference (made once, in the sandbox) is edited the way a submission that
forges its result channel could edit it: code where a name should be, a type that names a module, a struct
over CANN's capacity, a key the kernel has no variant for, a tiling the kernel claims to have read that is
not the one launched. Each is TAMPERED. And a submission that rewrites its own recording of the tiling, in
the child, is caught the same way.
"""

from __future__ import annotations

import copy
import os

import pytest
from hostile_submissions import forged_tiling_l2
from lesson_submissions import reference_recording, write

from lessons import catalog, sandbox
from lessons.grader import grade_file, judge_in_worker
from lessons.judge import references
from lessons.wire import encode

L2 = catalog.get(2)

if sandbox.missing():
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: {sandbox.missing()}", pytrace=False)
    pytest.skip(sandbox.missing(), allow_module_level=True)


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    return reference_recording(L2, tmp_path_factory.mktemp("rec"))


def _judge(doc: dict, tmp_path) -> dict:
    frame = tmp_path / "frame.bin"
    frame.write_bytes(encode({"status": "result", "message": ""}) + encode(doc))
    return judge_in_worker(L2, frame, references(L2), L2.limits)


def _tiling(doc: dict) -> dict:
    """The raw tiling record of the recording's first launch."""
    launch = next(e for e in doc["host"] if e[0] == "c" and e[2] == "launch_kernel")
    return next(a["rtd"] for a in launch[3] if isinstance(a, dict) and "rtd" in a)


def _first_read(doc: dict) -> list:
    """The first get_tiling_data a kernel block recorded."""
    return next(e for block in doc["blocks"].values() for e in block if e[0] == "c" and e[2] == "get_tiling_data")


def test_the_untouched_recording_replays_and_passes(recording, tmp_path):
    out = _judge(recording, tmp_path)
    assert "tampered" not in out and all(c["passed"] for c in out["criteria"])


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ("name_code", "TilingData name must be a C++ identifier"),
        ("field_code", "field must be a C++ identifier"),
        ("type_module", "has one of the types"),
        ("out_of_range", "is a uint32 field: 0..4294967295"),
        ("over_capacity", "holds at most 16384 B"),
        ("extra_key", "raw tiling record is"),
        ("unknown_key", "returned"),
        ("read_other", "returned"),
        ("keys_code", "asc.jit tiling_keys"),
    ],
)
def test_an_edited_tiling_is_tampered(recording, tmp_path, edit, message):
    doc = copy.deepcopy(recording)
    raw = _tiling(doc)
    if edit == "name_code":
        raw["s"]["n"] = "__import__('os').system('id')"
    elif edit == "field_code":
        raw["s"]["f"][0][0] = "__class__"
    elif edit == "type_module":
        raw["s"]["f"][0][1] = "os.system"
    elif edit == "out_of_range":
        raw["s"]["f"][0][2] = 1 << 40
    elif edit == "over_capacity":
        raw["s"]["f"] += [[f"pad{i}", "uint64", 0] for i in range(2048)]
    elif edit == "extra_key":
        raw["exec"] = "print(1)"
    elif edit == "unknown_key":  # the kernel has variants 1 and 2: the replay's launch is refused, the child's was not
        raw["key"] = 9
    elif edit == "read_other":  # a block claims it read a tiling other than the one launched
        _first_read(doc)[5]["td"]["f"][1][2] += 1
    elif edit == "keys_code":
        jit = next(e for e in doc["host"] if e[0] == "j")
        jit[4]["tiling_keys"] = {"t": ["os.system"]}
    out = _judge(doc, tmp_path)
    assert "tampered" in out and message in out["tampered"], out


def test_a_tiling_rewritten_in_the_childs_own_recording_is_tampered(tmp_path):
    result = grade_file(L2, write(tmp_path, "forged", forged_tiling_l2()), "forged")
    assert result.verdict == "TAMPERED", (result.verdict, result.messages)
