"""Lesson 6 check (runs in the grader): fp16 x fp16 -> fp32 numerics, the Cube data path, its layouts; on the
visible shapes and on each hidden case (odd M, N and K; a block of one row), drawn when the check runs."""

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

from .scenario import CASES, expected, inputs, seeded, tolerance

MAIN_RUN = "main"


def _case(data, run_name: str, m: int, n: int, k: int, a, b) -> list[Criterion]:
    """The five criteria on one run (``run_name``: an m x n x k matmul of inputs ``a`` and ``b``)."""
    shape = f"{m}x{n}x{k}"
    ref = expected(a, b)
    numerics = compare("numerics", data.output(f"c_{run_name}"), ref, tolerance(ref, k), 0.0)
    numerics.detail = f"{m} x {n} x {k}"
    run = data.run(run_name)
    t = run.trace
    loads = [*named_rows(run, "load_data L1->L0A", Kind.MOVE), *named_rows(run, "load_data L1->L0B", Kind.MOVE)]
    mmads = named_rows(run, "mmad", Kind.COMPUTE)
    fix = named_rows(run, "fixpipe L0C->GM", Kind.MOVE)
    vector = pipe_flops(run, "VECTOR") + pipe_bytes(run, "MTE3")
    path_ok = bool(loads) and bool(len(mmads)) and bool(len(fix)) and not vector
    path = Criterion(
        "cube_path",
        path_ok,
        bi("load_data -> mmad -> fixpipe on every shape", "每种形状都经过 load_data -> mmad -> fixpipe")
        if path_ok
        else f"{shape}: {len(loads)} load_data, {len(mmads)} mmad, {len(fix)} fixpipe, {vector} vector/MTE3 work",
        bi(
            "L1 -> L0A/L0B (MTE1), mmad (Cube), L0C -> GM (FIX); no vector unit",
            "L1 -> L0A/L0B（MTE1）、mmad（Cube）、L0C -> GM（FIX）；不使用向量单元",
        ),
    )
    plain = len(named_rows(run, "data_copy GM->L1", Kind.MOVE))
    nz = [t.detail_of(int(r)).params for r in named_rows(run, "data_copy GM->L1 ND2NZ", Kind.MOVE)]
    moved = [t.detail_of(int(r)).params for r in loads]
    stores = [t.detail_of(int(r)).params for r in fix]
    layouts_ok = (
        not plain
        and bool(nz)
        and all(isinstance(p, Nd2Nz) for p in nz)
        and all(isinstance(p, Load2D | Load3D) for p in moved)
        and all(isinstance(p, Fixpipe) and p.nz2nd for p in stores)
    )
    nz2nd = sum(isinstance(p, Fixpipe) and p.nz2nd for p in stores)
    layouts = Criterion(
        "layouts",
        layouts_ok,
        bi("ND -> NZ -> ZZ / ZN -> NZ -> ND on every shape", "每种形状都经过 ND -> NZ -> ZZ / ZN -> NZ -> ND")
        if layouts_ok
        else f"{shape}: {len(nz)} ND -> NZ copies, {plain} row-major copies into L1, "
        f"{nz2nd} of {len(stores)} fixpipes NZ -> ND",
        bi(
            "GM -> L1 only through Nd2NzParams (NZ), L1 -> L0 with load_data, L0C -> GM with the fixpipe's NZ -> ND",
            "GM -> L1 只用 Nd2NzParams（NZ），L1 -> L0 用 load_data，L0C -> GM 用 fixpipe 的 NZ -> ND",
        ),
    )
    cube, fixed, back = pipe_flops(run, "CUBE"), pipe_bytes(run, "FIXP"), d2h_from_kernel(run)
    weak = (
        []
        if cube >= 2 * m * n * k and fixed >= m * n * 4 and back >= m * n * 4
        else [f"{shape}: {cube} Cube flops, {fixed} B out of L0C, {back} B back from the kernel"]
    )
    device = on_device(
        weak,
        bi("the Cube did 2*M*N*K flops", "Cube 完成了 2*M*N*K 次运算"),
        bi(
            ">= 2*M*N*K Cube flops, C (fp32) out of L0C and back from the kernel's output",
            "Cube 运算至少 2*M*N*K 次，C（fp32）经 L0C 写出并从核函数输出拷回",
        ),
    )
    return [numerics, path, layouts, device, no_findings(findings(run))]


def judge(data, ctx) -> list[Criterion]:
    cases = [_case(data, name, m, n, k, *inputs(name, m, n, k)) for name, m, n, k in CASES]
    return [first_failure([c[i] for c in cases]) for i in range(len(cases[0]))]


def judge_hidden(data, ctx, case) -> list[Criterion]:
    p = case.params
    return _case(data, case.run, p["m"], p["n"], p["k"], *seeded(p["seed"], p["m"], p["n"], p["k"]))
