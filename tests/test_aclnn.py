"""The two-phase aclnn call (engine/host/aclnn.py), an operator's InferShape and tiling (engine/host/op_def.py) and
gert::Shape: the right order runs, each wrong use fails with aclnn's code and a message naming the field and the
value in both languages, and the recording carries an aclTensor by value, refusing a hostile one."""

from __future__ import annotations

import re

import numpy as np
import pytest

from engine import Simulation, asc
from engine.host import acl_codes as C
from engine.host.aclnn import AclTensor
from engine.host.gert_shape import Shape, ShapeError
from engine.host.op_def import GRAPH_FAILED, GRAPH_SUCCESS, InferShapeContext, PlatformAscendC, aclnn_get_workspace_size
from engine.host.tiling_data import TilingContext, TilingDataError
from lessons.l12_operator_project import solution as sol
from lessons.recording import RecordingError, by_value, from_value
from tests.zh_text import assert_chinese


def _setup(shape=(4, 64)):
    sim = Simulation()
    acl = sim.acl
    assert acl.init() == 0 and acl.rt.set_device(0) == 0
    stream, _ = acl.rt.create_stream()
    n = int(np.prod(shape)) * 2
    ptrs = [acl.rt.malloc(n, C.ACL_MEM_MALLOC_HUGE_FIRST)[0] for _ in range(3)]
    x, y, z = (AclTensor(shape, asc.half, p) for p in ptrs)
    return sim, stream, (x, y), (z,)


def _codes(sim) -> list[tuple[int, str, str]]:
    return [(f.code, f.message, f.message_zh) for f in sim.finish().findings if f.kind == "acl-error"]


def test_the_two_phases_in_order_launch_the_kernel_once():
    sim, stream, ins, outs = _setup()
    size, executor, ret = aclnn_get_workspace_size(sim, sol.add_custom_def(), sol.add_custom, ins, outs)
    assert (ret, size) == (0, 16 * 1024 * 1024) and executor.workspace_size == size
    ws, _ = sim.acl.rt.malloc(size, C.ACL_MEM_MALLOC_HUGE_FIRST)
    assert sim.acl.nn.launch(ws, size, executor, stream) == 0
    assert sim.acl.rt.synchronize_stream(stream) == 0
    (record,) = sim.extra["aclnn"]
    assert record == {
        "op": "AddCustom",
        "output_shapes": [[4, 64]],
        "block_dim": 16,
        "tiling_key": sol.ALIGNED,
        "workspace_size": size,
        "launched": True,
        "workspace_given": size,
    }
    assert not sim.finish().findings


@pytest.mark.parametrize(
    ("misuse", "code", "words"),
    [
        ("no_executor", C.ACLNN_ERR_PARAM_NULLPTR, "executor is a null aclOpExecutor"),
        ("small_workspace", C.ACLNN_ERR_PARAM_INVALID, "workspaceSize >= 16777216 B"),
        ("null_workspace", C.ACLNN_ERR_PARAM_NULLPTR, "workspace is a null device address"),
        ("reused", C.ACLNN_ERR_PARAM_INVALID, "executor runs once"),
        ("not_executor", C.ACLNN_ERR_PARAM_INVALID, "executor is an aclOpExecutor"),
        ("forged_executor", C.ACLNN_ERR_PARAM_INVALID, "executor is an aclOpExecutor"),
    ],
)
def test_a_wrong_second_phase_fails_with_aclnns_code(misuse, code, words):
    sim, stream, ins, outs = _setup()
    size, executor, _ = aclnn_get_workspace_size(sim, sol.add_custom_def(), sol.add_custom, ins, outs)
    ws, _ = sim.acl.rt.malloc(size, C.ACL_MEM_MALLOC_HUGE_FIRST)
    nn = sim.acl.nn
    if misuse == "no_executor":
        ret = nn.launch(ws, size, None, stream)
    elif misuse == "small_workspace":
        ret = nn.launch(ws, size - 1, executor, stream)
    elif misuse == "null_workspace":
        ret = nn.launch(None, size, executor, stream)
    elif misuse == "reused":
        assert nn.launch(ws, size, executor, stream) == 0
        ret = nn.launch(ws, size, executor, stream)
    elif misuse == "forged_executor":  # an aclOpExecutor no GetWorkspaceSize made
        ret = nn.launch(ws, size, type(executor).__new__(type(executor)), stream)
    else:
        ret = nn.launch(ws, size, "executor", stream)
    assert ret == code
    (found,) = _codes(sim)
    assert found[0] == code and words in found[1] and found[2] and found[2] != found[1]
    assert_chinese(found[2])
    assert sum(r["launched"] for r in sim.extra["aclnn"]) == (misuse == "reused")


