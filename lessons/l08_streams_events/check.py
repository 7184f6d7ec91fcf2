"""Lesson 8 check (runs in the grader): numbers, two streams with events, no cross-stream race, speed-up."""

from __future__ import annotations

from engine.device.stream import TaskKind
from lessons.checks import Criterion, bi, compare, d2h_from_kernel, findings, first_failure, kernel_flops

from .scenario import BATCHES, N, expected, inputs, tolerance, work_span_us

MAIN_RUN = "main"
REFERENCES = ("baseline_us",)  # computed by the grader from the lesson's own programs


def judge(data, ctx) -> list[Criterion]:
    a, b = inputs()
    got = data.output("c")
    out = []
    cases = []
    for i in range(BATCHES):
        ref = expected(a[i], b[i])
        yours = got[i] if isinstance(got, list) and len(got) == BATCHES else None
        c = compare("numerics", yours, ref, tolerance(ref), 0.0)
        c.detail = f"batch {i}"
        cases.append(c)
    result = first_failure(cases)
    out.append(result)

    run = data.run("main")
    working = {t.stream for t in run.tasks if t.kind in (TaskKind.COPY, TaskKind.KERNEL)}
    records = sum(1 for t in run.tasks if t.kind == TaskKind.RECORD)
    waits = sum(1 for t in run.tasks if t.kind == TaskKind.WAIT)
    ok = len(working) >= 2 and records > 0 and waits > 0
    out.append(
        Criterion(
            "two_streams",
            ok,
            bi(
                f"{len(working)} stream(s) with work; {records} records, {waits} waits",
                f"{len(working)} 个流有任务；{records} 次 record，{waits} 次 wait",
            ),
            bi(
                ">= 2 streams, ordered by record_event / stream_wait_event",
                ">= 2 个流，用 record_event / stream_wait_event 排序",
            ),
        )
    )
    problems = findings(run)
    out.append(
        Criterion(
            "no_race",
            not problems,
            problems[0] if problems else bi("none", "无"),
            bi("no cross-stream race (and no other finding)", "没有跨流数据竞争（也没有其他问题）"),
        )
    )
    yours = work_span_us(run)
    base = ctx.reference("baseline_us")
    speedup = base / yours if yours else 0.0
    need = float(ctx.settings["min_speedup"])
    out.append(
        Criterion(
            "speedup",
            speedup >= need and result.passed,
            bi(f"{yours:.1f} us: {speedup:.2f}x", f"{yours:.1f} us：{speedup:.2f} 倍"),
            bi(
                f">= {need:g}x the one-stream pipeline ({base:.1f} us, first copy to last copy)",
                f">= 单流流水线（{base:.1f} us，从第一次拷贝到最后一次拷贝）的 {need:g} 倍",
            ),
        )
    )
    flops, back = kernel_flops(run), d2h_from_kernel(run)
    need_flops, need_bytes = BATCHES * 2 * N**3, BATCHES * N * N * 2
    out.append(
        Criterion(
            "on_device",
            flops >= need_flops and back >= need_bytes,
            f"{flops} matmul flops, {back} B copied back from matmul output",
            f">= {need_flops} flops, >= {need_bytes} B back from what the matmuls wrote",
        )
    )
    return out
