"""Every finding carries its message in Chinese (``Finding.message_zh``), written where it is made from the same
facts as the English one: API names, buffer names, numbers and file:line kept, no English sentence left."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from engine import Simulation, asc
from engine.host import acl_codes as C
from engine.trace.codec import run_from_doc, run_to_doc
from engine.trace.findings import Finding
from tests.conftest import MIB, ROUND, dev_alloc, host_alloc
from tests.kernel_helpers import device, empty_device
from tests.zh_text import CJK, assert_chinese, english_left

ENGINE = Path(__file__).resolve().parents[1] / "engine"


def test_the_helper_fails_on_an_english_sentence():
    assert english_left("set_device: device_id must be 0, got 1") == ["must", "got"]
    assert english_left("set_device: device_id 必须为 0（lessons/l01/exercise.py:12），实际为 1 VECOUT TQue") == []


# -- the shipped lessons --------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("number", [1, 10])
def test_every_finding_of_lessons_1_and_10_is_in_chinese(number):
    from app.present.walkthrough import run_lesson
    from lessons import catalog

    lesson = next(les for les in catalog.lessons() if les.number == number)
    run = run_lesson(lesson)
    findings = getattr(run, "result", run).findings
    assert findings
    for f in findings:
        assert_chinese(f.message_zh)
    if number == 10:
        assert {f.kind for f in findings} == {"deadlock", "acl-error", "race"}
        assert any("VECOUT TQue" in f.message_zh and "exercise.py:101" in f.message_zh for f in findings)


# -- every AclError site, by a bad call -----------------------------------------------------------------------
def _sim():
    s = Simulation(ROUND, numerics=True)
    s.acl.init()
    s.acl.rt.set_device(0)
    return s


def _stream(s):
    return s.acl.rt.create_stream()[0]


def _destroyed_stream(s):
    h = _stream(s)
    s.acl.rt.destroy_stream(h)
    s.acl.rt.synchronize_stream(h)


def _destroyed_event(s):
    e = s.acl.rt.create_event()[0]
    s.acl.rt.destroy_event(e)
    s.acl.rt.record_event(e, 0)


def _freed(s):
    d = dev_alloc(s, 64)
    s.acl.rt.free(d)
    return d


@asc.jit
def _noop(x: asc.GlobalAddress):
    pass


BAD_CALLS = {
    "init twice": lambda s: s.acl.init(),
    "set_device(1)": lambda s: s.acl.rt.set_device(1),
    "reset_device(1)": lambda s: s.acl.rt.reset_device(1),
    "priority": lambda s: s.acl.rt.create_stream_with_config(9, 0),
    "memset count": lambda s: s.acl.rt.memset(dev_alloc(s, 64), 8, 0, 64),
    "elapsed before record": lambda s: s.acl.rt.event_elapsed_time(*(s.acl.rt.create_event()[0] for _ in "ab")),
    "block_dim": lambda s: s.acl.rt.launch_kernel(_noop, 0, 0, asc.GlobalAddress(dev_alloc(s, 64))),
    "freed kernel argument": lambda s: s.acl.rt.launch_kernel(_noop, 1, 0, asc.GlobalAddress(_freed(s))),
    "ptr_to_numpy device": lambda s: s.acl.util.ptr_to_numpy(dev_alloc(s, 64), 8, np.uint8),
    "ptr_to_numpy garbage": lambda s: s.acl.util.ptr_to_numpy(12345, 8, np.uint8),
    "default stream": lambda s: s.acl.rt.destroy_stream(0),
    "not a stream": lambda s: s.acl.rt.synchronize_stream(77),
    "destroyed stream": _destroyed_stream,
    "not an event": lambda s: s.acl.rt.synchronize_event(77),
    "destroyed event": _destroyed_event,
    "pointer type": lambda s: s.acl.rt.memcpy(dev_alloc(s, 64), 64, "x", 64, C.ACL_MEMCPY_HOST_TO_DEVICE),
    "count": lambda s: s.acl.rt.memcpy(dev_alloc(s, 64), 64, host_alloc(s, 64), 0, C.ACL_MEMCPY_HOST_TO_DEVICE),
    "dst_max": lambda s: s.acl.rt.memcpy(dev_alloc(s, 64), 8, host_alloc(s, 64), 64, C.ACL_MEMCPY_HOST_TO_DEVICE),
    "memcpy kind": lambda s: s.acl.rt.memcpy(dev_alloc(s, 64), 64, host_alloc(s, 64), 64, 9),
    "no allocation": lambda s: s.acl.rt.memcpy(dev_alloc(s, 64), 64, 12345, 64, C.ACL_MEMCPY_HOST_TO_DEVICE),
    "kind mismatch": lambda s: s.acl.rt.memcpy(dev_alloc(s, 64), 64, host_alloc(s, 64), 64, 2),
    "use after free": lambda s: s.acl.rt.memcpy(_freed(s), 64, host_alloc(s, 64), 64, C.ACL_MEMCPY_HOST_TO_DEVICE),
    "overrun": lambda s: s.acl.rt.memcpy(dev_alloc(s, 100) + 50, 4096, host_alloc(s, 4096), 51, 1),
    "device outside": lambda s: s.acl.rt.memset(dev_alloc(s, 64) + 2 * MIB, 8, 0, 8),
    "malloc size": lambda s: s.acl.rt.malloc(0, 0),
    "malloc policy": lambda s: s.acl.rt.malloc(64, 9),
    "out of memory": lambda s: s.acl.rt.malloc(1 << 50, 0),
    "free bad": lambda s: s.acl.rt.free(12345),
    "free interior": lambda s: s.acl.rt.free(dev_alloc(s, 4096) + 64),
    "double free": lambda s: s.acl.rt.free(_freed(s)),
    "malloc_host size": lambda s: s.acl.rt.malloc_host(0),
    "malloc_host limit": lambda s: s.acl.rt.malloc_host(1 << 41),
    "free_host bad": lambda s: s.acl.rt.free_host(12345),
    "double free_host": lambda s: [s.acl.rt.free_host(h) for h in [host_alloc(s, 64)] * 2],
    "not an array": lambda s: s.acl.util.numpy_to_ptr([1, 2]),
    "not contiguous": lambda s: s.acl.util.numpy_to_ptr(np.zeros((4, 4))[:, ::2]),
    "matmul m": lambda s: s.acl.op.matmul(0, 0, 0, 0, 16, 16, 0),
    "matmul dtype": lambda s: s.acl.op.matmul(0, 0, 0, 16, 16, 16, 0, "int8"),
    "never recorded event": lambda s: s.acl.rt.synchronize_event(s.acl.rt.create_event()[0]),
}


@pytest.mark.parametrize("call", list(BAD_CALLS.values()), ids=list(BAD_CALLS))
def test_every_failed_acl_call_says_so_in_chinese(call):
    sim = _sim()
    before = len(sim.findings)
    try:
        call(sim)
        texts = [(f.message, f.message_zh) for f in sim.findings[before:]]
    except C.AclError as exc:  # acl.util raises (pyACL's util functions return no code)
        texts = [(exc.detail, exc.detail_zh)]
    assert texts, "the bad call made no finding"
    for en, zh in texts:
        assert en and en != zh
        assert_chinese(zh)


def test_calls_before_init_and_without_device_say_so_in_chinese():
    sim = Simulation(ROUND)
    sim.acl.rt.malloc_host(64)
    sim.acl.finalize()
    sim.acl.init()
    sim.acl.rt.malloc(64, 0)
    sim.acl.init()
    assert len(sim.findings) == 4
    for f in sim.findings:
        assert_chinese(f.message_zh)


def test_limits_of_streams_and_events_say_so_in_chinese():
    sim = _sim()
    sim.profile = replace(sim.profile, limits=replace(sim.profile.limits, max_streams=3, max_events=2))
    for create in (sim.acl.rt.create_stream, sim.acl.rt.create_event):
        for _ in range(3):
            create()
    assert [f.code for f in sim.findings] == [C.ACL_ERROR_RT_NO_STREAM_RESOURCE, C.ACL_ERROR_RT_NO_EVENT_RESOURCE]
    for f in sim.findings:
        assert_chinese(f.message_zh)


def test_strict_mode_raises_the_chinese_message_too():
    sim = Simulation(ROUND, strict=True)
    with pytest.raises(C.AclError) as info:
        sim.acl.rt.malloc(64, 0)
    assert_chinese(info.value.detail_zh)


def test_mixed_kernel_on_a_coupled_chip_says_so_in_chinese():
    from tests.test_mixed_kernel import flag_misuse

    sim, stream = device("ascend910a")
    sim.acl.rt.launch_kernel(flag_misuse, 1, stream, asc.GlobalAddress(empty_device(sim, 64)), "none")
    assert_chinese(sim.findings[-1].message_zh)


# -- deadlocks, races and kernel faults in their variants -------------------------------------------------------
def test_stream_deadlocks_in_every_variant_are_in_chinese():
    from tests import test_deadlock

    texts = []
    for name in (
        "test_wait_on_an_event_never_recorded",
        "test_cross_stream_wait_cycle",
        "test_deadlock_found_at_the_end_of_a_run_without_sync",
    ):
        made: list[Finding] = []
        real = Simulation.report

        def report(self, finding, made=made, real=real):
            made.append(finding)
            real(self, finding)

        Simulation.report = report
        try:
            getattr(test_deadlock, name)()
        finally:
            Simulation.report = real
        texts += [f.message_zh for f in made]
    assert any("环：流 1 -> 流 2 -> 流 1" in t for t in texts)
    assert any("永远不会被 record" in t for t in texts)
    for t in texts:
        assert_chinese(t)


def _kernel_findings(kernel, *extra):
    from tests.test_kernel_sync import launch_one

    _ret, result, _sim = launch_one(kernel, *extra)
    return result.findings


@pytest.mark.parametrize(
    "name",
    [
        "never_set_kernel",
        "cycle_kernel",
        "empty_deque_kernel",
        "never_freed_kernel",
        "too_big_kernel",
        "misaligned_kernel",
        "misaligned_address_kernel",
        "out_of_bounds_kernel",
    ],
)
def test_kernel_faults_are_in_chinese(name):
    from tests import test_kernel_sync

    findings = _kernel_findings(getattr(test_kernel_sync, name))
    assert findings
    for f in findings:
        assert_chinese(f.message_zh)


def test_a_crash_in_kernel_code_is_framed_in_chinese_with_its_own_text():
    from tests.test_kernel_sync import crashing_kernel

    (f,) = [f for f in _kernel_findings(crashing_kernel) if f.kind == "kernel-error"]
    assert "核函数代码抛出 ZeroDivisionError: oops（位于 tests/test_kernel_sync.py:" in f.message_zh


@pytest.mark.parametrize("what", ["bad-id", "mode-1", "overflow"])
def test_cross_core_flag_misuse_is_in_chinese(what):
    from tests.kernel_helpers import launch
    from tests.test_mixed_kernel import flag_misuse

    _ret, result, _sim, _args = launch(flag_misuse, 2, lambda s: asc.GlobalAddress(empty_device(s, 64)), what)
    assert result.findings
    for f in result.findings:
        assert_chinese(f.message_zh)


@pytest.mark.slow
@pytest.mark.parametrize(("skip_wait", "skip_set"), [(True, False), (False, True)])
def test_the_cross_core_race_and_deadlock_of_a_mixed_kernel_are_in_chinese(skip_wait, skip_set):
    from tests.test_mixed_kernel import run_leaky

    *_, result = run_leaky(256, 256, 128, cores=1, skip_wait=skip_wait, skip_set=skip_set)
    assert result.findings
    for f in result.findings:
        assert_chinese(f.message_zh)


def test_races_inside_a_kernel_are_in_chinese():
    from tests.test_kernel_sync import run_scale

    *_, result = run_scale(sync=False)
    (race,) = [f for f in result.findings if f.kind == "race"]
    assert "写后读数据竞争" in race.message_zh and "set_flag/wait_flag" in race.message_zh
    assert_chinese(race.message_zh)


# -- every raise site writes both languages (read from the source, so a new site is checked too) -----------------
def _zh_argument(call: ast.Call) -> ast.expr | None:
    name = call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", "")
    index = {"AclError": 2, "KernelError": 2, "KernelFault": 3, "fail": 1}.get(name)
    if index is None:
        return None
    if any(isinstance(a, ast.Starred) for a in call.args):
        return ast.Constant("（两种语言由消息函数给出）")  # *unmatched_message(...): a (English, Chinese) pair
    assert len(call.args) > index, f"{name} without its Chinese message at line {call.lineno}"
    return call.args[index]


def _literal(node: ast.expr) -> str:
    """The text of a string or f-string, each placeholder as a name (its value is a fact, kept as it is)."""
    if isinstance(node, ast.Constant):
        return str(node.value)
    if isinstance(node, ast.JoinedStr):
        return "".join(_literal(v) if isinstance(v, ast.Constant) else " VALUE " for v in node.values)
    if isinstance(node, ast.BinOp):
        return _literal(node.left) + _literal(node.right)
    return " VALUE "


def test_every_raise_site_in_the_engine_has_a_chinese_message():
    sites = 0
    for path in ENGINE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and (arg := _zh_argument(node)) is not None:
                text = _literal(arg)
                where = f"{path.relative_to(ENGINE)}:{node.lineno}"
                if text.strip() in ("", "VALUE"):
                    continue  # passed on (finding.message_zh, message_zh) or the host log's empty probe
                assert CJK.search(text), where
                assert not english_left(text), (where, english_left(text))
                sites += 1
    assert sites > 90


def test_findings_cannot_be_made_without_their_chinese_message():
    with pytest.raises(TypeError):
        Finding("race", "a race", None, 0, "")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        C.AclError(C.ACL_ERROR_INVALID_PARAM, "bad")  # type: ignore[call-arg]


# -- stored runs and the views ---------------------------------------------------------------------------------
def test_a_run_stored_without_message_zh_still_decodes():
    sim, _stream = device()
    sim.acl.rt.set_device(1)
    result = sim.finish()
    doc, arrays = run_to_doc(result)
    assert doc["findings"][0]["message_zh"]
    for f in doc["findings"]:
        del f["message_zh"]
    (f,) = run_from_doc(doc, arrays).findings
    assert f.message_zh == "" and f.text("zh") == f.message and "device_id must be 0" in f.message


def test_report_views_show_the_chinese_message_in_zh():
    from app.present.replay import Replay
    from app.present.report_views import metrics_view

    sim = _sim()
    sim.acl.rt.set_device(1)
    replay = Replay(sim.finish())
    (zh,) = metrics_view(replay, "zh")["findings"]
    (en,) = metrics_view(replay, "en")["findings"]
    assert "device_id 必须为 0" in zh["message"] and zh["label"] == "ACL 错误"
    assert "device_id must be 0" in en["message"]


def test_the_no_findings_criterion_shows_the_findings_in_both_languages():
    from lessons.checks import findings, no_findings, pick

    sim = _sim()
    sim.acl.rt.set_device(1)
    problems = findings(sim.finish())
    criterion = no_findings(problems)
    assert not criterion.passed
    assert pick(criterion.yours, "en").startswith("acl-error: acl.rt.set_device: set_device: device_id must be 0")
    assert pick(criterion.yours, "zh").startswith("ACL 错误: acl.rt.set_device: set_device: device_id 必须为 0")