def test_a_first_phase_refuses_an_output_infershape_did_not_give_and_a_failed_infershape():
    sim, _, ins, (z,) = _setup()
    wrong = AclTensor((256,), asc.half, z.addr)
    size, executor, ret = aclnn_get_workspace_size(sim, sol.add_custom_def(), sol.add_custom, ins, (wrong,))
    assert (size, executor, ret) == (0, None, C.ACLNN_ERR_PARAM_INVALID)
    other = AclTensor((4, 32), asc.half, ins[1].addr)  # y's shape differs: InferShape fails
    assert aclnn_get_workspace_size(sim, sol.add_custom_def(), sol.add_custom, (ins[0], other), (z,))[2] == 161002
    nullptr = aclnn_get_workspace_size(sim, sol.add_custom_def(), sol.add_custom, (ins[0], None), (z,))
    assert nullptr[2] == C.ACLNN_ERR_PARAM_NULLPTR
    codes = _codes(sim)
    for _, _, zh in codes:
        assert_chinese(zh)
    messages = [m for _, m, _ in codes]
    assert "output 0 shape is what InferShape derived, (4, 64), got (256,)" in messages[0]
    assert "InferShape returns GRAPH_SUCCESS" in messages[1] and "input 1 is a null aclTensor" in messages[2]


def test_a_first_phase_refuses_a_bad_tiling_and_a_tensor_outside_its_buffer():
    sim, _, ins, outs = _setup()
    nn, raw = sim.acl.nn, TilingContext().get_raw_tiling_data()
    sol.AddCustomTilingData(total_length=256).save_to_buffer(raw)
    raw.tiling_key = 7
    assert nn.get_workspace_size("AddCustom", ins, outs, ((4, 64),), sol.add_custom, 4, raw, (0,))[2] == 161002
    raw.tiling_key = 1
    assert nn.get_workspace_size("AddCustom", ins, outs, ((4, 64),), sol.add_custom, 0, raw, (0,))[2] == 161002
    assert nn.get_workspace_size("AddCustom", ins, outs, ((4, 64),), sol.add_custom, 4, raw, (-1,))[2] == 161002
    big = AclTensor((4, 6400), asc.half, ins[0].addr)
    assert nn.get_workspace_size("AddCustom", (big, ins[1]), outs, ((4, 64),), sol.add_custom, 4, raw, ())[2] == 161002
    codes = _codes(sim)
    for _, _, zh in codes:
        assert_chinese(zh)
    messages = [m for _, m, _ in codes]
    assert "tiling key (SetTilingKey) is one of add_custom's keys (1, 2), got 7" in messages[0]
    assert "block_dim (SetBlockDim) is 1..65535, got 0" in messages[1]
    assert "workspace size 0 is 0.." in messages[2] and "got -1" in messages[2]
    assert "overruns" in messages[3]


