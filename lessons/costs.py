"""The cost table a trainee sees beside "yours vs expected": bytes moved per level, time per pipe, utilisation.

Computed in the grader from a run's trace (:class:`lessons.wire.RunData`) with :mod:`engine.analysis`:

* ``bytes``: bytes over the host link by direction (the copy engines' rows) and on chip by path
  (an MTE/FIX move's pipe and the on-chip buffer it touched: MTE2 into UB/L1, MTE1 L1 -> L0A/L0B,
  FIX out of L0C, MTE3 out of UB/L1);
* ``pipes``: per pipe kind, the busy time summed over the cores that ran it and its mean busy share
  of the kernels' time on those cores;
* ``utilisation``: the run's metrics (``engine.analysis.metrics.run_metrics``): kernel time, achieved
  TFLOPS and % of the fp16 Cube peak, msprof-named pipe ratios of the main kernel, copy time.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

import numpy as np

from engine.aicore.pipes import LANE_NAMES
from engine.aicore.tensor import Buffer
from engine.analysis.metrics import run_metrics
from engine.trace import Kind
from engine.trace.intervals import covered

from .checks import kernel_rows
from .selectors import trace_lane_facts

_LINK = {"H2D": "host -> device", "D2H": "device -> host", "D2D": "device -> device"}
_ON_CHIP = {
    ("MTE2", Buffer.UB.value): "GM -> UB",
    ("MTE2", Buffer.L1.value): "GM -> L1",
    ("MTE2", Buffer.L0A.value): "GM -> L0A",
    ("MTE2", Buffer.L0B.value): "GM -> L0B",
    ("MTE1", Buffer.L0A.value): "L1 -> L0A",
    ("MTE1", Buffer.L0B.value): "L1 -> L0B",
    ("FIXP", Buffer.L0C.value): "L0C -> GM/L1 (fixpipe)",
    ("MTE3", Buffer.UB.value): "UB -> GM",
    ("MTE3", Buffer.L1.value): "L1 -> GM",
    ("VECTOR", Buffer.UB.value): "UB -> UB",
    ("VECTOR", Buffer.L0C.value): "L0C -> GM/L1 (vector)",
}
UTILISATION_KEYS = (
    "kernel_us",
    "tflops",
    "percent_of_peak",
    "cube_utilization",
    "pipe_ratios",
    "copy_us",
    "copy_compute_overlap",
    "host_api_us",
    "device_busy_us",
    "simulated_us",
)


def cost_table(run) -> dict:
    t = run.trace
    c = t.columns
    facts = trace_lane_facts(t)
    moved: dict[str, int] = defaultdict(int)
    copies = np.flatnonzero(c["kind"] == Kind.COPY)
    for i in copies:
        f = facts[int(c["lane"][i])]
        if f.kind == "copy_engine":
            moved[_LINK.get(f.direction, f.direction)] += int(c["nbytes"][i])
    moves = np.flatnonzero(c["kind"] == Kind.MOVE)
    for i in moves:
        f = facts[int(c["lane"][i])]
        level = _ON_CHIP.get((f.pipe, int(c["buf"][i])), f"{f.pipe} other")
        moved[level] += int(c["nbytes"][i])
    work = np.isin(c["kind"], (Kind.MOVE, Kind.COMPUTE))
    pipes: dict[str, dict] = {}
    kernels = kernel_rows(run)
    kernel_time = covered(c["start"][kernels], c["end"][kernels]) if len(kernels) else 0
    for pipe in LANE_NAMES:
        lanes = [i for i, f in enumerate(facts) if f.kind == "pipe" and f.pipe == pipe]
        sel = work & np.isin(c["lane"], lanes)
        if not sel.any():
            continue
        busy = 0
        cores = 0
        for lane in lanes:
            on = sel & (c["lane"] == lane)
            if on.any():
                busy += covered(c["start"][on], c["end"][on])
                cores += 1
        share = busy / (cores * kernel_time) if kernel_time and cores else 0.0
        pipes[pipe] = {"busy_us": round(busy / 1e6, 4), "cores": cores, "share": round(min(1.0, share), 4)}
    metrics = run_metrics(run)
    utilisation = {}
    for key in UTILISATION_KEYS:
        value = metrics.figure(key)  # a name that is not a figure raises
        if value is not None:  # None: no instruction-level kernel ran
            utilisation[key] = dict(value) if isinstance(value, Mapping) else value
    return {"bytes": dict(sorted(moved.items())), "pipes": pipes, "utilisation": utilisation}
