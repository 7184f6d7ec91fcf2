"""Lesson 8 check (runs in the grader): numbers, two streams with events, no cross-stream race, speed-up; the
hidden cases (other batch counts and sizes) without the speed-up."""

from __future__ import annotations

from engine.device.stream import TaskKind
from lessons.checks import Criterion, bi, compare, d2h_from_kernel, findings, first_failure, kernel_flops

from .scenario import expected, inputs, tolerance, work_span_us

MAIN_RUN = "main"
REFERENCES = ("baseline_us",)  # computed by the grader from the lesson's own programs


def _case(data, name: str, a: list, b: list) -> list[Criterion]:
    """Numbers, streams and events, races and the device's work on run ``name`` (batches ``a``, ``b``)."""
    got = data.output(f"c_{name}")
    batches, n = len(a), a[0].shape[0]
    cases = []
    for i in range(batches):
        ref = expected(a[i], b[i])
        yours = got[i] if isinstance(got, list) and len(got) == batches else None
        c = compare("numerics", yours, ref, tolerance(ref), 0.0)
        c.detail = bi(f"batch {i}", f"第 {i} 批")
        cases.append(c)
    out = [first_failure(cases)]

    run = data.run(name)
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
    flops, back = kernel_flops(run), d2h_from_kernel(run)
    need_flops, need_bytes = batches * 2 * n**3, batches * n * n * 2
    out.append(
        Criterion(
            "on_device",
            flops >= need_flops and back >= need_bytes,
            bi(
                f"{flops} matmul flops, {back} B copied back from matmul output",
                f"矩阵乘 {flops} 次运算，从矩阵乘输出拷回 {back} B",
            ),
            bi(
                f">= {need_flops} flops, >= {need_bytes} B back from what the matmuls wrote",
                f">= {need_flops} 次运算，从矩阵乘写出的数据拷回 >= {need_bytes} B",
            ),
        )
    )
    return out


def judge(data, ctx) -> list[Criterion]:
    numerics, streams, race, device = _case(data, "main", *inputs())
    yours = work_span_us(data.run("main"))
    base = ctx.reference("baseline_us")
    speedup = base / yours if yours else 0.0
    need = float(ctx.settings["min_speedup"])
    speed = Criterion(
        "speedup",
        speedup >= need and numerics.passed,
        bi(f"{yours:.1f} us: {speedup:.2f}x", f"{yours:.1f} us：{speedup:.2f} 倍"),
        bi(
            f">= {need:g}x the one-stream pipeline ({base:.1f} us, first copy to last copy)",
            f">= 单流流水线（{base:.1f} us，从第一次拷贝到最后一次拷贝）的 {need:g} 倍",
        ),
    )
    return [numerics, streams, race, speed, device]


def judge_hidden(data, ctx, case) -> list[Criterion]:
    p = case.params
    return _case(data, case.run, *inputs(p["batches"], p["n"], p["seed"]))
