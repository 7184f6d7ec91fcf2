"""Lesson 3 check (runs in the grader): numerics, GM -> UB -> GM through queues, done on the device, no race."""

from __future__ import annotations

from lessons.checks import (
    Criterion,
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
        c = compare("numerics", data.value(f"y_{name}"), expected(inputs(seed, total)), ATOL, RTOL)
        if not c.passed:
            c.detail = f"case {name} ({total} elements)"
            wrong.append(c)
    out.append(wrong[0] if wrong else c)

    path_ok, on_device, detail = True, True, []
    for name, total, _blocks, _seed in CASES:
        run = data.run(name)
        loaded, stored = pipe_bytes(run, "MTE2"), pipe_bytes(run, "MTE3")
        flags = [len(named_rows(run, f)) for f in QUEUE_FLAGS]
        if loaded < 2 * total or stored < 2 * total or min(flags) == 0:
            path_ok = False
            detail.append(f"{name}: MTE2 loaded {loaded} B, MTE3 stored {stored} B, queue flags {flags}")
        flops = pipe_flops(run, "VECTOR")
        back = d2h_from_kernel(run)
        if flops < VECTOR_OPS * total or back < 2 * total:
            on_device = False
            detail.append(f"{name}: {flops} vector flops, {back} B copied back from kernel output")
    out.append(
        Criterion(
            "through_queues",
            path_ok,
            "; ".join(d for d in detail if "MTE2" in d) or "x loaded by MTE2, y stored by MTE3, through VECIN/VECOUT",
            "every element GM -> UB (MTE2) -> UB -> GM (MTE3), with VECIN and VECOUT queue flags",
        )
    )
    out.append(
        Criterion(
            "on_device",
            on_device,
            "; ".join(d for d in detail if "flops" in d) or "computed on the vector unit, copied back",
            f">= {VECTOR_OPS} vector flops per element; y copied back from memory the kernel wrote",
        )
    )
    problems = [p for name, *_ in CASES for p in findings(data.run(name))]
    out.append(no_findings(problems))
    return out
