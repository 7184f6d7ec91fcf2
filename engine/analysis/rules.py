"""Recommendations: rules with documented thresholds, their evidence, and the measured gain.

=====================  =========================================================================  =====================
rule                   fires when                                                                 re-run with
=====================  =========================================================================  =====================
double_buffering       a kernel's compute pipe overlaps MTE2 less than 20 % of its busy time      ``buffer_num=2``
                       while MTE2 is busy at least 20 % of the kernel, and its queues are single-
                       buffered (no load went to a second slot, no ``buffer_num=2``)
larger_base_blocks     a Cube kernel keeps the Cube busy less than 60 % while MTE1 or MTE2 is     automatic tiling
                       busy more than 70 %, with fixed base blocks under 128 x 256                (``base=None``)
pinned_memory          the host spends more than 5 % of the run blocked in pageable copies         ``pageable=False``
second_stream          several kernels and their copies share one stream, copies take more than   ``streams=2``
                       20 % of device busy time, and less than 10 % of copy time overlaps a kernel
too_few_blocks         a kernel's blocks reach less than half of the cores of its type, with the  one block per core
                       core count fixed by the caller                                              (``cores=None``)
unbalanced_tail        cores sit idle in a kernel's tail for more than 15 % of its core time      (advice only)
cache_tilings          the host tiles while no stream has work for more than 10 % of the kernel   (saved host time)
                       time, or tiling was done more than once
host_between_launches  streams wait for the host more than 20 % of the device-active time         ``sync_each=False``
                       (not reported with pinned_memory, which is then the cause)
host_device_balance    seed 6.1: the seed's balance score, over the work phase, is below 0.8      ``sync_each=False``,
                       (the host takes more than 12.5 % of host + device time)                   ``pageable=False`` or
                                                                                                 ``policy=adaptive``
memory_bottleneck      seed 6.1: the main kernel's memory-bound index is above 0.7 (its compute   ``buffer_num=2``, or
                       pipe waits for data more than 70 % of the time it waits or computes)      advice: fewer bytes
low_parallelism        seed 6.1: the main kernel's parallelism utilisation is below 0.6           ``cores=None``, or
                                                                                                 advice: retile
=====================  =========================================================================  =====================

The seed's three rules come last: where an earlier rule already recommends the same change (whether
or not the caller can re-run it), the seed's repeats it no more (the earlier one is the more
specific); ``low_parallelism`` stays quiet when ``too_few_blocks`` already explains the idle cores.

A caller may name rules that do not apply to its run (``context["quiet_rules"]``: a lesson that runs on one
core by design is not told to launch more blocks). A rule never recommends the configuration already in
use: when the run's parameters already hold a rule's change, the rule stays quiet (and the advice of
``unbalanced_tail`` and ``host_between_launches`` names what is not yet done: a block count that is not a
multiple of the cores, or blocks whose work differs; synchronising after every batch, or launches too small for
their host cost). A rule's *evidence* names the metric and its value. When the caller can re-run
the scenario with a parameter changed (``rerun``), the *predicted gain* is measured, not guessed:
the re-run's simulated time against this run's.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType

from ..simulation import RunResult
from ..trace import Kind, LaneKind
from ..trace.data import one_of
from ..trace.detail import HostWait, HostWork
from ..trace.intervals import intersection, merged
from .gaps import Gaps
from .metrics import RunMetrics
from .recommendation import Recommendation, second_slot_loaded, tiling_double_buffered
from .seed_rules import seed_balance, seed_memory, seed_parallelism

RULES = (  # every rule's id, in the order recommend runs them
    "double_buffering",
    "larger_base_blocks",
    "pinned_memory",
    "second_stream",
    "too_few_blocks",
    "unbalanced_tail",
    "cache_tilings",
    "host_between_launches",
    "host_device_balance",
    "memory_bottleneck",
    "low_parallelism",
)
DOUBLE_BUFFER_OVERLAP = 0.20
DOUBLE_BUFFER_MTE2 = 0.20
LARGE_BASE_CUBE = 0.60
LARGE_BASE_MTE = 0.70
PAGEABLE_SHARE = 0.05
SECOND_STREAM_COPY_SHARE = 0.20
SECOND_STREAM_OVERLAP = 0.10
FEW_BLOCKS_SHARE = 0.5
TAIL_SHARE = 0.15
TILING_SHARE = 0.10
HOST_WAIT_SHARE = 0.20


def recommend(
    result: RunResult,
    metrics: RunMetrics,
    gaps: Gaps,
    context: dict,
    rerun: Callable[[dict], RunMetrics | None] | None,
) -> list[Recommendation]:
    params = context.get("params", {})
    quiet = set(context.get("quiet_rules", ()))  # rules the caller says do not apply (a lesson's chosen set-up)
    out: list[Recommendation] = []
    proposed: list[dict] = []  # the changes recommended so far, also those the caller cannot re-run
    rules = (_double_buffering, _larger_base, _pinned, _second_stream, _few_blocks, _tail, _tilings, _host_gaps)
    for rule in (*rules, seed_balance, seed_memory, seed_parallelism):
        rec = rule(result, metrics, gaps, context, params)
        if rec is None or rec.rule in quiet:
            continue
        if rec.change is not None and rec.change in proposed:
            continue  # the same change is already recommended, by a more specific rule
        if rec.rule == "host_between_launches" and any(r.rule == "pinned_memory" for r in out):
            continue  # the host was blocked in pageable copies: that is the cause to fix first
        if rec.rule == "low_parallelism" and any(r.rule == "too_few_blocks" for r in out):
            continue  # too few blocks is why the cores sit idle: the more specific advice already says it
        if rec.change is not None:
            proposed.append(rec.change)
        if rec.change is not None and all(k in params for k in rec.change):
            if all(params[k] == v for k, v in rec.change.items()):
                continue  # already the configuration in use: never recommend it
        elif rec.change is not None:
            rec.change = None  # the caller has no such parameters: advice only
        if rec.change is not None and rerun is not None:
            again = rerun(rec.change)
            if again is not None:
                before, after = metrics.figure(rec.target), again.figure(rec.target)
                rec.before_us = before
                rec.predicted_us = round(after, 3)
                rec.predicted_gain = round((before - after) / before, 4) if before else None
        out.append(rec)
    return out


def _double_buffering(result, metrics, gaps, context, params) -> Recommendation | None:
    k = metrics.main
    if k is None:
        return None
    mte2 = k.pipe_ratios["aic_mte2_ratio" if k.core_type == "cube" else "aiv_mte2_ratio"]
    if k.mte2_compute_overlap >= DOUBLE_BUFFER_OVERLAP or mte2 < DOUBLE_BUFFER_MTE2:
        return None
    if second_slot_loaded(result, k) or tiling_double_buffered(context):
        return None  # double buffering is in use (a block with one tile has nothing to overlap)
    return Recommendation(
        "double_buffering",
        "Enable double buffering",
        "启用双缓冲",
        "Give the input queues two slots (BUFFER_NUM = 2, or dbL0A/dbL0B = 2 and depthA1/depthB1 = 2 x stepKa/stepKb "
        "in the tiling) so "
        "MTE2 loads the next tile while the compute pipe works on this one.",
        "给输入队列两个槽位（BUFFER_NUM = 2，或在 tiling 中令 dbL0A/dbL0B = 2、depthA1/depthB1 = 2 × stepKa/stepKb），"
        "这样计算流水线处理当前分块时，MTE2 已在搬入下一个分块。",
        {
            "mte2_compute_overlap": k.mte2_compute_overlap,
            "mte2_ratio": mte2,
            "memory_bound_index": k.memory_bound_index,
            "kernel": k.kernel,
            "threshold": f"overlap < {DOUBLE_BUFFER_OVERLAP} and MTE2 ratio >= {DOUBLE_BUFFER_MTE2}",
        },
        {"buffer_num": 2},
        target="kernel_us",
        threshold_zh=f"重叠率 < {DOUBLE_BUFFER_OVERLAP} 且 MTE2 占比 >= {DOUBLE_BUFFER_MTE2}",
    )


def _larger_base(result, metrics, gaps, context, params) -> Recommendation | None:
    k = metrics.main
    tiling = context.get("details", {}).get("tiling")
    if k is None or k.core_type != "cube" or not tiling:
        return None
    r = k.pipe_ratios
    mte = max(r["aic_mte1_ratio"], r["aic_mte2_ratio"])
    small = tiling["baseM"] * tiling["baseN"] < 128 * 256
    if k.cube_utilization >= LARGE_BASE_CUBE or mte <= LARGE_BASE_MTE or not small:
        return None
    return Recommendation(
        "larger_base_blocks",
        "Enlarge the base blocks",
        "增大基本块",
        "Each K slice of a small base block moves a lot of data for little Cube work: use bigger baseM x baseN "
        "(up to what L0A, L0B and L0C hold) so MTE1/MTE2 keep up with the Cube.",
        "小基本块的每个 K 切片搬运大量数据却只有很少的 Cube 计算：增大 baseM × baseN（以 L0A、L0B、L0C 容得下为限），"
        "让 MTE1/MTE2 跟得上 Cube。",
        {
            "cube_utilization": k.cube_utilization,
            "aic_mte1_ratio": r["aic_mte1_ratio"],
            "aic_mte2_ratio": r["aic_mte2_ratio"],
            "base": [tiling["baseM"], tiling["baseN"], tiling["baseK"]],
            "threshold": f"cube < {LARGE_BASE_CUBE} and MTE1/MTE2 > {LARGE_BASE_MTE} and baseM*baseN < 128*256",
        },
        {"base": None},
        target="kernel_us",
        threshold_zh=f"Cube 占比 < {LARGE_BASE_CUBE}、MTE1/MTE2 > {LARGE_BASE_MTE} 且 baseM*baseN < 128*256",
    )


def _host_waits(result: RunResult, on: str) -> int:
    """Picoseconds the host spent blocked waiting ``on`` something (a HostWait kind)."""
    t = result.trace
    c = t.columns
    waiting = t.rows_with(lambda d: isinstance(d, HostWait) and d.on == on)
    sel = (c["kind"] == Kind.WAIT) & t.rows_on(LaneKind.HOST) & waiting
    return int((c["end"][sel] - c["start"][sel]).sum())


def _pinned(result, metrics, gaps, context, params) -> Recommendation | None:
    blocked = _host_waits(result, "pageable")
    share = blocked / max(1, result.end_ps)
    if share <= PAGEABLE_SHARE:
        return None
    return Recommendation(
        "pinned_memory",
        "Use pinned host memory",
        "使用锁页主机内存",
        "Copies from plain (pageable) host memory are staged through a pinned buffer and hold the host until they "
        "finish; allocate host buffers with acl.rt.malloc_host so memcpy_async returns at once and copies overlap.",
        "从普通（可分页）主机内存发起的拷贝要经锁页缓冲中转，并让主机一直等到拷贝完成；"
        "用 acl.rt.malloc_host 分配主机缓冲，"
        "memcpy_async 就会立即返回，拷贝得以重叠。",
        {
            "host_blocked_in_pageable_copies_us": round(blocked / 1e6, 3),
            "share_of_run": round(share, 4),
            "threshold": f"share > {PAGEABLE_SHARE}",
        },
        {"pageable": False},
        threshold_zh=f"占比 > {PAGEABLE_SHARE}",
    )


def _second_stream(result, metrics, gaps, context, params) -> Recommendation | None:
    busy = metrics.device_busy_us
    if metrics.streams_used != 1 or not busy or metrics.kernel_count < 2:
        return None  # one kernel, one stream: there is nothing independent to overlap
    copy_share = metrics.copy_us / busy
    if copy_share <= SECOND_STREAM_COPY_SHARE or metrics.copy_compute_overlap >= SECOND_STREAM_OVERLAP:
        return None
    return Recommendation(
        "second_stream",
        "Overlap copies with compute on a second stream",
        "用第二个流让拷贝与计算重叠",
        "Everything runs on one stream, so each copy waits for the kernel before it. Spread independent batches "
        "over two or more streams: copies of one batch then overlap the kernel of another.",
        "所有工作都在一个流上，每次拷贝都要等前面的核函数。把相互独立的批次分到两个或更多流上：一个批次的拷贝就能与另一个批次的核函数重叠。",
        {
            "copy_share_of_device_time": round(copy_share, 4),
            "copy_compute_overlap": metrics.copy_compute_overlap,
            "streams_used": 1,
            "threshold": f"copy share > {SECOND_STREAM_COPY_SHARE} and overlap < {SECOND_STREAM_OVERLAP}",
        },
        {"streams": 2},
        threshold_zh=f"拷贝占比 > {SECOND_STREAM_COPY_SHARE} 且重叠率 < {SECOND_STREAM_OVERLAP}",
    )


CORE_TYPE_ZH = MappingProxyType({"cube": "Cube（AIC）", "vector": "Vector（AIV）", "mix": "AIC/AIV 混合"})  # core_type


def _few_blocks(result, metrics, gaps, context, params) -> Recommendation | None:
    k = metrics.main
    if k is None:
        return None
    used = k.cores_used
    if used >= FEW_BLOCKS_SHARE * k.cores_available:
        return None
    return Recommendation(
        "too_few_blocks",
        "Launch enough blocks for the cores",
        "块数太少，核没用满",
        f"Only {used} of {k.cores_available} {k.core_type} cores received a block. Split the work into at "
        "least one block per core (block_dim >= cores), balanced with compute_optimal_tiling.",
        f"{k.cores_available} 个 {CORE_TYPE_ZH.get(k.core_type, k.core_type)} 核中只有 {used} 个分到了块。"
        "把工作至少切成每核一块（block_dim >= 核数），"
        "并用 compute_optimal_tiling 均衡。",
        {
            "cores_used": used,
            "cores_available": k.cores_available,
            "blocks": k.blocks,
            "parallelism_utilization": k.parallelism_utilization,
            "threshold": f"cores used < {FEW_BLOCKS_SHARE} of cores",
        },
        {"cores": None},
        target="kernel_us",
        threshold_zh=f"用到的核 < 核数的 {FEW_BLOCKS_SHARE}",
    )


def _tail(result, metrics, gaps, context, params) -> Recommendation | None:
    k = metrics.main
    if k is None:
        return None
    tail = gaps.by_lane_type.get("cores", {}).get("no work: tail", 0.0)
    core_time = k.kernel_us * len(k.pipe_ratios_per_core)
    share = tail / core_time if core_time else 0.0
    if share <= TAIL_SHARE:
        return None
    if k.blocks % max(1, k.cores_used):
        advice = (
            f"{k.blocks} blocks on {k.cores_used} cores leave the last wave part-empty: make the block count a "
            "multiple of the cores (or one block per core), so no core waits in the tail."
        )
        advice_zh = (
            f"{k.blocks} 个块分在 {k.cores_used} 个核上，最后一波没有填满："
            "让块数是核数的倍数（或每核一块），这样没有核在尾部空等。"
        )
    else:  # whole waves already: the blocks themselves differ in work
        advice = (
            "The blocks fill whole waves but their work differs (a block one tile or one base block larger takes a "
            "whole extra step): split the work in whole tiles so every block gets the same number of them."
        )
        advice_zh = (
            "块填满了整波，但各块的工作量不同（多一个分块或基本块的块要多走一整步）："
            "按整分块切分，让每块分到同样多的分块。"
        )
    return Recommendation(
        "unbalanced_tail",
        "Balance the tail blocks",
        "平衡尾块",
        advice,
        advice_zh,
        {
            "tail_idle_us": tail,
            "share_of_core_time": round(share, 4),
            "blocks": k.blocks,
            "cores_used": k.cores_used,
            "threshold": f"tail share > {TAIL_SHARE}",
        },
        threshold_zh=f"尾部占比 > {TAIL_SHARE}",
    )


def _tilings(result, metrics, gaps, context, params) -> Recommendation | None:
    t = result.trace
    c = t.columns
    sel = (c["kind"] == Kind.HOST_WORK) & t.rows_with(lambda d: isinstance(d, HostWork) and d.what == "tiling")
    count = int(sel.sum())
    if not count:
        return None
    tiling = merged(c["start"][sel], c["end"][sel])
    working = t.rows_on(LaneKind.STREAM) & one_of(c["kind"], (Kind.COPY, Kind.KERNEL))
    hidden = intersection(tiling, merged(c["start"][working], c["end"][working]))
    tiling_ps = int((tiling[1] - tiling[0]).sum())
    critical_us = (tiling_ps - hidden) / 1e6  # tiling while no stream had anything to run
    kernel_us = metrics.kernel_us
    if critical_us <= TILING_SHARE * kernel_us and count <= 1:
        return None
    return Recommendation(
        "cache_tilings",
        "Take host tiling off the critical path",
        "把主机侧Tiling移出关键路径",
        "The host computes the tiling before each launch and the device waits meanwhile. Compute it once per shape "
        "and keep it (a tiling cache keyed by shape), or compute it while the device is busy with earlier work.",
        "主机在每次下发前计算 tiling，设备在此期间空等。每种形状只算一次并保存（按形状索引的 tiling 缓存），"
        "或在设备忙于先前工作时计算。",
        {
            "host_tiling_us": round(tiling_ps / 1e6, 3),
            "tiling_on_critical_path_us": round(critical_us, 3),
            "tilings_computed": count,
            "kernel_us": kernel_us,
            "threshold": f"tiling while the device idles > {TILING_SHARE} of kernel time, or more than one tiling",
        },
        before_us=metrics.simulated_us,
        predicted_us=round(metrics.simulated_us - critical_us, 3),
        predicted_gain=round(critical_us / metrics.simulated_us, 4) if metrics.simulated_us else None,
        threshold_zh=f"设备空闲时的 tiling 超过核函数时间的 {TILING_SHARE}，或计算了不止一次 tiling",
    )


def _host_gaps(result, metrics, gaps, context, params) -> Recommendation | None:
    waiting = gaps.by_lane_type.get("streams", {}).get("waiting for the host", 0.0)
    busy = metrics.device_busy_us
    active = busy + waiting
    share = waiting / active if active else 0.0
    if share <= HOST_WAIT_SHARE or metrics.kernel_count < 2:
        return None
    evidence = {
        "streams_waiting_for_host_us": waiting,
        "device_busy_us": busy,
        "share": round(share, 4),
        "threshold": f"share > {HOST_WAIT_SHARE}",
    }
    if params.get("sync_each") is False:  # already submitted ahead: the launches are too small for their cost
        return Recommendation(
            "host_between_launches",
            "Each launch does too little work for its host cost",
            "每次下发的工作量太小，抵不上主机开销",
            "Work is already queued ahead, yet the device still waits for the host: each batch's copies and "
            "kernel take less device time than the host spends on their API calls. Give each launch more work "
            "(larger batches, or several batches fused into one kernel).",
            "工作已提前排队，设备却仍在等主机：每批的拷贝和核函数占用的设备时间少于主机花在其 API 调用上的时间。"
            "让每次下发做更多工作（更大的批次，或把几个批次融合进一个核函数）。",
            evidence,
            threshold_zh=f"占比 > {HOST_WAIT_SHARE}",
        )
    return Recommendation(
        "host_between_launches",
        "The host spends too long between launches",
        "主机在两次下发之间耗时过长",
        "The device idles while the host prepares the next work: submit work asynchronously and ahead (several "
        "batches queued), avoid synchronizing after every step, and move host preparation out of the loop.",
        "主机准备下一份工作时设备空闲：异步且提前提交工作（排队多个批次），避免每一步之后都同步，并把主机侧准备移出循环。",
        evidence,
        {"sync_each": False},
        threshold_zh=f"占比 > {HOST_WAIT_SHARE}",
    )


__all__ = ("RULES", "Recommendation", "recommend")
