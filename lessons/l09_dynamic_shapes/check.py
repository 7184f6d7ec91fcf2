"""Lesson 9 check (runs in the grader): every shape right, every tiling from the tiler, repeats looked up,
host tiling time cut against recomputing, the device not slowed down by the cheaper tilings."""

from __future__ import annotations

from lessons.checks import Criterion, bi, compare, d2h_from_kernel, findings, first_failure, no_findings, pipe_flops

from .scenario import NUMERICS, SEQUENCES, device_us, expected, shapes, tiling_us, tolerance

MAIN_RUN = "drifting"
REFERENCES = ("recompute_baseline",)  # computed by the grader from the lesson's own planners


def _name_zh(sequence: str, i: int, shape) -> str:
    return f"{sequence} 序列第 {i} 个形状（{shape[0]}x{shape[1]}x{shape[2]}）"


def _name(sequence: str, i: int, shape) -> str:
    return f"{sequence} shape {i} ({shape[0]}x{shape[1]}x{shape[2]})"


def judge(data, ctx) -> list[Criterion]:
    out = [_numerics(data), _from_tiler(data), _cache(data)]
    base = ctx.reference("recompute_baseline")
    share = float(ctx.settings["max_tiling_share"])
    factor = float(ctx.settings["max_device_factor"])
    host = {name: tiling_us(data.run(name)) for name in SEQUENCES}
    worst = max(SEQUENCES, key=lambda name: host[name] / base[name]["tiling_us"])
    shown = ", ".join(f"{n} {host[n]:.1f} us ({100 * host[n] / base[n]['tiling_us']:.0f} %)" for n in SEQUENCES)
    out.append(
        Criterion(
            "host_time",
            all(host[name] <= share * base[name]["tiling_us"] for name in SEQUENCES),
            shown,
            bi(
                f"<= {100 * share:.0f} % of recomputing every tiling on each sequence ({worst}: "
                f"{base[worst]['tiling_us']:.1f} us)",
                f"每个序列都 <= 每次重新计算 tiling 的 {100 * share:.0f} %"
                f"（{worst}：{base[worst]['tiling_us']:.1f} us）",
            ),
            bi("from the trace: the HOST_WORK rows of tiling", "取自 trace：tiling 的 HOST_WORK 行"),
        )
    )
    device = {name: device_us(data.run(name)) for name in SEQUENCES}
    slowest = max(SEQUENCES, key=lambda name: device[name] / base[name]["device_us"])
    ratio = device[slowest] / base[slowest]["device_us"]
    out.append(
        Criterion(
            "device_time",
            all(device[name] <= factor * base[name]["device_us"] for name in SEQUENCES),
            bi(
                f"{slowest}: {device[slowest]:.1f} us of Cube work, {ratio:.2f}x recomputing's tilings",
                f"{slowest}：Cube 工作 {device[slowest]:.1f} us，是重新计算的 tiling 的 {ratio:.2f} 倍",
            ),
            bi(
                f"<= {factor:g}x the device time of recomputed tilings on each sequence",
                f"每个序列的设备时间都 <= 重新计算的 tiling 的 {factor:g} 倍",
            ),
        )
    )
    out.append(_on_device(data))
    problems = findings(*(data.run(name) for name in SEQUENCES))
    out.append(no_findings(problems))
    return out


def _numerics(data) -> Criterion:
    cases = []
    for name in NUMERICS:
        got = data.output(f"c_{name}")
        for i, shape in enumerate(shapes(name)):
            ref = expected(i, shape)
            yours = got[i] if isinstance(got, list) and len(got) == len(shapes(name)) else None
            c = compare("numerics", yours, ref, tolerance(ref, shape[2]))
            c.detail = bi(_name(name, i, shape), _name_zh(name, i, shape))
            cases.append(c)
    return first_failure(cases)


def _plans(data, name: str, count: int | None = None) -> list[dict]:
    plans = data.observed(f"plans_{name}")
    if not isinstance(plans, list) or len(plans) != (len(shapes(name)) if count is None else count):
        raise ValueError(f"plans_{name}: one plan per shape expected")
    return plans


def _from_tiler(data, runs: dict | None = None) -> Criterion:
    """Every plan of ``runs`` (run name -> its number of shapes; the visible sequences by default) valid and
    from the tiler."""
    runs = runs or dict.fromkeys(SEQUENCES)
    for name, count in runs.items():
        for i, plan in enumerate(_plans(data, name, count)):
            if plan.get("problem"):
                return Criterion(
                    "from_tiler",
                    False,
                    bi(
                        f"{_name(name, i, plan['shape'])}: {plan['problem']}",
                        f"{_name_zh(name, i, plan['shape'])}：{plan.get('problem_zh') or plan['problem']}",
                    ),
                    bi("a valid tiling of the shape, from the tiler", "该形状的有效 tiling，来自 tiler"),
                )
    return Criterion(
        "from_tiler",
        True,
        bi("every tiling came from the tiler", "每个 tiling 都来自 tiler"),
        bi("a valid tiling of the shape, from the tiler", "该形状的有效 tiling，来自 tiler"),
    )


def _cache(data, runs: dict | None = None) -> Criterion:
    want = bi("a shape seen before: one tiler.reuse, no search", "见过的形状：一次 tiler.reuse，不再搜索")
    repeats = 0
    runs = runs or dict.fromkeys(SEQUENCES)
    for name, count in runs.items():
        seen = set()
        for i, plan in enumerate(_plans(data, name, count)):
            shape = tuple(plan["shape"])
            calls = plan.get("calls") or []
            if shape in seen:
                repeats += 1
                if [c.get("call") for c in calls] != ["reuse"]:
                    did = ", ".join(f"{c.get('call')} ({c.get('candidates')} candidates)" for c in calls) or "nothing"
                    return Criterion(
                        "cache",
                        False,
                        bi(
                            f"{_name(name, i, shape)} was seen before; it cost: {did}",
                            f"{_name_zh(name, i, shape)} 之前出现过；这次花费：{did}",
                        ),
                        want,
                    )
            seen.add(shape)
    done = bi(f"{repeats} repeated shapes, each one lookup", f"{repeats} 个重复形状，每个只查找一次")
    return Criterion("cache", True, done, want)


def judge_hidden(data, ctx, case) -> list[Criterion]:
    """One hidden sequence: every plan valid and from the tiler, every repeat one lookup, no finding."""
    runs = {case.run: len(case.params["shapes"])}
    return [_from_tiler(data, runs), _cache(data, runs), no_findings(findings(data.run(case.run)))]


def _on_device(data) -> Criterion:
    weak = []
    for name in SEQUENCES:
        run = data.run(name)
        sequence = shapes(name)
        flops = pipe_flops(run, "CUBE")
        need = sum(2 * m * n * k for m, n, k in sequence)
        back, need_back = d2h_from_kernel(run), sum(2 * m * n for m, n, _k in sequence)
        if flops < need or (name in NUMERICS and back < need_back):
            weak.append(
                bi(
                    f"{name}: {flops} Cube flops of {need}, {back} B back from the kernels",
                    f"{name}：{flops} 次 Cube 运算（需要 {need} 次），{back} B 取自核函数输出",
                )
            )
    return Criterion(
        "on_device",
        not weak,
        weak[0] if weak else bi("the Cube did every matmul", "每个矩阵乘都由 Cube 完成"),
        bi("2*M*N*K Cube flops per shape; C from the kernels' output", "每个形状 2*M*N*K 次 Cube 运算；C 取自核输出"),
    )
