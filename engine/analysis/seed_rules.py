"""The seed article's three profiler rules (section 6.1), with its thresholds: the host/device balance score,
the memory-bound index and the parallelism utilisation. :func:`.rules.recommend` runs them after its own
rules, so a more specific rule's advice comes first."""

from __future__ import annotations

from .recommendation import Recommendation, second_slot_loaded, tiling_double_buffered

SEED_BALANCE = 0.8  # seed 6.1: host_device_balance < 0.8 -> 优化Host侧逻辑，减少Device等待时间
SEED_MEMORY = 0.7  # seed 6.1: memory_bottleneck > 0.7 -> 启用双缓冲优化内存访问 / 考虑数据压缩减少传输量
SEED_PARALLELISM = 0.6  # seed 6.1: parallelism_utilization < 0.6 -> 调整Tiling策略提高并行度 / 检查负载均衡问题


def seed_balance(result, metrics, gaps, context, params) -> Recommendation | None:
    score = metrics.balance_score
    if score >= SEED_BALANCE:
        return None
    change = None
    if params.get("sync_each"):
        change = {"sync_each": False}
    elif params.get("pageable"):
        change = {"pageable": False}
    elif params.get("policy") in ("recompute", "cache"):
        change = {"policy": "adaptive"}
    return Recommendation(
        "host_device_balance",
        "Optimise the host side so the device waits less",
        "优化Host侧逻辑，减少Device等待时间",
        f"Over the {metrics.balance_over} phase the host spends {metrics.host_api_us} us inside API "
        f"calls against {metrics.device_busy_us} us of device work (the seed wants the host at most 10 %). Queue "
        "work asynchronously and synchronise once, keep host buffers pinned, compute tilings once per shape, and "
        "batch small launches.",
        f"在{'工作' if metrics.balance_over == 'work' else '整个运行'}阶段，"
        f"主机在 API 调用内花了 {metrics.host_api_us} us，"
        f"设备工作 {metrics.device_busy_us} us（原文要求主机至多占 10%）。异步排队、只同步一次，主机缓冲用锁页内存，"
        "每种形状只算一次 tiling，并合并小的下发。",
        {
            "balance_score": score,
            "host_api_us": metrics.host_api_us,
            "device_busy_us": metrics.device_busy_us,
            "over": metrics.balance_over,
            "threshold": f"balance score < {SEED_BALANCE} (seed 6.1)",
        },
        change,
        threshold_zh=f"平衡分 < {SEED_BALANCE}（原文 6.1 节）",
    )


def seed_memory(result, metrics, gaps, context, params) -> Recommendation | None:
    k = metrics.main
    if k is None or k.memory_bound_index <= SEED_MEMORY:
        return None
    evidence = {
        "memory_bound_index": k.memory_bound_index,
        "kernel": k.kernel,
        "threshold": f"memory-bound index > {SEED_MEMORY} (seed 6.1)",
    }
    if not (second_slot_loaded(result, k) or tiling_double_buffered(context) or params.get("buffer_num") == 2):
        return Recommendation(
            "memory_bottleneck",
            "Enable double buffering to hide memory access",
            "启用双缓冲优化内存访问",
            "The compute pipe waits for data most of the time and each queue has one slot: with two, MTE2 fills one "
            "while the compute pipe works on the other.",
            "计算流水线大部分时间在等数据，而每个队列只有一个槽位：有两个槽位时，MTE2 填充一个，计算流水线处理另一个。",
            evidence,
            {"buffer_num": 2},
            target="kernel_us",
            threshold_zh=f"访存受限指数 > {SEED_MEMORY}（原文 6.1 节）",
        )
    return Recommendation(
        "memory_bottleneck",
        "Move fewer bytes: the kernel is bound by memory bandwidth",
        "考虑数据压缩减少传输量",
        "Double buffering is already on and the compute pipe still waits for data most of the time, so the kernel "
        "is bound by the bandwidth of GM, not by its coordination. Only fewer bytes help: fuse it with the operators "
        "around it so data crosses GM once, use a narrower data type, or (the seed's suggestion) compress what "
        "crosses the link.",
        "双缓冲已经开启，计算流水线仍大部分时间在等数据，所以核函数受限于 GM 带宽，而不是协同方式。"
        "只有减少字节数才有用："
        "与前后的算子融合，让数据只经过 GM 一次；用更窄的数据类型；或者（原文的建议）压缩经过链路的数据。",
        evidence,
        threshold_zh=f"访存受限指数 > {SEED_MEMORY}（原文 6.1 节）",
    )


def seed_parallelism(result, metrics, gaps, context, params) -> Recommendation | None:
    k = metrics.main
    if k is None or k.parallelism_utilization >= SEED_PARALLELISM:
        return None
    change = {"cores": None} if params.get("cores") is not None else None
    return Recommendation(
        "low_parallelism",
        "Retile for parallelism and check the load balance",
        "调整Tiling策略提高并行度，检查负载均衡问题",
        f"Blocks kept the cores busy only {100 * k.parallelism_utilization:.0f} % of the kernel's core time "
        f"({k.blocks} blocks on {k.cores_used} of {k.cores_available} cores). Launch one block per core "
        "(or a multiple), split the work so blocks differ by at most one element (compute_optimal_tiling), and "
        "avoid a last, partly filled wave.",
        f"块只让核在核函数核时间的 {100 * k.parallelism_utilization:.0f}% 内忙碌（{k.blocks} 个块分在 "
        f"{k.cores_available} 个核中的 {k.cores_used} 个上）。每核一块（或其倍数），切分时让各块相差至多一个元素"
        "（compute_optimal_tiling），并避免最后一波只填满一部分。",
        {
            "parallelism_utilization": k.parallelism_utilization,
            "blocks": k.blocks,
            "cores_used": k.cores_used,
            "cores_available": k.cores_available,
            "threshold": f"parallelism utilisation < {SEED_PARALLELISM} (seed 6.1)",
        },
        change,
        target="kernel_us",
        threshold_zh=f"并行利用率 < {SEED_PARALLELISM}（原文 6.1 节）",
    )


__all__ = ("SEED_BALANCE", "SEED_MEMORY", "SEED_PARALLELISM", "seed_balance", "seed_memory", "seed_parallelism")
