"""Lesson 13 check (runs in the grader): the host's tiling each launch carried (TilingData, 512-byte units, big
cores first, no idle or empty core), y = |x| * scale on the whole length, computed on the device, and no finding
(a GM access past a tensor's end is a kernel error, two cores writing the same bytes a race); on the visible cases
and on each hidden case (another element size, fewer units than cores, another chip)."""

from __future__ import annotations

import numpy as np

from lessons.checks import Criterion, bi, compare, d2h_from_kernel, findings, first_failure, no_findings, pipe_flops
from lessons.launches import launches

from .scenario import KERNEL_CASES, expected, inputs

MAIN_RUN = "main"
UNIT_BYTES = 512
TILING_IDS = ("host_tiling", "exact_cover", "aligned_512")


def _case(total: int, size: int, cores: int) -> dict:
    return bi(f"N={total}, {size}-byte elements, {cores} cores", f"N={total}，每个元素 {size} 字节，{cores} 个核")


def _ranges(t, block_dim: int) -> list[tuple[int, int]]:
    """The blocks' (start, length) as the struct's fields define them (big blocks first, the last stopping at N)."""
    out, at = [], 0
    for b in range(block_dim):
        length = t.former_length if b < t.former_num else t.tail_length
        out.append((at, max(0, min(length, t.total_length - at))))
        at += length
    return out


def _cover(ranges: list, total: int) -> tuple[str, str] | None:
    """Why ``ranges`` do not cover [0, total) exactly once (English, Chinese), or None."""
    count = np.zeros(total, dtype=np.int64)
    for start, length in ranges:
        if start < 0 or length <= 0 or start + length > total:
            return (
                f"a block's range [{start}, {start + length}) is empty or outside [0, {total})",
                f"有块的区间 [{start}, {start + length}) 为空或超出 [0, {total})",
            )
        count[start : start + length] += 1
    bad = np.flatnonzero(count != 1)
    if len(bad):
        i = int(bad[0])
        return (f"element {i} belongs to {count[i]} blocks", f"元素 {i} 属于 {count[i]} 个块")
    return None


def _problems(data, name: str, total: int, size: int, cores: int) -> dict:
    """What is wrong with the tiling run ``name`` launched with: criterion -> (English, Chinese)."""
    found = [la for la in launches(data, name) if la.tiling is not None]
    if len(found) != 1 or not all(hasattr(found[0].tiling, f) for f in ("former_num", "former_length")):
        return dict.fromkeys(TILING_IDS, ("no PadTilingData carried by the launch", "下发没有携带 PadTilingData"))
    la, t, out = found[0], found[0].tiling, {}
    unit = UNIT_BYTES // size
    units = -(-total // unit)
    if la.block_dim != min(cores, units) or t.total_length != total:
        out["host_tiling"] = (
            f"block_dim {la.block_dim}, total_length {t.total_length}",
            f"block_dim 为 {la.block_dim}，total_length 为 {t.total_length}",
        )
    ranges = _ranges(t, min(la.block_dim, 64))
    why = _cover(ranges, total) if la.block_dim <= 64 else ("more than 64 blocks", "超过 64 个块")
    if why:
        out["exact_cover"] = why
    odd = next((s for s, _n in ranges if s * size % UNIT_BYTES), None)
    shares = [-(-n * size // UNIT_BYTES) for _s, n in ranges]
    if odd is not None:
        out["aligned_512"] = (f"a block starts at byte {odd * size}", f"有块从第 {odd * size} 字节开始")
    elif shares and (max(shares) - min(shares) > 1 or shares != sorted(shares, reverse=True)):
        out["aligned_512"] = (f"512-byte units per block: {shares[:8]}", f"各块的 512 字节单元数：{shares[:8]}")
    return out


EXPECTED = {
    "host_tiling": bi(
        "the launch carries PadTilingData; as many blocks as cores, never more than 512-byte units",
        "下发携带 PadTilingData；块数等于核数，但不超过 512 字节单元的个数",
    ),
    "exact_cover": bi("every element of [0, N) in exactly one block", "[0, N) 中每个元素恰好属于一个块"),
    "aligned_512": bi(
        "every block starts on a 512-byte boundary; shares differ by at most one unit, the bigger first",
        "每个块都从 512 字节边界开始；各块相差不超过一个单元，大块在前",
    ),
}


def _numerics(data, name: str, x: np.ndarray) -> Criterion:
    return compare("numerics", data.output(f"y_{name}"), expected(x))


def _on_device(run, total: int, size: int) -> bool:
    return pipe_flops(run, "VECTOR") >= 2 * total and d2h_from_kernel(run) >= size * total


def judge(data, ctx) -> list[Criterion]:
    first: dict = {}
    numerics, weak = [], []
    for name, total, size, cores in KERNEL_CASES:
        case = _case(total, size, cores)
        for key, (en, zh) in _problems(data, name, total, size, cores).items():
            first.setdefault(key, bi(f"{case['en']}: {en}", f"{case['zh']}：{zh}"))
        c = _numerics(data, name, inputs(name, total, size))
        c.detail = case
        numerics.append(c)
        if not _on_device(data.run(name), total, size):
            weak.append(case)
    n = len(KERNEL_CASES)
    out = [
        Criterion(key, key not in first, first.get(key) or bi(f"{n} launches", f"{n} 次下发"), EXPECTED[key])
        for key in EXPECTED
    ]
    out.append(first_failure(numerics))
    out.append(
        Criterion(
            "on_device",
            not weak,
            weak[0] if weak else bi("every run computed by the kernel", "每次运行都由核函数计算"),
            bi(
                ">= 2 vector flops per element, y copied back from the kernel's output",
                "每个元素至少 2 次向量运算，y 取自核函数的输出",
            ),
        )
    )
    problems = findings(*(data.run(name) for name, *_ in KERNEL_CASES))
    out.append(no_findings(problems, bi("no kernel error, race or deadlock", "没有核函数错误、数据竞争或死锁")))
    return out


def judge_hidden(data, ctx, case) -> list[Criterion]:
    """One hidden case: the tiling its launch carried, y, on the device, no finding."""
    p = case.params
    total, size, cores = p["total"], p["size"], p["cores"]
    problems = _problems(data, case.run, total, size, cores)
    out = [Criterion(key, key not in problems, "", EXPECTED[key]) for key in EXPECTED]
    out.append(_numerics(data, case.run, inputs(case.run, total, size, p["seed"])))
    run = data.run(case.run)
    out.append(Criterion("on_device", _on_device(run, total, size)))
    out.append(no_findings(findings(run)))
    return out