def test_infershape_and_tiling_contexts_and_shape():
    context = InferShapeContext(((2, 3, 4), (2, 3, 4)), 1)
    assert sol.infer_shape(context) == GRAPH_SUCCESS and context.output_dims() == ((2, 3, 4),)
    assert sol.infer_shape(InferShapeContext(((2, 3), (3, 2)), 1)) == GRAPH_FAILED
    with pytest.raises(ShapeError, match=re.escape("GetOutputShape index is 0..0, got 1")):
        context.get_output_shape(1)
    tiling = TilingContext(((200,),), Simulation().profile)
    assert sol.tiling_func(tiling) == GRAPH_SUCCESS
    assert (tiling.get_block_dim(), tiling.get_tiling_key(), tiling.get_workspace_sizes(1)) == (13, 2, [16777216])
    assert PlatformAscendC(tiling.get_platform_info()).get_core_num_aiv() == 48
    with pytest.raises(TilingDataError, match=re.escape("GetInputShape index is 0..0, got 1")):
        tiling.get_input_shape(1)
    with pytest.raises(ShapeError, match=re.escape("PlatformAscendC takes context.get_platform_info()")):
        PlatformAscendC(TilingContext().get_platform_info())
    tiling.get_input_shape(0).set_dim(0, 7)  # a copy: the input's shape is read-only
    assert tiling.get_input_shape(0).dims() == (200,)
    shape = Shape((2, 3))
    shape.set_dim_num(3)
    shape.set_dim(2, 5)
    assert (shape.dims(), shape.get_shape_size(), shape.get_dim(1)) == ((2, 3, 5), 30, 3)
    with pytest.raises(ShapeError, match=re.escape("Shape has 1..8 dims, got 9")) as err:
        Shape(tuple(range(1, 10)))
    assert "必须有 1..8 个维度" in err.value.message_zh
    with pytest.raises(ShapeError, match=re.escape("SetDim value is an integer 0..2147483647, got -1")):
        shape.set_dim(0, -1)


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"shape": {"tp": [-1, 4]}}, "aclTensor shape[0] is an integer"),
        ({"shape": {"tp": list(range(1, 12))}}, "aclTensor shape has 1..8 dims"),
        ({"shape": {"tp": ["__import__('os')"]}}, "aclTensor shape[0] is an integer"),
        ({"addr": -5}, "aclTensor addr is a device address"),
        ({"dtype": {"y": "os.system"}}, "does not decode"),
        ({"extra": 1}, "needs the fields"),
    ],
)
def test_a_hostile_recorded_acl_tensor_is_refused(doc, message):
    good = by_value(AclTensor((4, 64), asc.half, 4096))
    assert from_value(good) == AclTensor((4, 64), asc.half, 4096)
    bad = {"v": good["v"], "f": {**good["f"], **doc}}
    with pytest.raises(RecordingError, match=re.escape(message)):
        from_value(bad)


# -- a recording of lesson 12, edited the way a forged result channel could edit it ----------------------------
@pytest.mark.slow
@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ("negative_dim", "aclTensor shape[0] is an integer"),
        ("tiling_key", "returned"),
        ("workspace_code", "returned"),
    ],
)
def test_an_edited_aclnn_recording_is_tampered(tmp_path, edit, message):
    from lesson_submissions import reference_recording

    from lessons import catalog, sandbox
    from lessons.grader import judge_in_worker
    from lessons.judge import references
    from lessons.wire import encode

    if sandbox.missing():
        pytest.skip(sandbox.missing())
    lesson = catalog.get(12)
    doc = reference_recording(lesson, tmp_path)
    call = next(e for e in doc["host"] if e[0] == "c" and e[2] == "get_workspace_size")
    if edit == "negative_dim":
        call[3][1]["t"][0]["f"]["shape"] = {"tp": [-1, 4]}
    elif (
        edit == "tiling_key"
    ):  # a key add_custom has no variant for: the replay's first phase fails, the child's did not
        call[3][6]["rtd"]["key"] = 9
    else:
        call[3][7] = {"t": ["__import__('os')"]}
    frame = tmp_path / "frame.bin"
    frame.write_bytes(encode({"status": "result", "message": ""}) + encode(doc))
    out = judge_in_worker(lesson, frame, references(lesson), lesson.limits)
    assert "tampered" in out and message in out["tampered"], out


