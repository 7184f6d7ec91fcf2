"""Lesson 2 check (runs in the grader): the host's tiling (32-byte granularity, big cores first, the block count,
the tiling key) and the ranges read from it, then the given kernel launched with it on 1-48 cores."""

from __future__ import annotations

import numpy as np

from lessons.checks import (
    Criterion,
    bi,
    compare,
    d2h_from_kernel,
    findings,
    first_failure,
    no_findings,
    on_device,
    pipe_flops,
)
from lessons.launches import launches

from .scenario import DTYPES, KERNEL_CASES, PURE_CASES, TINY, inputs

MAIN_RUN = "main"
BLOCK_BYTES = 32
ALIGNED, PADDED = 1, 2


def _case(total: int, size: int, cores: int) -> dict:
    return bi(
        f"N={total}, {size}-byte elements, {cores} core{'s' if cores != 1 else ''}",
        f"N={total}，每个元素 {size} 字节，{cores} 个核",
    )


def _with(case: dict, en: str, zh: str) -> dict:
    return bi(f"{case['en']}: {en}", f"{case['zh']}：{zh}")


def _cover(ranges: list, total: int) -> tuple[str, str] | None:
    """Why ``ranges`` do not cover [0, total) exactly once (English, Chinese), or None."""
    count = np.zeros(total + 1, dtype=np.int64)
    for start, length in ranges:
        if start < 0 or length < 0 or start + length > total:
            return (
                f"range [{start}, {start + length}) is outside [0, {total})",
                f"区间 [{start}, {start + length}) 超出 [0, {total})",
            )
        count[start : start + length] += 1
    twice = np.flatnonzero(count[:total] > 1)
    missed = np.flatnonzero(count[:total] == 0)
    if len(twice):
        return (
            f"element {twice[0]} belongs to {count[twice[0]]} blocks",
            f"元素 {twice[0]} 属于 {count[twice[0]]} 个块",
        )
    if len(missed):
        return (f"element {missed[0]} belongs to no block", f"元素 {missed[0]} 不属于任何块")
    return None


