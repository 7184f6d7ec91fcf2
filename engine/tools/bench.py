"""``ascendsim bench``: how fast the simulator is on this machine, against the targets of issue 23.

Comparisons run both sides in the same process, interleaved (A B A B ...), each from an idle machine
(:data:`SETTLE_S`), and report the median of the per-pair ratios: absolute seconds drift with the
machine's load, ratios measured side by side hold. Figures:

* ``machine_factor`` — how much slower this machine runs the simulator's kind of code than the machine the
  targets were set on (see *Targets*);
* ``numerics_ratio`` — full instruction-level simulation of an N^3 fp16 matmul on ascend910b1
  (automatic tiling, all cores, numpy arithmetic, result checked) / numpy's
  ``a.astype(float32) @ b.astype(float32)`` on the same inputs;
* ``timing_instr_per_s`` and ``timing_wall_s_8192`` — the 8192^3 timing-only run (``--no-numerics``)
  in a child process: kernel instructions scheduled per wall second, and its wall time;
* ``peak_rss_mb_8192`` — that child's peak resident memory;
* ``host_events_per_s`` — trace events per wall second of the pipeline scenario with many small
  batches on 4 streams (timing only);
* ``trace_bytes_per_event`` — bytes the finished trace holds per event (columns and string tables).

**Targets.** Issue 23 states its targets on the 2-core machine it was measured on: the 8192^3 timing-only
command in at most 1.5 s, at least 1.5 M host events per second, a replay seek under 50 ms, a 2048^3 numerics
run at most 1.5 times numpy's. Bench judges every figure against those targets as they are. A machine that
runs the same Python more slowly cannot meet a target in seconds however fast the simulator gets, so bench
also prints :func:`machine_factor`, for information only: the CPU time of :func:`yardstick` (the scheduler's
hot loop in miniature: list indexing, integer max-plus, queues, a dict) here over its estimated time there.
That time there, :data:`YARDSTICK_REF_S`, is derived, not measured: the issue's machine ran the 8192^3
command in 3.15 s and 0.87 M host events per second where the 2-core machine this was calibrated on ran the
same code in 5.4 s and 0.47 M/s (1.71 and 1.85 times slower, 1.78 their geometric mean), so
``YARDSTICK_REF_S`` is the yardstick's time measured on that machine divided by 1.78 (ASSUMPTION: the
yardstick slows down as the simulator does).
"""

from __future__ import annotations

import gc
import json
import os
import platform
import statistics
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..aicore.matmul_tiling import auto_tiling
from ..aicore.tensor import GlobalAddress, float16
from ..host.acl_codes import ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE
from ..scenarios.runner import run_scenario
from ..simulation import Simulation
from .measured import measured

# issue 23's targets, on the machine it was measured on (judged as they are)
TARGET_WALL_8192_S = 1.5  # the 8192^3 timing-only command, start-up included
TARGET_INSTR_PER_S = 2_000_000  # its kernel instructions (3.05 M) in 1.5 s
TARGET_HOST_EVENTS_PER_S = 1_500_000
TARGET_NUMERICS_RATIO = 1.5  # 2048^3 with numerics vs numpy (a ratio: not scaled)
TARGET_PEAK_RSS_MB_8192 = 1024  # (not scaled)
TARGET_TRACE_BYTES_PER_EVENT = 48  # (not scaled)
YARDSTICK_REF_S = 0.0125  # yardstick() on the issue's machine (derived: see the module docstring)
YARDSTICK_ROUNDS = 15


def yardstick_work(n: int = 60_000) -> int:
    """The scheduler's hot loop in miniature: per step a pipe's free time, an integer max and sum (times in
    picoseconds, beyond one machine word of CPython's small integers), a queue and a dict."""
    free = [0] * 7
    done = [0] * 7
    queues = [deque() for _ in range(16)]
    costs = [(i * 7919) % 1000 + 1 for i in range(64)]
    counts: dict[int, int] = {}
    issue = 10**10
    for i in range(n):
        p = i % 7
        s = free[p]
        if issue > s:
            s = issue
        e = s + costs[i & 63]
        free[p] = e
        if e > done[p]:
            done[p] = e
        queue = queues[i & 15]
        queue.append(e)
        if len(queue) > 2:
            queue.popleft()
        issue += 3
        counts[i & 255] = counts.get(i & 255, 0) + 1
    return max(done)


def yardstick(rounds: int = YARDSTICK_ROUNDS) -> float:
    """The least CPU time (s) of ``rounds`` runs of :func:`yardstick_work` in this process."""
    best = float("inf")
    for _ in range(rounds):
        t0 = time.process_time()
        yardstick_work()
        best = min(best, time.process_time() - t0)
    return best


def _slower(factor: float) -> str:
    return f"this machine runs the yardstick {factor:.2f} x as slowly as the issue's machine (an estimate)"


