"""Lesson 6 check (runs in the grader): fp16 x fp16 -> fp32 numerics, the Cube data path, whole fractals."""

from __future__ import annotations

from engine.trace import Kind
from lessons.checks import (
    Criterion,
    bi,
    compare,
    d2h_from_kernel,
    findings,
    first_failure,
    named_rows,
    no_findings,
    on_device,
    pipe_bytes,
    pipe_flops,
)

from .scenario import CASES, expected, inputs, tolerance

MAIN_RUN = "main"
FRACTAL_BYTES = 16 * 16 * 2  # one 16 x 16 fp16 fractal
FRACTAL_FLOPS = 2 * 16 * 16 * 16  # one 16 x 16 x 16 multiply-accumulate


def judge(data, ctx) -> list[Criterion]:
    out = []
    cases = []
    for name, m, n, k in CASES:
        ref = expected(*inputs(name, m, n, k))
        c = compare("numerics", data.output(f"c_{name}"), ref, tolerance(ref, k), 0.0)
        c.detail = f"{m} x {n} x {k}"
        cases.append(c)
    out.append(first_failure(cases))
    path_problems, fractal_problems, weak = [], [], []
    for name, m, n, k in CASES:
        run = data.run(name)
        t = run.trace
        loads = list(named_rows(run, "load_data L1->L0A", Kind.MOVE)) + list(
            named_rows(run, "load_data L1->L0B", Kind.MOVE)
        )
        mmads = named_rows(run, "mmad", Kind.COMPUTE)
        fix = named_rows(run, "fixpipe L0C->GM", Kind.MOVE)
        vector = pipe_flops(run, "VECTOR") + pipe_bytes(run, "MTE3")
        if not loads or not len(mmads) or not len(fix) or vector:
            path_problems.append(
                f"{m}x{n}x{k}: {len(loads)} load_data, {len(mmads)} mmad, {len(fix)} fixpipe, {vector} vector/MTE3 work"
            )
        odd_loads = [int(t.columns["nbytes"][i]) for i in loads if t.columns["nbytes"][i] % FRACTAL_BYTES]
        odd_mmads = [int(t.flops[i]) for i in mmads if t.flops[i] % FRACTAL_FLOPS]
        if odd_loads or odd_mmads:
            fractal_problems.append(f"{m}x{n}x{k}: loads of {odd_loads[:3]} B, mmads of {odd_mmads[:3]} flops")
        cube, fixed = pipe_flops(run, "CUBE"), pipe_bytes(run, "FIXP")
        back = d2h_from_kernel(run)
        if cube < 2 * m * n * k or fixed < m * n * 4 or back < m * n * 4:
            weak.append(f"{m}x{n}x{k}: {cube} Cube flops, {fixed} B out of L0C, {back} B back from the kernel")
    out.append(
        Criterion(
            "cube_path",
            not path_problems,
            path_problems[0]
            if path_problems
            else bi("load_data -> mmad -> fixpipe on every shape", "每种形状都经过 load_data -> mmad -> fixpipe"),
            bi(
                "L1 -> L0A/L0B (MTE1), mmad (Cube), L0C -> GM (FIX); no vector unit",
                "L1 -> L0A/L0B（MTE1）、mmad（Cube）、L0C -> GM（FIX）；不使用向量单元",
            ),
        )
    )
    out.append(
        Criterion(
            "fractals",
            not fractal_problems,
            fractal_problems[0] if fractal_problems else bi("whole 16x16 fractals", "都是完整的 16x16 分形"),
            bi(
                "every load_data a multiple of 512 B, every mmad a multiple of 16x16x16",
                "每次 load_data 为 512 B 的倍数，每次 mmad 为 16x16x16 的倍数",
            ),
        )
    )
    out.append(
        on_device(
            weak,
            bi("the Cube did 2*M*N*K flops", "Cube 完成了 2*M*N*K 次运算"),
            bi(
                ">= 2*M*N*K Cube flops, C (fp32) out of L0C and back from the kernel's output",
                "Cube 运算至少 2*M*N*K 次，C（fp32）经 L0C 写出并从核函数输出拷回",
            ),
        )
    )
    problems = findings(*(data.run(name) for name, *_ in CASES))
    out.append(no_findings(problems))
    return out
