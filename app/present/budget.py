"""What a run would cost before it starts: its events estimated from its parameters, and the limits a
server shared by a class enforces, so a run that would exhaust it is refused with a message naming
the field, the limit and the value instead of being started.

A run's memory grows with the events it records (the trace's columns, then the replay's indexes and
a browser's windows over them), and its wall time with the events too, plus the arithmetic when
numerics are on. The estimates below come from the tiling the scenario itself would choose (the
same tiler, run on the host in a millisecond) times per-unit event counts measured on this code base:

=================  ==========================================  =====================================
scenario           unit                                        measured events per unit (Nov 2026)
=================  ==========================================  =====================================
matmul             base block x K step                         14.0 - 15.5 (+ about 100 per block)
matmul-leaky-relu  base block x K step                         16.8 - 24.5 (+ about 100 per block)
vector-add         tile                                        17 - 21
pipeline           batch                                       about 18
=================  ==========================================  =====================================

The estimate errs high (the largest rate measured, plus the per-block rows), so a refused run would
really have been that big.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.profile import Profile
from engine.scenarios import ScenarioArgError

# 8192^3 timing-only (3.66 M events, measured) must fit with room to spare; a run of 6 M events
# peaks at about 1.2 GB of one worker's memory (0.7 GB measured for the 8192^3 run and its replay,
# scaled by events): two workers and their caches stay within a 4 GB class server.
MAX_EVENTS = 6_000_000
# Real arithmetic costs about 1 s per 2^33 multiply-adds (2048^3 measured: 1.1 s); 4096^3 (2^36,
# about 9 s) is the largest matmul computed for real. Larger shapes run timing-only.
MAX_NUMERIC_MACS = 4096**3
MAX_NUMERIC_ELEMENTS = 64 * 2**20  # vector-add with numerics: 64 Mi fp16 elements (3 x 128 MiB on the host)


@dataclass(frozen=True)
class Cost:
    events: int  # estimated trace events
    field: str  # the parameters the estimate grows with, as the user names them
    shown: str  # their values ("8192 x 8192 x 8192")


def _matmul(profile: Profile, v: dict, out_dtype: str, per_unit: float) -> Cost:
    from engine.scenarios.kernels import matmul_tiling

    cores = v.get("cores") or profile.chip.aic_cores
    tiling, _scores = matmul_tiling(
        profile, v["m"], v["n"], v["k"], cores, v.get("base"), v.get("buffer_num", 2), out_dtype
    )
    blocks = math.ceil(v["m"] / tiling.baseM) * math.ceil(v["n"] / tiling.baseN)
    k_steps = math.ceil(v["k"] / tiling.baseK)
    events = int(per_unit * blocks * k_steps + 100 * blocks + 200)
    return Cost(events, "m x n x k", f"{v['m']} x {v['n']} x {v['k']}")


def estimate(scenario: str, profile: Profile, values: dict) -> Cost | None:
    """The events a run of ``scenario`` with validated ``values`` would record (None: no estimate)."""
    if scenario == "matmul":
        return _matmul(profile, values, values.get("out_dtype", "fp16"), 15.5)
    if scenario == "matmul-leaky-relu":
        return _matmul(profile, values, "fp32", 24.5)
    if scenario == "vector-add":
        tiles = math.ceil(values["length"] / values["tile_length"])
        return Cost(21 * tiles + 200, "length / tile_length", f"{values['length']} / {values['tile_length']}")
    if scenario == "pipeline":
        return Cost(20 * values["batches"] + 100, "batches", str(values["batches"]))
    return None


def check(scenario: str, profile: Profile, values: dict, numerics: bool, max_events: int = MAX_EVENTS) -> Cost | None:
    """Refuse (:class:`ScenarioArgError`) a run too big for the server; returns its estimated cost."""
    cost = estimate(scenario, profile, values)
    if cost is not None and cost.events > max_events:
        raise ScenarioArgError(
            f"{cost.field}: this run would record about {cost.events:,} events, more than the server's limit of "
            f"{max_events:,} (got {cost.shown})"
        )
    if numerics and scenario in ("matmul", "matmul-leaky-relu"):
        macs = values["m"] * values["n"] * values["k"]
        if macs > MAX_NUMERIC_MACS:
            raise ScenarioArgError(
                f"m x n x k with numerics must be <= {MAX_NUMERIC_MACS:,} (4096^3), got {macs:,} "
                f"({values['m']} x {values['n']} x {values['k']}); turn numerics off for a timing-only run"
            )
    if numerics and scenario == "vector-add" and values["length"] > MAX_NUMERIC_ELEMENTS:
        raise ScenarioArgError(
            f"length with numerics must be <= {MAX_NUMERIC_ELEMENTS:,}, got {values['length']:,}; "
            "turn numerics off for a timing-only run"
        )
    return cost


__all__ = ("MAX_EVENTS", "MAX_NUMERIC_ELEMENTS", "MAX_NUMERIC_MACS", "Cost", "check", "estimate")
