"""Lesson 9 scenario: a stream of matmuls whose shapes change, each tiled on the host by a planner.

The host program (:func:`serve`) is the ``dynamic-shapes`` scenario's (engine/scenarios/dynamic_shapes.py)
with the tiling decision handed to a planner: for each shape it queues the copies of A and B on one
stream, asks the planner for a TCubeTiling, launches the tiled Cube kernel with it and queues the copy of
C back; it synchronizes once, at the end. A planner finds tilings only through a :class:`HostTiler`,
and every call of the tiler is host work on the timeline (a HOST_WORK row whose detail says "tiling",
costing the profile's ``tiling_us_per_candidate`` per candidate scored): the check adds those rows up.

Also the check's sequences (the ``dynamic-shapes`` scenario's stable, drifting and random ones, and a
drift at 1024^3 timed only), the baseline it compares with (recomputing every tiling, run here in the
grader), the planners the questions compare, and the truths of the questions.
"""

from __future__ import annotations

import numpy as np

from engine import Simulation, asc
from engine.aicore.matmul_tiling import TCubeTiling, TilingError, auto_tiling, validate
from engine.device.stream import TaskKind
from engine.host.acl_codes import ACL_MEM_MALLOC_HUGE_FIRST, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE
from engine.scenarios.dynamic_shapes import shapes_of
from engine.scenarios.kernels import matmul_tolerance
from engine.trace import Kind
from engine.trace.detail import HostWork
from engine.trace.intervals import covered
from lessons.hostkit import check, uniform
from lessons.recording import api

SEQUENCES = ("stable", "drifting", "random", "large")  # the check's sequences
NUMERICS = ("stable", "drifting", "random")  # checked with numbers; "large" is timed only
COUNT, SEED = 8, 0  # shapes per sequence; the random sequence's seed
CORES, BUFFER_NUM = 24, 2  # ascend910b1's Cube cores; double-buffered L1 / L0
SCENARIO_SHAPES = (  # what the lesson plays: a repeat, a slow drift, a repeat, then two jumps
    (512, 512, 256),
    (512, 512, 256),
    (528, 512, 256),
    (544, 512, 256),
    (512, 512, 256),
    (128, 128, 128),
    (768, 256, 512),
)

Shape = tuple[int, int, int]


def shapes(sequence: str) -> list[Shape]:
    """The first three as `ascendsim run dynamic-shapes --sequence NAME` has them (shapes up to 752 per side);
    "large" drifts like "drifting" at 1024^3, where the base block matters more to the Cube's speed."""
    if sequence == "large":
        return [(1024 + 32 * i, 1024, 1024) for i in range(COUNT)]
    return shapes_of(sequence, COUNT, SEED)


def draw_repeats(rng: np.random.Generator) -> dict:
    """Hidden: six requests drawn from three shapes (multiples of 16 from 128 to 768 per side), so shapes repeat
    out of order; timed only (the plans are judged)."""
    pool = [[int(rng.integers(8, 49)) * 16 for _ in range(3)] for _ in range(3)]
    return {"shapes": [pool[int(rng.integers(0, 3))] for _ in range(6)]}


def inputs(index: int, shape: Shape) -> tuple[np.ndarray, np.ndarray]:
    m, n, k = shape
    return uniform(900 + index, m * k).reshape(m, k), uniform(1900 + index, k * n).reshape(k, n)


def expected(index: int, shape: Shape) -> np.ndarray:
    a, b = inputs(index, shape)
    return a.astype(np.float32) @ b.astype(np.float32)


def tolerance(ref: np.ndarray, k: int) -> float:
    return matmul_tolerance(ref, k, "fp16")


