"""Lesson 3 check (runs in the grader): numerics, GM -> UB -> GM through queues, done on the device, no race."""

from __future__ import annotations

from lessons.checks import (
    Criterion,
    bi,
    compare,
    d2h_from_kernel,
    findings,
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


def judge(data, ctx) -> list[Criterion]:
    out = []
    wrong = []
    for name, total, _blocks, seed in CASES:
        c = compare("numerics", data.output(f"y_{name}"), expected(inputs(seed, total)), ATOL, RTOL)
        if not c.passed:
            c.detail = bi(f"case {name} ({total} elements)", f"用例 {name}（{total} 个元素）")
            wrong.append(c)
    out.append(wrong[0] if wrong else c)

    path_ok, on_device, path_detail, device_detail = True, True, [], []
    for name, total, _blocks, _seed in CASES:
        run = data.run(name)
        loaded, stored = pipe_bytes(run, "MTE2"), pipe_bytes(run, "MTE3")
        flags = [len(named_rows(run, f)) for f in QUEUE_FLAGS]
        if loaded < 2 * total or stored < 2 * total or min(flags) == 0:
            path_ok = False
            path_detail.append(
                (
                    f"{name}: MTE2 {loaded} B, MTE3 {stored} B, queue flags {flags}",
                    f"{name}：MTE2 {loaded} B，MTE3 {stored} B，队列标志 {flags}",
                )
            )
        flops = pipe_flops(run, "VECTOR")
        back = d2h_from_kernel(run)
        if flops < VECTOR_OPS * total or back < 2 * total:
            on_device = False
            device_detail.append(
                bi(
                    f"{name}: {flops} vector flops, {back} B copied back from kernel output",
                    f"{name}：{flops} 次向量运算，从核函数输出拷回 {back} B",
                )
            )
    out.append(
        Criterion(
            "through_queues",
            path_ok,
            bi("; ".join(en for en, _ in path_detail), "；".join(zh for _, zh in path_detail))
            if path_detail
            else bi(
                "x loaded by MTE2, y stored by MTE3, through VECIN/VECOUT",
                "x 由 MTE2 搬入，y 由 MTE3 搬出，经过 VECIN/VECOUT",
            ),
            bi(
                "every element GM -> UB (MTE2) -> UB -> GM (MTE3), with VECIN and VECOUT queue flags",
                "每个元素 GM -> UB（MTE2）-> UB -> GM（MTE3），并有 VECIN 和 VECOUT 队列标志",
            ),
        )
    )
    out.append(
        Criterion(
            "on_device",
            on_device,
            (
                device_detail[0]
                if device_detail
                else bi("computed on the vector unit, copied back", "由向量单元计算并拷回")
            ),
            bi(
                f">= {VECTOR_OPS} vector flops per element; y copied back from memory the kernel wrote",
                f"每个元素至少 {VECTOR_OPS} 次向量运算；y 取自核函数写出的内存",
            ),
        )
    )
    problems = findings(*(data.run(name) for name, *_ in CASES))
    out.append(no_findings(problems))
    return out
