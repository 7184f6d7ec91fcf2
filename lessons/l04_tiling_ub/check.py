"""Lesson 4 check (runs in the grader): fits UB, 32-byte rule, tails, fewest iterations, the kernel with the plan."""

from __future__ import annotations

from lessons.checks import (
    Criterion,
    bi,
    compare,
    d2h_from_kernel,
    findings,
    first_failure,
    no_findings,
    on_device,
    pipe_flops,
)
from lessons.launches import launches

from .scenario import KERNEL_CASES, PLAN_CASES, QUEUES, UB_BYTES, expected, inputs, max_tile

MAIN_RUN = "main"


def _case(case) -> tuple[str, str]:
    length, ub, size, queues = case
    return (
        f"length {length}, UB {ub} B, {size}-byte elements, {queues} queues",
        f"长度 {length}，UB {ub} B，每个元素 {size} 字节，{queues} 个队列",
    )


def _launched_plans(data, names, ub_bytes: int = UB_BYTES) -> list[tuple[tuple, list[int]]]:
    """The tile plans the grader's replay launched runs ``names`` with: (case, plan) per core length."""
    out = []
    for name in names:
        for la in launches(data, name):
            t = la.tiling
            if t is None or not hasattr(t, "tail_tile_num"):
                continue
            kinds = (["former"] if t.former_num else []) + (["tail"] if la.block_dim > t.former_num else [])
            for kind in kinds:
                case = (getattr(t, f"{kind}_length"), ub_bytes, 2, QUEUES)
                out.append((case, [t.tile_length, getattr(t, f"{kind}_tile_num"), getattr(t, f"{kind}_last_tile")]))
    return out


def _plan_problems(cases) -> dict:
    """The first problem of each plan criterion over ``cases`` ((case, plan) pairs), or None."""
    first = {"fits_ub": None, "aligned_32b": None, "tails": None, "fewest_tiles": None}
    for case, plan in cases:
        length, ub, size, queues = case
        tile, count, tail = plan
        need = queues * tile * size
        best = max_tile(ub, size, queues)
        fewest = -(-length // best)
        problems = {
            "fits_ub": need > ub or tile < 1,
            "aligned_32b": (tile * size) % 32 != 0,
            "tails": count < 1 or not 0 < tail <= tile or (count - 1) * tile + tail != length,
            "fewest_tiles": count != fewest,
        }
        en, zh = _case(case)
        yours = {
            "fits_ub": bi(f"{en}: tile {tile} needs {need} B", f"{zh}：分块 {tile} 需要 {need} B"),
            "aligned_32b": bi(f"{en}: tile {tile} = {tile * size} B", f"{zh}：分块 {tile} = {tile * size} B"),
            "tails": bi(
                f"{en}: {count} tiles of {tile}, tail {tail}", f"{zh}：{count} 个长 {tile} 的分块，尾块 {tail}"
            ),
            "fewest_tiles": bi(f"{en}: {count} tiles", f"{zh}：{count} 个分块"),
        }
        for key, bad in problems.items():
            if bad and first[key] is None:
                first[key] = yours[key]
    return first


EXPECTED = {
    "fits_ub": bi("queues x tile x element size <= UB", "队列数 x 分块长度 x 元素字节数 <= UB"),
    "aligned_32b": bi("tile bytes a multiple of 32", "分块字节数是 32 的倍数"),
    "tails": bi(
        "(tile_count - 1) x tile_length + tail_length = length, 0 < tail <= tile",
        "(tile_count - 1) x tile_length + tail_length = length，且 0 < tail <= tile",
    ),
    "fewest_tiles": bi(
        "the fewest iterations the largest tile that fits allows", "能放下的最大分块所允许的最少循环次数"
    ),
}


def judge(data, ctx) -> list[Criterion]:
    plans = data.value("plans") or []
    cases = list(zip(PLAN_CASES, plans, strict=False)) + _launched_plans(data, [c[0] for c in KERNEL_CASES])
    first = _plan_problems(cases)
    if len(plans) != len(PLAN_CASES):
        n, want = len(plans), len(PLAN_CASES)
        first = {k: bi(f"{n} plans for {want} cases", f"{want} 种情况却有 {n} 个方案") for k in first}
    out = [
        Criterion(
            key,
            first[key] is None,
            first[key] or bi(f"all {len(cases)} cases", f"全部 {len(cases)} 种情况"),
            EXPECTED[key],
        )
        for key in first
    ]
    cases = []
    for name, total, blocks in KERNEL_CASES:
        c = compare("kernel", data.output(f"y_{name}"), expected(inputs(name, total)), 2.0**-10, 2.0**-9)
        c.detail = bi(f"{total} elements on {blocks} blocks", f"{total} 个元素，{blocks} 个块")
        cases.append(c)
    out.append(first_failure(cases))
    weak = []
    for name, total, blocks in KERNEL_CASES:
        run = data.run(name)
        flops, back = pipe_flops(run, "VECTOR"), d2h_from_kernel(run)
        if flops < 3 * total or back < 2 * total:
            weak.append(
                bi(
                    f"{total} elements on {blocks} blocks: {flops} vector flops, {back} B back from the kernel",
                    f"{total} 个元素，{blocks} 个块：{flops} 次向量运算，{back} B 取自核函数输出",
                )
            )
    out.append(
        on_device(
            weak,
            bi("every run computed by the kernel", "每次运行都由核函数计算"),
            bi(
                ">= 3 vector flops per element; y copied back from the kernel's output",
                "每个元素至少 3 次向量运算；y 取自核函数输出",
            ),
        )
    )
    problems = findings(*(data.run(name) for name, *_ in KERNEL_CASES))
    out.append(
        no_findings(
            problems, bi("no kernel error (a tile too large for UB is one)", "没有核函数错误（分块超出 UB 就是一种）")
        )
    )
    return out


def judge_hidden(data, ctx, case) -> list[Criterion]:
    """One hidden case: the plans the replay launched it with (for the chip's UB), y, on the device, no finding."""
    p = case.params
    ub = 262144 if p.get("profile") == "ascend310p3" else UB_BYTES  # the chips' UB (INI: ascend310p3, 256 KiB)
    first = _plan_problems(_launched_plans(data, [case.run], ub))
    out = [Criterion(key, first[key] is None, "", EXPECTED[key]) for key in first]
    x = inputs(case.run, p["total"], p["seed"])
    out.append(compare("kernel", data.output(f"y_{case.run}"), expected(x), 2.0**-10, 2.0**-9))
    run = data.run(case.run)
    out.append(
        Criterion("on_device", pipe_flops(run, "VECTOR") >= 3 * p["total"] and d2h_from_kernel(run) >= 2 * p["total"])
    )
    out.append(no_findings(findings(run)))
    return out
