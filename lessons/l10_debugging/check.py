"""Lesson 10 check (runs in the grader): no findings left, the right y, the performance target met."""

from __future__ import annotations

from engine.analysis.rules import recommend
from lessons.checks import Criterion, bi, compare, d2h_from_kernel, findings, kernel_time_us, no_findings, pipe_flops

from .scenario import N, expected, inputs

MAIN_RUN = "main"
REFERENCES = ("reference_kernel_us",)  # computed by the grader from the lesson's own program


def judge(data, ctx) -> list[Criterion]:
    run = data.run("main")
    out = [compare("numerics", data.output("y"), expected(inputs()), 2.0**-10, 2.0**-9)]
    problems = findings(run)
    out.append(
        no_findings(problems, bi("no race, deadlock, error or misuse finding", "没有数据竞争、死锁、错误或误用报告"), 3)
    )
    yours = kernel_time_us(run)
    target = float(ctx.settings["target_factor"]) * ctx.reference("reference_kernel_us")
    from engine.analysis.gaps import label_gaps
    from engine.analysis.metrics import run_metrics

    advice = [f"profiler: [{r.rule}] {r.title}" for r in recommend(run, run_metrics(run), label_gaps(run), {}, None)]
    fast = 0 < yours <= target and out[0].passed
    out.append(
        Criterion(
            "performance",
            fast,
            bi(f"kernel {yours:.2f} us", f"核函数 {yours:.2f} us")
            if yours
            else bi("the kernel did not finish", "核函数没有正常完成"),
            bi(f"<= {target:.2f} us", f"<= {target:.2f} us"),
            "\n".join(advice),
        )
    )
    flops, back = pipe_flops(run, "VECTOR"), d2h_from_kernel(run)
    out.append(
        Criterion(
            "on_device",
            flops >= 3 * N and back >= 2 * N,
            f"{flops} vector flops, {back} B back from the kernel",
            f">= {3 * N} vector flops, >= {2 * N} B back from what the kernel wrote",
        )
    )
    return out
