"""Lesson 3 check (runs in the grader): numerics, GM -> UB -> GM through queues, done on the device, no race;
on the visible cases and on each hidden case (another length and core count, drawn when the check runs)."""

from __future__ import annotations

from lessons.checks import (
    Criterion,
    bi,
    compare,
    d2h_from_kernel,
    findings,
    first_failure,
    named_rows,
    no_findings,
    pipe_bytes,
    pipe_flops,
)

from .scenario import CASES, expected, inputs

MAIN_RUN = "main"
ATOL, RTOL = 2.0**-10, 2.0**-9  # a couple of fp16 ulps: other op orders round differently
VECTOR_OPS = 3  # muls, adds, relu: one flop per element each
QUEUE_FLAGS = ("set_flag MTE2_V (VECIN data)", "wait_flag MTE2_V (VECIN data)", "set_flag V_MTE3 (VECOUT data)")


def _case(data, name: str, total: int, seed: int) -> list[Criterion]:
    """The four criteria on one case (run ``name``: ``total`` seeded elements)."""
    numerics = compare("numerics", data.output(f"y_{name}"), expected(inputs(seed, total)), ATOL, RTOL)
    if not numerics.passed:
        numerics.detail = bi(f"case {name} ({total} elements)", f"用例 {name}（{total} 个元素）")
    run = data.run(name)
    loaded, stored = pipe_bytes(run, "MTE2"), pipe_bytes(run, "MTE3")
    flags = [len(named_rows(run, f)) for f in QUEUE_FLAGS]
    path_ok = loaded >= 2 * total and stored >= 2 * total and min(flags) > 0
    path = Criterion(
        "through_queues",
        path_ok,
        bi(
            "x loaded by MTE2, y stored by MTE3, through VECIN/VECOUT",
            "x 由 MTE2 搬入，y 由 MTE3 搬出，经过 VECIN/VECOUT",
        )
        if path_ok
        else bi(
            f"{name}: MTE2 {loaded} B, MTE3 {stored} B, queue flags {flags}",
            f"{name}：MTE2 {loaded} B，MTE3 {stored} B，队列标志 {flags}",
        ),
        bi(
            "every element GM -> UB (MTE2) -> UB -> GM (MTE3), with VECIN and VECOUT queue flags",
            "每个元素 GM -> UB（MTE2）-> UB -> GM（MTE3），并有 VECIN 和 VECOUT 队列标志",
        ),
    )
    flops, back = pipe_flops(run, "VECTOR"), d2h_from_kernel(run)
    device_ok = flops >= VECTOR_OPS * total and back >= 2 * total
    device = Criterion(
        "on_device",
        device_ok,
        bi("computed on the vector unit, copied back", "由向量单元计算并拷回")
        if device_ok
        else bi(
            f"{name}: {flops} vector flops, {back} B copied back from kernel output",
            f"{name}：{flops} 次向量运算，从核函数输出拷回 {back} B",
        ),
        bi(
            f">= {VECTOR_OPS} vector flops per element; y copied back from memory the kernel wrote",
            f"每个元素至少 {VECTOR_OPS} 次向量运算；y 取自核函数写出的内存",
        ),
    )
    return [numerics, path, device, no_findings(findings(run))]


def judge(data, ctx) -> list[Criterion]:
    cases = [_case(data, name, total, seed) for name, total, _blocks, seed in CASES]
    return [first_failure([c[i] for c in cases]) for i in range(4)]


def judge_hidden(data, ctx, case) -> list[Criterion]:
    return _case(data, case.run, case.params["total"], case.params["seed"])
