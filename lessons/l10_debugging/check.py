"""Lesson 10 check (runs in the grader): no findings left, the right y, the performance target met; beside the
verdict, the seed profiler's three figures of the trainee's run with their thresholds and msprof's counterparts."""

from __future__ import annotations

from engine.analysis.gaps import label_gaps
from engine.analysis.metrics import run_metrics
from engine.analysis.rules import recommend
from engine.analysis.seed_rules import SEED_BALANCE, SEED_MEMORY, SEED_PARALLELISM
from lessons.checks import Criterion, bi, compare, d2h_from_kernel, findings, kernel_time_us, no_findings, pipe_flops

from .scenario import N, expected, inputs

MAIN_RUN = "main"
REFERENCES = ("reference_kernel_us",)  # computed by the grader from the lesson's own program
SEED_HOST_SHARE = 0.1  # seed 6.1: "Host应占10%以内", the ideal behind its balance score


def seed_figures(run) -> dict:
    """The seed profiler's three figures of ``run`` (section 6.1), each with its threshold, whether it flags the
    run, and where msprof shows the same thing: English and Chinese lines."""
    m = run_metrics(run)
    total = m.host_api_us + m.device_busy_us
    share = m.host_api_us / total if total else 0.0
    k = m.main
    memory = k.memory_bound_index if k else 0.0
    parallel = k.parallelism_utilization if k else 0.0
    blocks, cores = (k.blocks, k.cores_available) if k else (0, 0)
    rows = [
        (
            m.balance_score < SEED_BALANCE,
            f"host share {100 * share:.1f} % of host + device time, balance score {m.balance_score:.2f} (the seed "
            f"wants the host at most at {100 * SEED_HOST_SHARE:.0f} % and flags a score below {SEED_BALANCE}; msprof: "
            "api_statistic's AscendCL API time against op_summary's Task Duration)",
            f"主机占主机 + 设备时间的 {100 * share:.1f} %，平衡分 {m.balance_score:.2f}（原文要求主机至多占 "
            f"{100 * SEED_HOST_SHARE:.0f} %，平衡分低于 {SEED_BALANCE} 即报警；"
            "msprof：api_statistic 中 AscendCL API 的耗时对比 op_summary 的 Task Duration）",
        ),
        (
            memory > SEED_MEMORY,
            f"memory-bound index {memory:.2f} (the compute pipe's waits for data over waits + compute; the seed flags "
            f"above {SEED_MEMORY}; msprof: PipeUtilization's aiv_vec_ratio low while aiv_mte2_ratio is high)",
            f"访存受限指数 {memory:.2f}（计算流水线等数据的时间 / (等待 + 计算)；原文在高于 {SEED_MEMORY} 时报警；"
            "msprof：PipeUtilization 中 aiv_vec_ratio 低而 aiv_mte2_ratio 高）",
        ),
        (
            parallel < SEED_PARALLELISM,
            f"parallelism utilisation {parallel:.2f} ({blocks} blocks, {cores} cores; the seed flags below "
            f"{SEED_PARALLELISM}; msprof: op_summary's Block Dim against the chip's core count)",
            f"并行利用率 {parallel:.2f}（{blocks} 个块，{cores} 个核；原文在低于 {SEED_PARALLELISM} 时报警；"
            "msprof：op_summary 的 Block Dim 对比芯片的核数）",
        ),
    ]
    if k is None:  # no instruction-level kernel ran to its end: there are no kernel figures to read
        none = ("no kernel ran to its end: no kernel figures", "没有核函数正常运行结束：没有核函数的指标")
        rows = [rows[0], (False, *none)]
    flag_en, flag_zh = "FLAGGED", "报警"
    en = "\n".join(f"seed profiler: {flag_en + ': ' if bad else ''}{line}" for bad, line, _ in rows)
    zh = "\n".join(f"原文性能分析器：{flag_zh + '：' if bad else ''}{line}" for bad, _, line in rows)
    return bi(en, zh)


def judge(data, ctx) -> list[Criterion]:
    run = data.run("main")
    out = [compare("numerics", data.output("y"), expected(inputs()), 2.0**-10, 2.0**-9)]
    problems = findings(run)
    out.append(
        no_findings(problems, bi("no race, deadlock, error or misuse finding", "没有数据竞争、死锁、错误或误用报告"), 3)
    )
    yours = kernel_time_us(run)
    target = float(ctx.settings["target_factor"]) * ctx.reference("reference_kernel_us")
    recommendations = recommend(run, run_metrics(run), label_gaps(run), {}, None)
    advice_en = "\n".join(f"profiler: [{r.rule}] {r.title}" for r in recommendations)
    advice_zh = "\n".join(f"性能分析器：[{r.rule}] {r.title_zh}" for r in recommendations)
    figures = seed_figures(run)
    fast = 0 < yours <= target and out[0].passed
    out.append(
        Criterion(
            "performance",
            fast,
            bi(f"kernel {yours:.2f} us", f"核函数 {yours:.2f} us")
            if yours
            else bi("the kernel did not finish", "核函数没有正常完成"),
            bi(f"<= {target:.2f} us", f"<= {target:.2f} us"),
            bi(
                "\n".join(x for x in (figures["en"], advice_en) if x),
                "\n".join(x for x in (figures["zh"], advice_zh) if x),
            ),
        )
    )
    out.append(_on_device(run, N))
    return out


def judge_hidden(data, ctx, case) -> list[Criterion]:
    """One hidden case: y, no finding, on the device (the time is the visible case's alone)."""
    total = case.params["total"]
    x = inputs(total, case.params["seed"])
    run = data.run(case.run)
    out = [compare("numerics", data.output(f"y_{case.run}"), expected(x), 2.0**-10, 2.0**-9)]
    out.append(no_findings(findings(run)))
    out.append(_on_device(run, total))
    return out


def _on_device(run, n: int) -> Criterion:
    flops, back = pipe_flops(run, "VECTOR"), d2h_from_kernel(run)
    return Criterion(
        "on_device",
        flops >= 3 * n and back >= 2 * n,
        bi(f"{flops} vector flops, {back} B back from the kernel", f"{flops} 次向量运算，{back} B 取自核函数输出"),
        bi(
            f">= {3 * n} vector flops, >= {2 * n} B back from what the kernel wrote",
            f">= {3 * n} 次向量运算，>= {2 * n} B 取自核函数写出的数据",
        ),
    )