def machine_factor(rounds: int = YARDSTICK_ROUNDS) -> tuple[float, float]:
    """(this machine's yardstick time in s, how many times the issue's machine's that is)."""
    here = yardstick(rounds)
    return here, here / YARDSTICK_REF_S


@dataclass(frozen=True)
class Figure:
    name: str
    value: float
    target: float
    better: str  # "lower" or "higher"
    unit: str
    detail: str

    @property
    def ok(self) -> bool:
        return self.value <= self.target if self.better == "lower" else self.value >= self.target

    def to_dict(self) -> dict:
        return {
            "value": self.value,
            "target": self.target,
            "better": self.better,
            "unit": self.unit,
            "ok": self.ok,
            "detail": self.detail,
        }


def simulate_matmul(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, int]:
    """The whole host program: copy in, tile, launch the tiled kernel, synchronize, copy back, check."""
    from ..kernels.matmul import matmul_tiled

    m, k = a.shape
    n = b.shape[1]
    sim = Simulation("ascend910b1")
    acl = sim.acl
    acl.init()
    acl.rt.set_device(0)
    stream, _ = acl.rt.create_stream()
    da, _ = acl.rt.malloc(a.nbytes, 0)
    db, _ = acl.rt.malloc(b.nbytes, 0)
    dc, _ = acl.rt.malloc(m * n * 2, 0)
    acl.rt.memcpy(da, a.nbytes, a, a.nbytes, ACL_MEMCPY_HOST_TO_DEVICE)
    acl.rt.memcpy(db, b.nbytes, b, b.nbytes, ACL_MEMCPY_HOST_TO_DEVICE)
    tiling, _ = auto_tiling(sim.profile, m, n, k)
    args = (GlobalAddress(da, float16), GlobalAddress(db, float16), GlobalAddress(dc, float16), tiling)
    acl.rt.launch_kernel(matmul_tiled, tiling.usedCoreNum, stream, *args)
    if acl.rt.synchronize_stream(stream) != 0:
        raise RuntimeError("the benchmark kernel failed")
    c = np.empty((m, n), np.float16)
    acl.rt.memcpy(c, c.nbytes, dc, c.nbytes, ACL_MEMCPY_DEVICE_TO_HOST)
    result = sim.finish()
    return c, len(result.trace)


SETTLE_S = 0.2
"""Pause before each timed side of the numerics ratio. After a matrix product OpenBLAS's worker threads
spin for about 0.1 s waiting for more work and hold a core (measured here: a two-thread cast right
after a product took 10.2 ms, 5.7 ms on an idle machine), which would tax whichever side runs next;
so each side starts, as a fresh command would, on an idle machine."""


def numerics_ratio(n: int, rounds: int) -> Figure:
    """Simulation with numerics vs numpy on the same inputs (a ratio: the same on any machine)."""
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (n, n)).astype(np.float16)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float16)
    ratios, sims, refs = [], [], []
    simulate_matmul(a, b)  # warm-up pair, not timed: imports, thread pools, the allocator's thresholds
    ref = a.astype(np.float32) @ b.astype(np.float32)
    for _ in range(rounds):
        time.sleep(SETTLE_S)
        t0 = time.perf_counter()
        c, _events = simulate_matmul(a, b)
        t1 = time.perf_counter()
        time.sleep(SETTLE_S)
        t2 = time.perf_counter()
        ref = a.astype(np.float32) @ b.astype(np.float32)
        t3 = time.perf_counter()
        sims.append(t1 - t0)
        refs.append(t3 - t2)
        ratios.append((t1 - t0) / (t3 - t2))
    err = float(np.max(np.abs(c.astype(np.float32) - ref)))
    tol = n * 2.0**-22 + float(np.max(np.abs(ref))) * 2.0**-11
    if err > tol:
        raise RuntimeError(f"benchmark matmul is wrong: max error {err} > {tol}")
    return Figure(
        "numerics_ratio",
        round(statistics.median(ratios), 3),
        TARGET_NUMERICS_RATIO,
        "lower",
        "x",
        f"{n}^3: simulation {statistics.median(sims):.3f} s vs numpy {statistics.median(refs):.3f} s "
        f"(median of {rounds} interleaved pairs), max error {err:.3g} <= {tol:.3g}",
    )