def _problems(total: int, size: int, cores: int, got) -> dict:
    """What is wrong with one case's tiling: criterion -> (English, Chinese)."""
    align = BLOCK_BYTES // size
    blocks = -(-total // align)
    out = {}
    if not isinstance(got, dict) or not isinstance(got.get("ranges"), list):
        return dict.fromkeys(
            ("exact_cover", "aligned", "balanced", "block_dim", "tiling_key"), ("no tiling", "没有 tiling")
        )
    ranges, block_dim, key = got["ranges"], got.get("block_dim"), got.get("key")
    want_dim = min(cores, blocks)
    if block_dim != want_dim:
        out["block_dim"] = (f"block_dim {block_dim}", f"block_dim 为 {block_dim}")
    want_key = ALIGNED if total % align == 0 else PADDED
    if key != want_key:
        out["tiling_key"] = (f"tiling key {key}", f"tiling key 为 {key}")
    if len(ranges) != block_dim or not all(isinstance(r, list) and len(r) == 2 for r in ranges):
        out["exact_cover"] = (
            f"{len(ranges)} ranges for {block_dim} blocks",
            f"{block_dim} 个块却有 {len(ranges)} 个区间",
        )
        return out
    why = _cover(ranges, total)
    if why:
        out["exact_cover"] = why
    odd = next((r for r in ranges if r[0] * size % BLOCK_BYTES), None)
    if odd is not None:
        out["aligned"] = (
            f"a block starts at element {odd[0]} ({odd[0] * size} B)",
            f"有块从元素 {odd[0]}（{odd[0] * size} B）开始",
        )
    sizes = [-(-length * size // BLOCK_BYTES) for _start, length in ranges]
    if sizes and (max(sizes) - min(sizes) > 1 or sizes != sorted(sizes, reverse=True)):
        out["balanced"] = (
            f"data blocks per block: {sizes[:8]}{' ...' if len(sizes) > 8 else ''}",
            f"各块的数据块数：{sizes[:8]}{' ...' if len(sizes) > 8 else ''}",
        )
    return out


EXPECTED = {
    "exact_cover": bi("every element of [0, N) in exactly one block", "[0, N) 中每个元素恰好属于一个块"),
    "aligned": bi("every block starts on a 32-byte boundary", "每个块都从 32 字节边界开始"),
    "balanced": bi(
        "data blocks per block differ by at most 1, the bigger blocks first", "各块的数据块数相差不超过 1，大块在前"
    ),
    "block_dim": bi(
        "as many blocks as cores, never more than there are 32-byte data blocks",
        "块数等于核数，但不超过 32 字节数据块的个数",
    ),
    "tiling_key": bi(
        "ALIGNED (1) when N fills whole data blocks, PADDED (2) otherwise",
        "N 正好填满数据块时为 ALIGNED（1），否则为 PADDED（2）",
    ),
}


def _ranges(t, block_dim: int) -> list[list[int]]:
    """The blocks' ranges as the struct's fields define them (big blocks first, the last stopping at N)."""
    out, at = [], 0
    for b in range(block_dim):
        length = t.former_length if b < t.former_num else t.tail_length
        out.append([at, max(0, min(length, t.total_length - at))])
        at += length
    return out


def _launched(data, name: str) -> dict | None:
    """The tiling the grader's replay launched run ``name`` with, as ``_problems`` reads a case."""
    found = [la for la in launches(data, name) if la.tiling is not None]
    if len(found) != 1:
        return None
    la = found[0]
    return {"block_dim": la.block_dim, "key": la.tiling_key, "ranges": _ranges(la.tiling, min(la.block_dim, 64))}


def judge(data, ctx) -> list[Criterion]:
    got = data.value("tilings") or {}
    first: dict = {}
    cases = [((total, size, cores), got.get(f"{total}/{size}/{cores}")) for total, size, cores in PURE_CASES]
    cases += [((total, size, cores), _launched(data, name)) for name, total, size, cores in KERNEL_CASES]
    for case, tiling in cases:
        for key, (en, zh) in _problems(*case, tiling).items():
            first.setdefault(key, _with(_case(*case), en, zh))
    n = len(cases)
    out = [
        Criterion(key, key not in first, first.get(key) or bi(f"{n} cases", f"{n} 种情况"), EXPECTED[key])
        for key in EXPECTED
    ]
    for ident, names in (
        ("kernel", [c for c in KERNEL_CASES if c[0] not in TINY]),
        ("tiny", [c for c in KERNEL_CASES if c[0] in TINY]),
    ):
        cases = []
        for name, total, size, cores in names:
            x = inputs(name, total, size)
            c = compare(ident, data.output(f"z_{name}"), x * DTYPES[size](2))
            c.detail = _case(total, size, cores)
            cases.append(c)
        out.append(first_failure(cases))
    weak = []
    for name, total, size, cores in KERNEL_CASES:
        run = data.run(name)
        flops, back = pipe_flops(run, "VECTOR"), d2h_from_kernel(run)
        if flops < total or back < size * total:
            weak.append(
                bi(
                    f"N={total} on {cores} cores: {flops} vector flops, {back} B back from the kernel",
                    f"N={total}，{cores} 个核：{flops} 次向量运算，{back} B 取自核函数输出",
                )
            )
    out.append(
        on_device(
            weak,
            bi("every run computed by the kernel", "每次运行都由核函数计算"),
            bi(
                ">= N vector flops per run, z copied back from the kernel's output",
                "每次运行至少 N 次向量运算，z 取自核函数的输出",
            ),
        )
    )
    problems = findings(*(data.run(name) for name, *_ in KERNEL_CASES))
    out.append(no_findings(problems, bi("no kernel error, race or deadlock", "没有核函数错误、数据竞争或死锁")))
    return out


def judge_hidden(data, ctx, case) -> list[Criterion]:
    """One hidden case: the tiling the replay launched it with, z, on the device, no finding."""
    p = case.params
    total, size, cores = p["total"], p["size"], p["cores"]
    problems = _problems(total, size, cores, _launched(data, case.run))
    out = [Criterion(key, key not in problems, "", EXPECTED[key]) for key in EXPECTED]
    x = inputs(case.run, total, size, p["seed"])
    ident = "tiny" if case.kind == "few" else "kernel"
    out.append(compare(ident, data.output(f"z_{case.run}"), x * DTYPES[size](2)))
    run = data.run(case.run)
    device = pipe_flops(run, "VECTOR") >= total and d2h_from_kernel(run) >= size * total
    out.append(Criterion("on_device", device))
    out.append(no_findings(findings(run)))
    return out
