"""Lesson 5 check (runs in the grader): same numbers, MTE2 overlapping V, >= 1.5x over the single-buffered kernel."""

from __future__ import annotations

from engine.analysis.metrics import run_metrics
from lessons.checks import (
    Criterion,
    bi,
    compare,
    d2h_from_kernel,
    findings,
    first_failure,
    kernel_time_us,
    no_findings,
    on_device,
    pipe_flops,
)
from lessons.launches import launches

from .scenario import CASES, TILE, expected, inputs

MAIN_RUN = "main"
REFERENCES = ("baseline_us",)  # computed by the grader from the lesson's own programs
ATOL, RTOL = 2.0**-9, 2.0**-8  # fp16, five rounded operations: other orders differ by a few ulps
VECTOR_OPS = 5
UB_BYTES, SLOTS = 196608, 4  # two queues of two slots


def _tile_plan(data, names=tuple(c[0] for c in CASES)) -> Criterion:
    """The tile plan every launch carried: tiles of whole data blocks, the largest that four slots fit in the UB,
    and per core length the tile count and last tile that cover it exactly."""
    want = bi(
        f"the largest tiles of whole data blocks that 2 queues x 2 slots fit in the {UB_BYTES} B UB, "
        "covering every core's share",
        f"2 个队列 x 2 个槽位能放进 {UB_BYTES} B UB 的、由整数个数据块组成的最大分块，覆盖每个核的数据",
    )
    for name in names:
        for la in launches(data, name):
            t = la.tiling
            if t is None or not hasattr(t, "tail_last_tile"):
                return Criterion("tile_plan", False, bi(f"{name}: no tiling", f"{name}：没有 tiling"), want)
            if t.tile_length != TILE:
                shown = bi(f"{name}: tiles of {t.tile_length} elements", f"{name}：分块为 {t.tile_length} 个元素")
                return Criterion("tile_plan", False, shown, want)
            for kind in ("former", "tail"):
                length, tiles, last = (getattr(t, f"{kind}_{f}") for f in ("length", "tile_num", "last_tile"))
                used = kind == "tail" or t.former_num > 0
                if used and (
                    tiles < 1 or not 0 < last <= t.tile_length or (tiles - 1) * t.tile_length + last != length
                ):
                    shown = bi(
                        f"{name}: {tiles} tiles, the last of {last}, for {length} elements",
                        f"{name}：{tiles} 个分块、最后一个 {last} 个元素，对应 {length} 个元素",
                    )
                    return Criterion("tile_plan", False, shown, want)
    return Criterion("tile_plan", True, bi(f"tiles of {TILE} elements", f"分块为 {TILE} 个元素"), want)


def judge(data, ctx) -> list[Criterion]:
    out = []
    cases = []
    for name, total, blocks in CASES:
        c = compare("numerics", data.output(f"y_{name}"), expected(inputs(name, total)), ATOL, RTOL)
        c.detail = bi(f"{total} elements on {blocks} block(s)", f"{total} 个元素，{blocks} 个块")
        cases.append(c)
    result = first_failure(cases)
    out.append(result)
    out.append(_tile_plan(data))

    main = data.run("main")
    metrics = run_metrics(main)
    overlap = metrics.mte2_compute_overlap or 0.0  # None: no instruction-level kernel ran
    need_overlap = float(ctx.settings["min_overlap"])
    out.append(
        Criterion(
            "overlap",
            overlap >= need_overlap,
            bi(
                f"MTE2 loading during {100 * overlap:.0f} % of V's busy time",
                f"V 忙碌时间中有 {100 * overlap:.0f} % 同时在 MTE2 搬入",
            ),
            bi(f">= {100 * need_overlap:.0f} %", f">= {100 * need_overlap:.0f} %"),
        )
    )
    yours = kernel_time_us(main)
    base = ctx.reference("baseline_us")
    speedup = base / yours if yours else 0.0
    need = float(ctx.settings["min_speedup"])
    does_the_work = result.passed and pipe_flops(main, "VECTOR") >= VECTOR_OPS * CASES[0][1]
    shown = bi(f"{yours:.2f} us: {speedup:.2f}x", f"{yours:.2f} us：{speedup:.2f} 倍")
    if not does_the_work:
        shown = bi(
            f"{yours:.2f} us, but the kernel does not compute Hard-Swish yet",
            f"{yours:.2f} us，但核函数还没有正确计算 Hard-Swish",
        )
    out.append(
        Criterion(
            "speedup",
            does_the_work and speedup >= need,
            shown,
            bi(
                f">= {need:g}x the single-buffered kernel ({base:.2f} us)",
                f">= 单缓冲核函数（{base:.2f} us）的 {need:g} 倍",
            ),
        )
    )
    weak = []
    for name, total, _blocks in CASES:
        run = data.run(name)
        flops, back = pipe_flops(run, "VECTOR"), d2h_from_kernel(run)
        if flops < VECTOR_OPS * total or back < 2 * total:
            weak.append(
                bi(
                    f"{name}: {flops} vector flops, {back} B back from the kernel",
                    f"{name}：{flops} 次向量运算，{back} B 取自核函数输出",
                )
            )
    out.append(
        on_device(
            weak,
            bi("computed by the kernel", "由核函数计算"),
            bi(
                f">= {VECTOR_OPS} vector flops per element; y from the kernel's output",
                f"每个元素至少 {VECTOR_OPS} 次向量运算；y 取自核函数输出",
            ),
        )
    )
    problems = findings(*(data.run(name) for name, *_ in CASES))
    out.append(no_findings(problems))
    return out


def judge_hidden(data, ctx, case) -> list[Criterion]:
    """One hidden case: the numbers, the launched tile plan, on the device, no finding (the speed is the visible
    case's alone)."""
    total = case.params["total"]
    out = [compare("numerics", data.output(f"y_{case.run}"), expected(inputs(case.run, total)), ATOL, RTOL)]
    out.append(_tile_plan(data, (case.run,)))
    run = data.run(case.run)
    out.append(
        Criterion("on_device", pipe_flops(run, "VECTOR") >= VECTOR_OPS * total and d2h_from_kernel(run) >= 2 * total)
    )
    out.append(no_findings(findings(run)))
    return out
