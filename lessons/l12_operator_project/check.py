"""Lesson 12 check (runs in the grader): InferShape's answers, the two aclnn phases (the first before the launch,
with its workspace), the tiling each run launched with (block count, tiling key), z against numpy, no finding."""

from __future__ import annotations

import numpy as np

from engine.profiles.profile import load_profile
from lessons.checks import Criterion, bi, compare, d2h_from_kernel, findings, first_failure, no_findings, pipe_flops

from .scenario import (
    FAILED,
    INFER_CASES,
    KERNEL_CASES,
    SYSTEM_WORKSPACE,
    expected,
    expected_infer,
    expected_tiling,
    inputs,
)

MAIN_RUN = "main"
EXPECTED = {
    "two_phases": bi(
        "one aclnnAddCustomGetWorkspaceSize, then aclnnAddCustom with a workspace of at least its size",
        "先调用一次 aclnnAddCustomGetWorkspaceSize，再用不小于其返回大小的 workspace 调用 aclnnAddCustom",
    ),
    "workspace": bi(
        f"the library's system workspace: {SYSTEM_WORKSPACE} B + 0 B of AddCustom's own",
        f"库的系统 workspace：{SYSTEM_WORKSPACE} B，加上 AddCustom 自己的 0 B",
    ),
    "infer_output": bi("z has the shape InferShape derives from x", "z 的形状是 InferShape 由 x 推导出的形状"),
    "block_dim": bi("min(vector cores, data blocks)", "min(向量核数, 数据块数)"),
    "tiling_key": bi(
        "ALIGNED (1) for whole data blocks, PADDED (2) otherwise", "整数个数据块时为 ALIGNED (1)，否则为 PADDED (2)"
    ),
}


def _phases(data, run: str, shape, cores: int) -> dict:
    """What is wrong with run ``run``'s aclnn calls: criterion -> (English, Chinese)."""
    calls = data.observed(f"aclnn_{run}", [])
    total = int(np.prod(shape))
    if len(calls) != 1 or not calls[0]["launched"]:
        n, ran = len(calls), sum(1 for c in calls if c["launched"])
        why = (f"{n} GetWorkspaceSize call(s), {ran} launched", f"{n} 次 GetWorkspaceSize 调用，执行了 {ran} 次")
        return dict.fromkeys(EXPECTED, why)
    call, out = calls[0], {}
    if call["workspace_given"] < call["workspace_size"]:
        out["two_phases"] = (
            f"workspace {call['workspace_given']} B < {call['workspace_size']} B",
            f"workspace {call['workspace_given']} B < {call['workspace_size']} B",
        )
    if call["workspace_size"] != SYSTEM_WORKSPACE:
        out["workspace"] = (f"{call['workspace_size']} B asked for", f"申请了 {call['workspace_size']} B")
    if call["output_shapes"] != [list(shape)]:
        out["infer_output"] = (f"z of shape {call['output_shapes']}", f"z 的形状为 {call['output_shapes']}")
    dim, key = expected_tiling(total, cores)
    if call["block_dim"] != dim:
        out["block_dim"] = (
            f"{call['block_dim']} blocks for {total} elements",
            f"{total} 个元素用了 {call['block_dim']} 个块",
        )
    if call["tiling_key"] != key:
        out["tiling_key"] = (
            f"key {call['tiling_key']} for {total} elements",
            f"{total} 个元素用了 key {call['tiling_key']}",
        )
    return out


def _cores(profile: str = "ascend910b1") -> int:
    return load_profile(profile).vector_cores


def judge(data, ctx) -> list[Criterion]:
    answers = data.value("infer") or []
    wrong = None
    for (x_shape, y_shape), got in zip(INFER_CASES, answers, strict=False):
        want = expected_infer(x_shape, y_shape)
        if got != want and wrong is None:
            wrong = bi(f"x {list(x_shape)}, y {list(y_shape)}: {got}", f"x {list(x_shape)}，y {list(y_shape)}：{got}")
    if len(answers) != len(INFER_CASES):
        wrong = bi(
            f"{len(answers)} answers for {len(INFER_CASES)} cases",
            f"{len(INFER_CASES)} 种情况却有 {len(answers)} 个答案",
        )
    out = [
        Criterion(
            "infer_shape",
            wrong is None,
            wrong or bi(f"all {len(INFER_CASES)} cases", f"全部 {len(INFER_CASES)} 种情况"),
            bi(
                f"z takes x's shape when y's is the same; {FAILED} otherwise",
                f"y 与 x 形状相同时 z 取 x 的形状；否则 {FAILED}",
            ),
        )
    ]
    problems: dict = {}
    for name, shape in KERNEL_CASES:
        for key, why in _phases(data, name, shape, _cores()).items():
            problems.setdefault(key, why)
    for key, want in EXPECTED.items():
        why = problems.get(key)
        yours = bi(*why) if why else bi(f"all {len(KERNEL_CASES)} runs", f"全部 {len(KERNEL_CASES)} 次运行")
        out.append(Criterion(key, why is None, yours, want))
    cases = []
    for name, shape in KERNEL_CASES:
        x, y = inputs(name, shape)
        c = compare("kernel", data.output(f"z_{name}"), expected(x, y))
        c.detail = bi(f"x and y of shape {list(shape)}", f"x 与 y 的形状为 {list(shape)}")
        cases.append(c)
    out.append(first_failure(cases))
    weak = []
    for name, shape in KERNEL_CASES:
        total, run = int(np.prod(shape)), data.run(name)
        if pipe_flops(run, "VECTOR") < total or d2h_from_kernel(run) < 2 * total:
            weak.append(
                bi(f"shape {list(shape)}: z not computed by the kernel", f"形状 {list(shape)}：z 不是核函数算的")
            )
    out.append(
        Criterion(
            "on_device",
            not weak,
            weak[0] if weak else bi("every run computed by the kernel", "每次运行都由核函数计算"),
            bi(
                ">= 1 vector flop per element; z copied back from the kernel's output",
                "每个元素至少 1 次向量运算；z 取自核函数输出",
            ),
        )
    )
    out.append(no_findings(findings(*(data.run(name) for name, _ in KERNEL_CASES))))
    return out


def judge_hidden(data, ctx, case) -> list[Criterion]:
    """One hidden case: the two phases, the tiling the replay launched with, z, on the device, no finding."""
    p = case.params
    shape = tuple(p["shape"])
    problems = _phases(data, case.run, shape, _cores(p.get("profile", "ascend910b1")))
    out = [Criterion(key, key not in problems, "", EXPECTED[key]) for key in EXPECTED]
    x, y = inputs(case.run, shape, p["seed"])
    out.append(compare("kernel", data.output(f"z_{case.run}"), expected(x, y)))
    run, total = data.run(case.run), int(np.prod(shape))
    out.append(Criterion("on_device", pipe_flops(run, "VECTOR") >= total and d2h_from_kernel(run) >= 2 * total))
    out.append(no_findings(findings(run)))
    return out