class HostTiler:
    """The host's matmul tiler for one run: every call is host work on the simulated timeline.

    ``search(shape)`` scores every base block and core split (:func:`engine.aicore.matmul_tiling.auto_tiling`,
    a few hundred candidates for the shapes here); ``search(shape, base=(bm, bn, bk))`` keeps the base
    block and only fits the core split (a few candidates); ``reuse(tiling)`` hands back a tiling this
    tiler produced earlier in the run, at the cost of one candidate (ASSUMPTION, as in
    engine/host/dynamic_shapes.py: a hash lookup and a copy of the struct). ``log`` is what each call did.
    """

    # what a recorded program may call (lessons.recording): the planner's two calls and the host's launch
    __api__ = api("", "search reuse launch")

    def __init__(self, sim: Simulation, cores: int = CORES, buffer_num: int = BUFFER_NUM) -> None:
        self._sim = sim
        self._cores = cores
        self._buffer_num = buffer_num
        self._us = sim.profile.host.tiling_us_per_candidate
        self._made: set[TCubeTiling] = set()
        self.log: list[dict] = []
        # per launch asked for, what it took; kept with the run (a grader's observer reads it there)
        self.plans: list[dict] = sim.extra.setdefault("tiling_plans", [])
        self._planned = 0

    def search(self, shape, base=None) -> TCubeTiling:
        m, n, k = _shape(shape)
        fixed = None if base is None else tuple(int(x) for x in base)
        tiling, scored = auto_tiling(self._sim.profile, m, n, k, self._cores, self._buffer_num, fixed)
        what = "search" if fixed is None else "fit cores to base {}x{}x{}".format(*fixed)
        what_zh = "完整搜索" if fixed is None else "把核划分适配到基本块 {}x{}x{}".format(*fixed)
        self._sim.host_compute(
            f"tiling {m}x{n}x{k}: {what}, {scored} candidates",
            scored * self._us,
            "tiling",
            f"tiling {m}x{n}x{k}：{what_zh}，{scored} 个候选",
        )
        self._made.add(tiling)
        self.log.append({"call": "search" if fixed is None else "fit", "shape": [m, n, k], "candidates": scored})
        return tiling

    def reuse(self, tiling: TCubeTiling) -> TCubeTiling:
        shape = [tiling.M, tiling.N, tiling.Ka] if isinstance(tiling, TCubeTiling) else None
        shown = "x".join(map(str, shape)) if shape else "?"
        self._sim.host_compute(f"tiling {shown}: cache hit", self._us, "tiling", f"tiling {shown}：缓存命中")
        self.log.append({"call": "reuse", "shape": shape, "candidates": 1})
        return tiling  # whether it came from this tiler is checked before the launch (:func:`made`)

    def made(self, tiling) -> bool:
        """Did this tiler produce ``tiling`` (by a search) in this run?"""
        return isinstance(tiling, TCubeTiling) and tiling in self._made

    def launch(self, shape, tiling, stream: int, *gm) -> bool:
        """The host's launch of one request: the plan it took (the tiler calls since the last launch, and what
        is wrong with ``tiling``, if anything) is logged, then the kernel is queued if the tiling can run."""
        from engine.kernels.matmul_tiling_data import matmul_tiling_data, tiling_context

        shape = _shape(shape)
        problem, problem_zh, launchable = _problem(tiling, shape, self, self._sim.profile)
        plan = {"shape": list(shape), "calls": self.log[self._planned :], "problem": problem, "problem_zh": problem_zh}
        self.plans.append(plan)
        self._planned = len(self.log)
        if launchable:  # the tiling travels as TilingData (lesson 2), its block count set by the tiling
            context = tiling_context(tiling)
            raw = context.get_raw_tiling_data()
            check(
                self._sim.acl.rt.launch_kernel(matmul_tiling_data, context.get_block_dim(), stream, *gm, raw), "launch"
            )
        return launchable


def _shape(shape) -> Shape:
    sides = tuple(int(x) for x in shape)
    if len(sides) != 3 or min(sides) < 1:
        raise ValueError(f"a shape is (M, N, K) with sides >= 1, got {shape!r}")
    return sides


class RecomputePlanner:
    """The baseline: a full search for every shape, as if each were new."""

    def __init__(self, tiler: HostTiler) -> None:
        self.tiler = tiler

    def tiling_for(self, shape) -> TCubeTiling:
        return self.tiler.search(shape)


