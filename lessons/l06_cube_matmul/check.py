"""Lesson 6 check (runs in the grader): fp16 x fp16 -> fp32 numerics, the Cube data path, its layouts."""

from __future__ import annotations

from engine.trace import Kind
from engine.trace.detail import Fixpipe, Load2D, Load3D, Nd2Nz
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


def judge(data, ctx) -> list[Criterion]:
    out = []
    cases = []
    for name, m, n, k in CASES:
        ref = expected(*inputs(name, m, n, k))
        c = compare("numerics", data.output(f"c_{name}"), ref, tolerance(ref, k), 0.0)
        c.detail = f"{m} x {n} x {k}"
        cases.append(c)
    out.append(first_failure(cases))
    path_problems, layout_problems, weak = [], [], []
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
        plain = len(named_rows(run, "data_copy GM->L1", Kind.MOVE))
        nz = [t.detail_of(int(r)).params for r in named_rows(run, "data_copy GM->L1 ND2NZ", Kind.MOVE)]
        moved = [t.detail_of(int(r)).params for r in loads]
        stores = [t.detail_of(int(r)).params for r in fix]
        if (
            plain
            or not nz
            or not all(isinstance(p, Nd2Nz) for p in nz)
            or not all(isinstance(p, Load2D | Load3D) for p in moved)
            or not all(isinstance(p, Fixpipe) and p.nz2nd for p in stores)
        ):
            layout_problems.append(
                f"{m}x{n}x{k}: {len(nz)} ND -> NZ copies, {plain} row-major copies into L1, "
                f"{sum(isinstance(p, Fixpipe) and p.nz2nd for p in stores)} of {len(stores)} fixpipes NZ -> ND"
            )
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
            "layouts",
            not layout_problems,
            layout_problems[0]
            if layout_problems
            else bi("ND -> NZ -> ZZ / ZN -> NZ -> ND on every shape", "每种形状都经过 ND -> NZ -> ZZ / ZN -> NZ -> ND"),
            bi(
                "GM -> L1 only through Nd2NzParams (NZ), L1 -> L0 with load_data, "
                "L0C -> GM with the fixpipe's NZ -> ND",
                "GM -> L1 只用 Nd2NzParams（NZ），L1 -> L0 用 load_data，L0C -> GM 用 fixpipe 的 NZ -> ND",
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