def timing_run(n: int, rounds: int, factor: float = 1.0) -> tuple[Figure, Figure, Figure]:
    """The n^3 timing-only matmul in child processes: instructions per second, wall time, peak RSS.

    Each round is a fresh ``ascendsim run matmul ... --no-numerics --json`` command (start-up included);
    the median wall time of the rounds is reported. ``factor``: :func:`machine_factor`'s, printed beside
    the targets.
    """
    cmd = [
        sys.executable,
        "-m",
        "app.cli",
        "run",
        "matmul",
        "--m",
        str(n),
        "--n",
        str(n),
        "--k",
        str(n),
        "--no-numerics",
        "--json",
    ]
    walls, peaks = [], []
    for _ in range(rounds):
        run = measured(cmd)
        if run.status != 0:
            raise RuntimeError(f"benchmark run failed: {run.stderr}")
        walls.append(run.wall_s)
        peaks.append(run.peak_kb / 1024)
        doc = json.loads(run.stdout)
    wall = statistics.median(walls)
    instructions = doc["instructions"]
    label = f"{n}^3, {instructions} instructions, kernel {doc['kernel_us']:.1f} us simulated, median of {rounds}"
    return (
        Figure(
            "timing_instr_per_s",
            round(instructions / wall),
            TARGET_INSTR_PER_S,
            "higher",
            "instr/s",
            f"{label}; the target is issue 23's, judged as it is; {_slower(factor)}",
        ),
        Figure(
            f"timing_wall_s_{n}",
            round(wall, 3),
            TARGET_WALL_8192_S,
            "lower",
            "s",
            f"{label}; wall time of the whole command; the target is issue 23's, judged as it is; {_slower(factor)}",
        ),
        Figure(
            f"peak_rss_mb_{n}",
            round(max(peaks), 1),
            TARGET_PEAK_RSS_MB_8192,
            "lower",
            "MB",
            f"{label}; peak resident memory",
        ),
    )


def host_events(batches: int, rounds: int, factor: float = 1.0):
    run_scenario("pipeline", "ascend910b1", numerics=False, n=64, batches=50, streams=4)  # warm up (imports)
    rates = []
    run = None
    for _ in range(rounds):
        run = None  # like one command: no earlier run alive for the garbage collector to walk through
        gc.collect()
        t0 = time.perf_counter()
        run = run_scenario("pipeline", "ascend910b1", numerics=False, n=64, batches=batches, streams=4)
        wall = time.perf_counter() - t0
        rates.append(len(run.result.trace) / wall)
    figure = Figure(
        "host_events_per_s",
        round(statistics.median(rates)),
        TARGET_HOST_EVENTS_PER_S,
        "higher",
        "events/s",
        f"pipeline, {batches} batches of 64^3 on 4 streams, {len(run.result.trace)} trace events, median of "
        f"{rounds}; the target is issue 23's, judged as it is; {_slower(factor)}",
    )
    return figure, run.result.trace


def trace_bytes(trace) -> Figure:
    """Per event: the columns and the task table, plus the string tables (lane, name and source-line
    texts) and the detail records."""
    tables = sum(sys.getsizeof(s) for s in trace.names + trace.srcs) + 64 * len(trace.lanes)
    tables += sum(_deep_size(d) for d in trace.details)
    per = (trace.nbytes + tables) / len(trace)
    return Figure(
        "trace_bytes_per_event",
        round(per, 2),
        TARGET_TRACE_BYTES_PER_EVENT,
        "lower",
        "B/event",
        f"{len(trace)} events: {trace.nbytes} B of columns and task table + {tables} B of string and detail tables",
    )


def _deep_size(record) -> int:
    """Bytes of a detail record and of the tuples and strings inside it."""
    size = sys.getsizeof(record)
    for v in record:
        size += _deep_size(v) if isinstance(v, tuple) else (sys.getsizeof(v) if isinstance(v, str) else 0)
    return size


def run_bench(quick: bool = False, progress: Callable[[int, int, str], None] | None = None) -> dict:
    """Every figure; ``progress(i, n, what)`` is called before each of the ``n`` measurements."""
    size = 8192 if not quick else 1024
    rounds = 1 if quick else 3
    batches = 500 if quick else 10_000
    n = 512 if quick else 2048
    pairs = rounds if quick else 9  # a pair takes 0.2 s; the numpy side swings with the machine's memory state
    # a command's system time swings by 0.2-0.4 s with the kernel's huge-page compaction: five rounds, not three
    commands = 1 if quick else 5
    steps = (
        f"host event rate: the pipeline scenario, {batches:,} batches on 4 streams, {rounds} round(s)",
        f"numerics: a {n}^3 matmul simulated with its arithmetic vs numpy, {pairs} pairs",
        f"timing only: a {size}^3 matmul in a child process, {commands} round(s)",
    )
    report = progress or (lambda i, total, what: None)
    yard, factor = machine_factor()
    report(1, len(steps), steps[0])
    host, trace = host_events(batches, rounds, factor)
    report(2, len(steps), steps[1])
    numerics = numerics_ratio(n, pairs)
    report(3, len(steps), steps[2])
    figures = [numerics, *timing_run(size, commands, factor), host, trace_bytes(trace)]
    doc = {f.name: f.to_dict() for f in figures}
    if quick:  # small sizes check that every figure is produced; they say nothing about the targets
        for f in doc.values():
            f["ok"] = None
    return {
        "machine": {
            "cores": os.cpu_count(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "platform": platform.platform(),
            "yardstick_s": round(yard, 5),
            "factor": round(factor, 3),  # information only: how much slower than the issue's machine (an estimate)
        },
        "quick": quick,
        "figures": doc,
    }
