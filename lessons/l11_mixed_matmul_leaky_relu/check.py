"""Lesson 11 check (runs in the grader): C right, no race or deadlock, both AIVs of each AI core sharing every base
block, and the Cube overlapping the vectors (a kernel time near the reference's, not a lockstep's)."""

from __future__ import annotations

from lessons.checks import Criterion, bi, compare, d2h_from_kernel, findings, kernel_time_us, no_findings, pipe_flops

from .scenario import ALPHA, MAIN, SEED, core_bytes, expected, tolerance

MAIN_RUN = "main"
REFERENCES = ("reference_kernel_us",)  # the reference solution's kernel time at the main shape (scenario.py)
BALANCE = 0.4  # each AIV of a busy AI core reads at least this share of its group's workspace bytes


def split_criterion(run, m: int, n: int) -> Criterion:
    """Both AIVs of every AI core at work read their share of each block, and each fp32 value is read once."""
    reads = core_bytes(run, "AIV", "MTE2")
    total = sum(reads.values())
    lopsided = []
    for group in sorted({core // 2 for core in reads}):
        pair = (reads.get(2 * group, 0), reads.get(2 * group + 1, 0))
        if sum(pair) and min(pair) < BALANCE * sum(pair):
            lopsided.append((group, pair))
    ok = total == 4 * m * n and not lopsided
    if lopsided:
        g, (r0, r1) = lopsided[0]
        shown = bi(
            f"AI core {g}: AIV 0 read {r0} B of the workspace, AIV 1 {r1} B",
            f"AI Core {g}：AIV 0 从 workspace 读取 {r0} B，AIV 1 读取 {r1} B",
        )
    else:
        shown = bi(
            f"the AIVs read {total} B of the workspace ({4 * m * n} B is every fp32 value once)",
            f"各 AIV 从 workspace 共读取 {total} B（每个 fp32 值读一次为 {4 * m * n} B）",
        )
    return Criterion(
        "split",
        ok,
        shown,
        bi(
            f"each AIV of an AI core reads about half of every block; {4 * m * n} B in all",
            f"每个 AI Core 的两个 AIV 各读取每个块的约一半；共 {4 * m * n} B",
        ),
    )


def _on_device(run, m: int, n: int, k: int) -> Criterion:
    cube, vec, back = pipe_flops(run, "CUBE"), pipe_flops(run, "VECTOR"), d2h_from_kernel(run)
    return Criterion(
        "on_device",
        cube >= 2 * m * n * k and vec >= 2 * m * n and back >= 2 * m * n,
        bi(
            f"{cube} Cube flops, {vec} vector flops, {back} B back from the kernel",
            f"Cube {cube} 次运算，向量 {vec} 次运算，{back} B 取自核函数输出",
        ),
        bi(
            f">= {2 * m * n * k} Cube flops, >= {2 * m * n} vector flops, C from what the kernel wrote",
            f"Cube >= {2 * m * n * k} 次运算，向量 >= {2 * m * n} 次运算，C 取自核函数写出的数据",
        ),
    )


def judge(data, ctx) -> list[Criterion]:
    m, n, k = MAIN
    run = data.run(MAIN_RUN)
    ref = expected(m, n, k, SEED, ALPHA)
    out = [compare("numerics", data.output("c_main"), ref, tolerance(ref, k), 0.0)]
    out.append(no_findings(findings(run)))
    out.append(split_criterion(run, m, n))
    yours = kernel_time_us(run)
    target = float(ctx.settings["overlap_factor"]) * ctx.reference("reference_kernel_us")
    out.append(
        Criterion(
            "overlap",
            0 < yours <= target and out[0].passed and out[1].passed,
            bi(f"kernel {yours:.2f} us", f"核函数 {yours:.2f} us")
            if yours
            else bi("the kernel did not finish", "核函数没有正常完成"),
            bi(f"<= {target:.2f} us, with C right and no finding", f"<= {target:.2f} us，且 C 正确、没有问题报告"),
        )
    )
    out.append(_on_device(run, m, n, k))
    return out


def judge_hidden(data, ctx, case) -> list[Criterion]:
    """One hidden case: C right, no finding, the work on the device."""
    p = case.params
    m, n, k = p["m"], p["n"], p["k"]
    run = data.run(case.run)
    ref = expected(m, n, k, p["seed"], ALPHA)
    out = [compare("numerics", data.output(f"c_{case.run}"), ref, tolerance(ref, k), 0.0)]
    out.append(no_findings(findings(run)))
    out.append(_on_device(run, m, n, k))
    return out
