"""Lesson 2 check (runs in the grader): exact cover, balance, the SPMD kernel on 1, 7, 24, 48 blocks and tiny N."""

from __future__ import annotations

import numpy as np

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

from .scenario import KERNEL_CASES, PURE_CASES, TINY, inputs

MAIN_RUN = "main"


def _cover(ranges: list, total: int) -> str | None:
    """Why ``ranges`` do not cover [0, total) exactly once, or None."""
    count = np.zeros(total + 1, dtype=np.int64)
    for start, end in ranges:
        if start < 0 or end > total or end < start:
            return f"range [{start}, {end}) is outside [0, {total})"
        count[start:end] += 1
    twice = np.flatnonzero(count[:total] > 1)
    missed = np.flatnonzero(count[:total] == 0)
    if len(twice):
        return f"element {twice[0]} belongs to {count[twice[0]]} blocks"
    if len(missed):
        return f"element {missed[0]} belongs to no block"
    return None


def judge(data, ctx) -> list[Criterion]:
    got = data.value("ranges") or {}
    cover_err = balance_err = None
    for total, blocks in PURE_CASES:
        ranges = got.get(f"{total}/{blocks}")
        if not isinstance(ranges, list) or len(ranges) != blocks:
            cover_err = cover_err or f"N={total}, B={blocks}: expected {blocks} ranges"
            continue
        why = _cover(ranges, total)
        if why and not cover_err:
            cover_err = f"N={total}, B={blocks}: {why}"
        sizes = [end - start for start, end in ranges]
        if max(sizes) - min(sizes) > 1 and not balance_err:
            balance_err = f"N={total}, B={blocks}: sizes from {min(sizes)} to {max(sizes)}"
    out = [
        Criterion(
            "exact_cover",
            cover_err is None,
            cover_err or bi(f"{len(PURE_CASES)} cases covered", f"{len(PURE_CASES)} 种情况全部覆盖"),
            bi("every element of [0, N) in exactly one block", "[0, N) 中每个元素恰好属于一个块"),
        ),
        Criterion(
            "balanced",
            balance_err is None,
            balance_err or bi("sizes differ by <= 1", "块大小相差不超过 1"),
            bi("largest block - smallest block <= 1", "最大块与最小块相差不超过 1"),
        ),
    ]
    for ident, names in (
        ("kernel", [c for c in KERNEL_CASES if c[0] not in TINY]),
        ("tiny", [c for c in KERNEL_CASES if c[0] in TINY]),
    ):
        cases = []
        for name, total, blocks in names:
            c = compare(ident, data.output(f"z_{name}"), inputs(name, total) * np.float16(2))
            c.detail = f"N={total} on {blocks} blocks"
            cases.append(c)
        out.append(first_failure(cases))
    weak = []
    for name, total, blocks in KERNEL_CASES:
        run = data.run(name)
        flops, back = pipe_flops(run, "VECTOR"), d2h_from_kernel(run)
        if flops < total or back < 2 * total:
            weak.append(f"N={total}, B={blocks}: {flops} vector flops, {back} B back from the kernel")
    out.append(
        on_device(
            weak,
            bi("every run computed by the kernel", "每次运行都由核函数计算"),
            bi(
                ">= N vector flops per run, z copied back from the kernel's output",
                "每次运行至少 N 次向量运算，z 取自核函数的输出",
            ),
        )
    )
    problems = findings(*(data.run(name) for name, *_ in KERNEL_CASES))
    out.append(no_findings(problems, bi("no kernel error, race or deadlock", "没有核函数错误、数据竞争或死锁")))
    return out
