"""A stream of matmuls whose shapes change (seed 3.2 and 5.2): tiling on the host before each launch.

For each shape of the sequence the host asks the :class:`~engine.host.dynamic_shapes.DynamicShapeCoordinator`
for a tiling (its cost goes on the host timeline as tiling work), then queues copy in, the tiled Cube
matmul and copy out on one stream without waiting: the host tiles shape i+1 while the device still
runs shape i, so what tiling costs shows as idle device time only when the host falls behind.
The report lists every decision (strategy, cache hit or miss, candidates, host time, kernel time)
and the totals against recomputing every tiling.
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np

from .. import asc
from ..aicore.matmul_tiling import auto_tiling
from ..device.stream import TaskKind
from ..host.acl_codes import ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE
from ..host.dynamic_shapes import POLICIES, DynamicShapeCoordinator
from ..simulation import Simulation
from ..trace import LaneKind
from . import SEED_MAX, Outcome, Param, ParamValueError, Scenario, ScenarioArgError
from .cost import Cost, summed_cost
from .host_lifecycle import check_ret
from .kernels import matmul_cost, matmul_tolerance

# TuningDecision.strategy and .cache (engine.host.dynamic_shapes) in Chinese, for the trace's host-work names
STRATEGY_ZH = MappingProxyType(
    {"search": "完整搜索", "cached": "取缓存", "bucket": "沿用桶的基本块", "safe": "安全基本块"}
)
CACHE_ZH = MappingProxyType({"hit": "命中", "miss": "未命中", "none": "未使用"})
SEQUENCES = ("stable", "drifting", "random")
MAX_SIDE = 4096


def parse_sequence(text: str):
    """``stable``, ``drifting``, ``random`` or a list ``MxNxK,MxNxK,...`` of shapes."""
    text = str(text).strip()
    if text in SEQUENCES:
        return text
    shapes = []
    for part in text.split(","):
        sides = part.strip().lower().split("x")
        if len(sides) != 3 or not all(s.isdigit() and int(s) > 0 for s in sides):
            raise ParamValueError(
                f"must be {', '.join(SEQUENCES)} or shapes like 512x512x256,1024x512x256 ({part!r})",
                f"必须是 {', '.join(SEQUENCES)} 之一，或像 512x512x256,1024x512x256 这样的形状（{part!r}）",
            )
        if max(int(s) for s in sides) > MAX_SIDE:
            raise ParamValueError(f"sides must be <= {MAX_SIDE} ({part!r})", f"每条边必须 <= {MAX_SIDE}（{part!r}）")
        shapes.append(tuple(int(s) for s in sides))
    return tuple(shapes)


def shapes_of(sequence, count: int, seed: int) -> list[tuple[int, int, int]]:
    """The shapes a sequence stands for: the same one, a slow drift, or random sizes (seeded)."""
    if isinstance(sequence, tuple):
        return [sequence[i % len(sequence)] for i in range(count)]
    if sequence == "stable":
        return [(512, 512, 256)] * count
    if sequence == "drifting":
        return [(512 + 16 * i, 512, 256) for i in range(count)]
    rng = np.random.default_rng(seed)
    return [tuple(int(x) for x in 16 * rng.integers(8, 48, 3)) for _ in range(count)]


def dynamic_shapes_cost(profile, v: dict, numerics: bool) -> Cost:
    """The sequence's matmuls, each costed as the matmul scenario costs it (automatic tiling)."""
    fixed = {"cores": None, "base": None, "buffer_num": 2, "out_dtype": "fp16"}
    shapes = shapes_of(v["sequence"], v["count"], v["seed"])
    costs = (matmul_cost(profile, {"m": m, "n": n, "k": k, **fixed}, numerics) for m, n, k in shapes)
    return summed_cost(costs, ("sequence", "count"))


