"""Lesson 7 check (runs in the grader): a valid tiling, right at a small shape, a share of Cube peak at 4096^3."""

from __future__ import annotations

from engine.aicore.matmul_tiling import TCubeTiling
from engine.analysis.metrics import run_metrics
from lessons.checks import (
    Criterion,
    bi,
    compare,
    d2h_from_kernel,
    findings,
    kernel_flops,
    no_findings,
    on_device,
    pipe_flops,
)

from .drive import SHAPES
from .scenario import BIG, MAX_HIDDEN_MMADS, MAX_MMADS, SMALL, expected, mmads, problem, tolerance

MAIN_RUN = "big"


def _tiling(data, name: str, shape, profile: str = "ascend910b1") -> tuple[TCubeTiling | None, str | None]:
    """The trainee's tiling for ``shape`` (rebuilt here from its fields) and what is wrong with it on ``profile``,
    if anything."""
    fields = data.value(f"tiling_{name}")
    try:
        tiling = TCubeTiling(**{k: int(v) for k, v in fields.items()})
    except (AttributeError, TypeError, ValueError):
        return None, f"make_tiling returned {str(fields)[:80]}, not a TCubeTiling"
    return tiling, problem(tiling, shape, profile)


def _launched(data, name: str, tiling: TCubeTiling) -> str | None:
    """Why run ``name`` is not matmul_tiled launched with ``tiling`` (the replay's launches), or None."""
    launches = data.launches(name)
    used = [a["f"] for _k, _n, args in launches for a in args if isinstance(a, dict) and a.get("v") == "TCubeTiling"]
    if [k for k, _n, _a in launches] != ["matmul_tiled"] or used != [tiling.to_dict()]:
        return "the run did not launch matmul_tiled once with the tiling make_tiling returned"
    return None


def judge(data, ctx) -> list[Criterion]:
    tilings, invalid = {}, []
    for name, shape in SHAPES:
        tiling, why = _tiling(data, name, shape)
        if why is None and data.has_run(name):
            why = _launched(data, name, tiling)
        if why:
            invalid.append(why)
        tilings[name] = None if why else tiling
    out = [
        Criterion(
            "valid",
            not invalid,
            invalid[0] if invalid else bi("both tilings satisfy every constraint", "两个 tiling 都满足全部约束"),
            bi(
                "usedCoreNum <= 24, base sizes multiples of 16, L0A/L0B/L0C/L1 capacities respected",
                "usedCoreNum <= 24，基本块为 16 的倍数，满足 L0A/L0B/L0C/L1 容量",
            ),
        )
    ]
    m, n, k = SMALL
    ref = expected(m, n, k)
    c = data.output("c_small") if tilings["small"] else None
    numerics = compare("numerics", c, ref, tolerance(ref, k), 0.0)
    numerics.detail = f"{m} x {n} x {k}"
    out.append(numerics)

    need = 100 * float(ctx.settings["peak_fraction"])
    big_tiling = tilings["big"]
    skipped = mmads(big_tiling) if big_tiling and mmads(big_tiling) > MAX_MMADS else 0
    if big_tiling and not skipped and data.has_run("big"):
        big = data.run("big")
        percent = run_metrics(big).percent_of_peak
        shown = bi(f"{percent:.1f} % of the fp16 Cube peak", f"达到 fp16 Cube 峰值的 {percent:.1f} %")
    else:
        percent = 0.0
        why = (
            f"{skipped} mmads: base blocks this small cannot feed the Cube fast enough (64x64x64 reaches about "
            "21 % in the simulator); use larger base blocks"
            if skipped
            else "no valid tiling"
        )
        why_zh = (
            f"需要 {skipped} 条 mmad：这么小的基本块无法及时为 Cube 供数"
            "（64x64x64 在模拟器中约为 21 %）；请用更大的基本块"
            if skipped
            else "没有有效的 tiling"
        )
        shown = bi(f"not simulated: {why}", f"未模拟：{why_zh}")
    out.append(
        Criterion(
            "peak",
            percent >= need,
            shown,
            bi(f">= {need:g} % at {BIG[0]}^3 on ascend910b1", f"在 ascend910b1 上 {BIG[0]}^3 时 >= {need:g} %"),
        )
    )

    weak = []
    if data.has_run("small"):
        small = data.run("small")
        back = d2h_from_kernel(small)
        if pipe_flops(small, "CUBE") < 2 * m * n * k or back < m * n * 2:
            weak.append(f"{m}x{n}x{k}: {pipe_flops(small, 'CUBE')} Cube flops, {back} B back from the kernel")
    else:
        weak.append("the small shape did not run")
    if data.has_run("big") and kernel_flops(data.run("big")) < 2 * BIG[0] * BIG[1] * BIG[2]:
        weak.append(f"{BIG[0]}^3: {kernel_flops(data.run('big'))} flops")
    out.append(
        on_device(
            weak,
            bi("the Cube did every flop", "所有运算都由 Cube 完成"),
            bi("2*M*N*K Cube flops; C from the kernel's output", "Cube 完成 2*M*N*K 次运算；C 取自核函数输出"),
        )
    )
    problems = findings(*(data.run(name) for name in ("small", "big") if data.has_run(name)))
    out.append(no_findings(problems))
    return out


def judge_hidden(data, ctx, case) -> list[Criterion]:
    """On a hidden case: the tiling valid on the case's chip, and C right."""
    p = case.params
    shape = (p["m"], p["n"], p["k"])
    tiling, why = _tiling(data, case.run, shape, p["profile"])
    if why is None and mmads(tiling) > MAX_HIDDEN_MMADS:
        why = f"{mmads(tiling)} mmads"
    if why is None and data.has_run(case.run):
        why = _launched(data, case.run, tiling)
    valid = Criterion("valid", why is None, why or bi("valid", "有效"), bi("a valid tiling", "有效的 tiling"))
    ref = expected(*shape)
    c = data.output(f"c_{case.run}") if why is None else None
    return [valid, compare("numerics", c, ref, tolerance(ref, shape[2]), 0.0)]