def test_every_first_phase_refusal_names_its_field_in_both_languages():
    sim, stream, ins, outs = _setup()
    nn, raw = sim.acl.nn, TilingContext().get_raw_tiling_data()
    shapes = ((4, 64),)
    calls = [
        (("addCustom", ins, outs, shapes, sol.add_custom, 4, raw, ()), "op_type is an operator name"),
        (("AddCustom", (), outs, shapes, sol.add_custom, 4, raw, ()), "inputs are 1..16 aclTensors"),
        (("AddCustom", (ins[0], "x"), outs, shapes, sol.add_custom, 4, raw, ()), "input 1 is an aclTensor"),
        (("AddCustom", ins, outs, ((4, 64), (4, 64)), sol.add_custom, 4, raw, ()), "outputShapes are 1 shapes"),
        (("AddCustom", ins, outs, shapes, print, 4, raw, ()), "kernel is an @asc.jit kernel"),
        (("AddCustom", ins, outs, shapes, sol.add_custom, 4, raw, ()), "holds a saved TilingData"),
    ]
    for args, words in calls:
        assert nn.get_workspace_size(*args)[2] == C.ACLNN_ERR_PARAM_INVALID, words
    sol.AddCustomTilingData(total_length=256).save_to_buffer(raw)
    raw.tiling_key = 1
    size, executor, _ = nn.get_workspace_size("AddCustom", ins, outs, shapes, sol.add_custom, 4, raw, (64,))
    assert nn.launch(12345, size, executor, stream) == C.ACLNN_ERR_PARAM_INVALID  # not device memory
    codes = _codes(sim)
    assert len(codes) == len(calls) + 1
    for (_, words), (_, en, zh) in zip(calls, codes, strict=False):
        assert words in en, (words, en)
        assert_chinese(zh)
    assert "workspace is a device address from acl.rt.malloc, got 12345" in codes[-1][1]
    assert_chinese(codes[-1][2])


def test_a_tensor_of_a_dtype_the_operator_does_not_accept_is_refused():
    sim, _, (x, y), outs = _setup()
    x32 = AclTensor((4, 32), asc.float32, x.addr)  # x's 512 B as float32
    assert aclnn_get_workspace_size(sim, sol.add_custom_def(), sol.add_custom, (x32, y), outs)[2] == 161002
    ((_, en, zh),) = _codes(sim)
    assert "input 0 dtype is one of AddCustom's data types (float16), got 'float32'" in en
    assert_chinese(zh)


def test_a_failing_tiling_function_fails_the_first_phase():
    sim, _, ins, outs = _setup()
    op = sol.add_custom_def()
    op.aicore().set_tiling(lambda context: GRAPH_FAILED)
    assert aclnn_get_workspace_size(sim, op, sol.add_custom, ins, outs)[:3] == (0, None, 161002)
    ((_, en, zh),) = _codes(sim)
    assert "TilingFunc returns GRAPH_SUCCESS, got 'GRAPH_FAILED'" in en
    assert_chinese(zh)


def test_an_operator_without_workspace_runs_with_a_null_workspace():
    sim, stream, ins, outs = _setup()

    def no_workspace(context):
        ret = sol.tiling_func(context)
        context.get_workspace_sizes(1)[0] = 0
        return ret

    op = sol.add_custom_def()
    op.aicore().set_tiling(no_workspace)
    size, executor, ret = aclnn_get_workspace_size(sim, op, sol.add_custom, ins, outs)
    assert (size, ret) == (0, 0)
    assert sim.acl.nn.launch(None, 0, executor, stream) == 0  # aclnnAddCustom(nullptr, 0, executor, stream)
    assert sim.acl.rt.synchronize_stream(stream) == 0 and not sim.finish().findings