def run(sim: Simulation, sequence, count: int, policy: str, seed: int) -> Outcome:
    from ..kernels.matmul import matmul_tiled

    acl = sim.acl
    shapes = shapes_of(sequence, count, seed)
    check_ret(acl.init(), "acl.init")
    check_ret(acl.rt.set_device(0), "acl.rt.set_device")
    stream, ret = acl.rt.create_stream()
    check_ret(ret, "acl.rt.create_stream")
    biggest = [max(m * k for m, _n, k in shapes) * 2, max(k * n for _m, n, k in shapes) * 2]
    biggest.append(max(m * n for m, n, _k in shapes) * 2)
    dev = []
    for size in biggest:
        p, ret = acl.rt.malloc(size, 0)
        check_ret(ret, "acl.rt.malloc")
        dev.append(p)
    coordinator = DynamicShapeCoordinator(sim.profile, policy)
    rng = np.random.default_rng(seed)
    host, expected, decisions = [], [], []
    for m, n, k in shapes:  # host memory first, so the loop below is what a serving loop does per request
        bufs = []
        for size in (m * k * 2, k * n * 2, m * n * 2):
            p, ret = acl.rt.malloc_host(size)
            check_ret(ret, "acl.rt.malloc_host")
            bufs.append(p)
        host.append(bufs)
    for (m, n, k), bufs in zip(shapes, host, strict=True):
        sizes = (m * k * 2, k * n * 2, m * n * 2)
        if sim.numerics:
            a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
            b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
            acl.util.ptr_to_numpy(bufs[0], (m, k), np.float16)[:] = a
            acl.util.ptr_to_numpy(bufs[1], (k, n), np.float16)[:] = b
            if sim.verify:
                expected.append(a.astype(np.float32) @ b.astype(np.float32))
        for j in (0, 1):
            ret = acl.rt.memcpy_async(dev[j], biggest[j], bufs[j], sizes[j], ACL_MEMCPY_HOST_TO_DEVICE, stream)
            check_ret(ret, "acl.rt.memcpy_async")
        d = coordinator.make_decision((m, n, k))
        sim.host_compute(
            f"tiling {m}x{n}x{k}: {d.strategy}, cache {d.cache}",
            d.tiling_us,
            what="tiling",
            name_zh=f"tiling {m}x{n}x{k}：{STRATEGY_ZH[d.strategy]}，缓存{CACHE_ZH[d.cache]}",
        )
        args = [asc.GlobalAddress(p, asc.half) for p in dev]
        check_ret(acl.rt.launch_kernel(matmul_tiled, d.tiling.usedCoreNum, stream, *args, d.tiling), "launch_kernel")
        ret = acl.rt.memcpy_async(bufs[2], sizes[2], dev[2], sizes[2], ACL_MEMCPY_DEVICE_TO_HOST, stream)
        check_ret(ret, "acl.rt.memcpy_async")
        decisions.append(d)
    check_ret(acl.rt.synchronize_stream(stream), "acl.rt.synchronize_stream")
    correct = None
    worst = 0.0
    if sim.numerics and sim.verify:
        correct = True
        for (m, n, k), bufs, ref in zip(shapes, host, expected, strict=True):
            c = acl.util.ptr_to_numpy(bufs[2], (m, n), np.float16).astype(np.float32)
            err = float(np.max(np.abs(c - ref)))
            worst = max(worst, err)
            correct &= err <= matmul_tolerance(ref, k, "fp16")
    for bufs in host:
        for p in bufs:
            check_ret(acl.rt.free_host(p), "acl.rt.free_host")
    for p in dev:
        check_ret(acl.rt.free(p), "acl.rt.free")
    check_ret(acl.rt.destroy_stream(stream), "acl.rt.destroy_stream")
    check_ret(acl.rt.reset_device(0), "acl.rt.reset_device")
    check_ret(acl.finalize(), "acl.finalize")
    recompute = [auto_tiling(sim.profile, *s, coordinator.cores, coordinator.buffer_num)[1] for s in shapes]
    per_candidate = sim.profile.host.tiling_us_per_candidate
    details = {
        "policy": policy,
        "shapes": [list(s) for s in shapes],
        "decisions": [d.to_dict() for d in decisions],
        "cache_hits": coordinator.cache.hits,
        "cache_misses": coordinator.cache.misses,
        "tiling_us_total": round(sum(d.tiling_us for d in decisions), 4),
        "recompute_tiling_us_total": round(sum(recompute) * per_candidate, 4),
    }
    if correct is not None:
        details["max_abs_err"] = worst
    return Outcome(correct, details)


def kernel_times(result) -> list[float]:
    """Each launch's kernel time (us), in launch order: for the report's per-shape table."""
    t = result.trace
    task = t.task_rows()
    rows = [int(r) for r in np.flatnonzero(t.rows_on(LaneKind.STREAM) & (task >= 0))]
    kernels = [r for r in rows if t.tasks["kind"][task[r]] == TaskKind.KERNEL]
    kernels.sort(key=lambda r: t.tasks["seq"][task[r]])
    return [round(float(t.end[r] - t.start[r]) / 1e6, 4) for r in kernels]


def check(profile, values: dict) -> None:
    shapes = shapes_of(values["sequence"], values["count"], values["seed"])
    need = max(m * k + k * n + m * n for m, n, k in shapes) * 2 * 2
    if need > profile.chip.device_memory_bytes:
        raise ScenarioArgError(
            f"--sequence: the largest shape needs {need} B of device memory, more than there is",
            "sequence",
            zh=f"--sequence：最大的形状需要 {need} B 设备内存，超过了设备内存总量",
        )


SCENARIO = Scenario(
    name="dynamic-shapes",
    cost=dynamic_shapes_cost,
    summary="matmuls of changing shapes on one stream, tiled on the host by a recompute / cache / adaptive policy",
    summary_zh="同一条流上形状不断变化的矩阵乘，由主机按 recompute / cache / adaptive 策略计算分块",
    params=(
        Param(
            "sequence",
            str,
            "drifting",
            "stable, drifting, random, or shapes MxNxK,MxNxK,...",
            help_zh="stable、drifting、random，或形状列表 MxNxK,MxNxK,...",
            parse=parse_sequence,
        ),
        Param("count", int, 8, "number of matmuls", help_zh="矩阵乘的个数", minimum=1, maximum=256),
        Param(
            "policy",
            str,
            "adaptive",
            "how the host finds each tiling",
            help_zh="主机如何得到每次的分块方案",
            choices=POLICIES,
        ),
        Param(
            "seed",
            int,
            0,
            "random seed of the inputs (and of the random sequence)",
            help_zh="输入数据（以及随机序列）的随机种子",
            minimum=0,
            maximum=SEED_MAX,
        ),
    ),
    run=run,
    check=check,
    report=lambda result: {"kernel_us_per_shape": kernel_times(result)},
)