class CachePlanner(RecomputePlanner):
    """A tiling cache and nothing else: a repeated shape is looked up, a new one searched."""

    def __init__(self, tiler: HostTiler) -> None:
        super().__init__(tiler)
        self.cache: dict[Shape, TCubeTiling] = {}

    def tiling_for(self, shape) -> TCubeTiling:
        shape = _shape(shape)
        if shape in self.cache:
            return self.tiler.reuse(self.cache[shape])
        tiling = self.cache[shape] = self.tiler.search(shape)
        return tiling


def _problem(tiling, shape: Shape, tiler: HostTiler, profile) -> tuple[str | None, str | None, bool]:
    """Why ``tiling`` is not right for ``shape`` (English, Chinese; None: it is), and whether it can be launched
    anyway (a valid tiling of the shape that did not come from the tiler is launched, and reported)."""
    if not isinstance(tiling, TCubeTiling):
        name = type(tiling).__name__
        return f"the planner returned {name}, not a TCubeTiling", f"planner 返回的是 {name}，不是 TCubeTiling", False
    if (tiling.M, tiling.N, tiling.Ka) != shape:
        got = f"{tiling.M}x{tiling.N}x{tiling.Ka}"
        return f"the planner returned the tiling of {got}", f"planner 返回的是 {got} 的 tiling", False
    try:
        validate(tiling, profile)
    except TilingError as exc:
        return str(exc), f"{exc.field} 不满足约束（{exc.limit}），实际为 {exc.value}", False
    if not tiler.made(tiling):
        return (
            "the tiling did not come from the tiler (tiler.search, or tiler.reuse of an earlier result)",
            "这个 tiling 不是来自 tiler（tiler.search，或对先前结果的 tiler.reuse）",
            True,
        )
    return None, None, True


def serve(
    sim: Simulation, make_planner, sequence: list[Shape], tiler_class=HostTiler
) -> tuple[list[np.ndarray], HostTiler]:
    """Run ``sequence`` of matmuls C = A @ B (fp16 in, fp16 C) on one stream, each with the tiling the planner
    (``make_planner(tiler)``) chooses; returns the Cs and the tiler (its ``plans``: what each launch took).
    ``tiler_class``: :class:`HostTiler`, or the grader's recorded stand-in for it."""
    acl = sim.acl
    check(acl.init(), "acl.init")
    check(acl.rt.set_device(0), "acl.rt.set_device")
    stream, ret = acl.rt.create_stream()
    check(ret, "acl.rt.create_stream")
    sizes = [2 * max(m * k for m, _n, k in sequence), 2 * max(k * n for _m, n, k in sequence)]
    sizes.append(2 * max(m * n for m, n, _k in sequence))
    dev = []
    for size in sizes:
        ptr, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
        check(ret, "acl.rt.malloc")
        dev.append(ptr)
    hosts = []
    for i, (m, n, k) in enumerate(sequence):  # host memory first: the loop below is what a server does per request
        bufs = []
        for size in (m * k * 2, k * n * 2, m * n * 2):
            ptr, ret = acl.rt.malloc_host(size)
            check(ret, "acl.rt.malloc_host")
            bufs.append(ptr)
        if sim.numerics:
            a, b = inputs(i, (m, n, k))
            acl.util.ptr_to_numpy(bufs[0], (m, k), np.float16)[:] = a
            acl.util.ptr_to_numpy(bufs[1], (k, n), np.float16)[:] = b
        hosts.append(bufs)
    tiler = tiler_class(sim)
    planner = make_planner(tiler)
    gm = [asc.GlobalAddress(p, asc.half) for p in dev]
    for shape, bufs in zip(sequence, hosts, strict=True):
        m, n, k = shape
        for j, nbytes in enumerate((m * k * 2, k * n * 2)):
            check(acl.rt.memcpy_async(dev[j], sizes[j], bufs[j], nbytes, ACL_MEMCPY_HOST_TO_DEVICE, stream), "copy")
        if tiler.launch(shape, planner.tiling_for(shape), stream, *gm):
            ret = acl.rt.memcpy_async(bufs[2], m * n * 2, dev[2], m * n * 2, ACL_MEMCPY_DEVICE_TO_HOST, stream)
            check(ret, "copy")
    check(acl.rt.synchronize_stream(stream), "acl.rt.synchronize_stream")
    results = [
        acl.util.ptr_to_numpy(bufs[2], (m, n), np.float16).copy() if sim.numerics else np.zeros((0, 0), np.float16)
        for (m, n, _k), bufs in zip(sequence, hosts, strict=True)
    ]
    for bufs in hosts:
        for ptr in bufs:
            check(acl.rt.free_host(ptr), "acl.rt.free_host")
    for ptr in dev:
        check(acl.rt.free(ptr), "acl.rt.free")
    check(acl.rt.destroy_stream(stream), "acl.rt.destroy_stream")
    check(acl.rt.reset_device(0), "acl.rt.reset_device")
    check(acl.finalize(), "acl.finalize")
    return results, tiler


# -- what the check measures (from a run's trace, as data) ------------------------------------------
def tiling_us(run) -> float:
    """Host time spent tiling: the HOST_WORK rows whose detail says "tiling"."""
    t = run.trace
    c = t.columns
    rows = (c["kind"] == Kind.HOST_WORK) & t.rows_with(lambda d: isinstance(d, HostWork) and d.what == "tiling")
    return float((c["end"][rows] - c["start"][rows]).sum()) / 1e6


def device_us(run) -> float:
    """Time some Cube core worked on a block: the device time the tilings bought (launch overheads excluded)."""
    t = run.trace
    rows = t.columns["kind"] == Kind.BLOCK
    return covered(t.columns["start"][rows], t.columns["end"][rows]) / 1e6


def span_us(run) -> float:
    """From the first copy to the end of the last one: the run without its set-up and teardown."""
    copies = [task for task in run.tasks if task.kind == TaskKind.COPY and task.end >= 0]
    return (max(c.end for c in copies) - min(c.start for c in copies)) / 1e6 if copies else 0.0


def _timed(make_planner, sequence: list[Shape]):
    sim = Simulation(numerics=False)
    serve(sim, make_planner, sequence)
    return sim.finish()


def recompute_baseline() -> dict:
    """Per check sequence: host tiling time and device time when every tiling is recomputed."""
    out = {}
    for name in SEQUENCES:
        run = _timed(RecomputePlanner, shapes(name))
        out[name] = {"tiling_us": tiling_us(run), "device_us": device_us(run)}
    return out


def scenario(sim: Simulation) -> dict:
    from .solution import Planner

    results, tiler = serve(sim, Planner, list(SCENARIO_SHAPES))
    correct = all(p["problem"] is None for p in tiler.plans)
    for i, (shape, c) in enumerate(zip(SCENARIO_SHAPES, results, strict=True)):
        ref = expected(i, shape)
        correct &= bool(np.max(np.abs(c.astype(np.float32) - ref)) <= tolerance(ref, shape[2]))
    return {"correct": correct}


def truth_cache_random() -> str:
    """Does a tiling cache alone cut the host's tiling time on the random sequence by at least 10 %?"""
    sequence = shapes("random")
    cached, recomputed = tiling_us(_timed(CachePlanner, sequence)), tiling_us(_timed(RecomputePlanner, sequence))
    return "yes" if cached <= 0.9 * recomputed else "no"


def truth_run_faster() -> str:
    """With the reference planner, is the stable sequence's run at least 5 % shorter than when recomputing?"""
    from .solution import Planner

    sequence = shapes("stable")
    planned, recomputed = span_us(_timed(Planner, sequence)), span_us(_timed(RecomputePlanner, sequence))
    return "yes" if planned <= 0.95 * recomputed else "no"
