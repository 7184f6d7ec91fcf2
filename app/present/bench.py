"""Replay figures for ``ascendsim bench``: seeking on a huge run and stepping on a lesson-sized one.

* ``replay_state_at_ms`` — ``state_at`` at random steps of the 8192^3 timing-only matmul trace
  (millions of rows), median over steps, once the replay is built (its build time is in the detail);
* ``replay_step_ms`` — one step forward or back (``state_at(s + 1)`` / ``state_at(s - 1)``) on a
  256^3 matmul on 4 cores with numerics, median.

Their targets: issue 23's seek under 50 ms; 5 ms a step.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from engine.scenarios.runner import get_scenario, run_scenario
from engine.tools.bench import Figure

from .replay import Replay


def _median_ms(calls) -> float:
    times = []
    for call in calls:
        t0 = time.perf_counter()
        call()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


SEEK_TARGET_MS = 50
STEP_TARGET_MS = 5


def replay_figures(quick: bool = False) -> list[Figure]:
    size = 1024 if quick else 8192
    run = run_scenario("matmul", m=size, n=size, k=size, numerics=False)
    t0 = time.perf_counter()
    replay = Replay(run.result)
    replay.state_at(len(replay) // 2)  # builds the per-core indexes
    build = time.perf_counter() - t0
    rng = np.random.default_rng(0)
    steps = rng.integers(0, len(replay), 25)
    seek = _median_ms(lambda s=int(s): replay.state_at(s) for s in steps)
    small = run_scenario("matmul", m=256, n=256, k=256, cores=4)
    lesson = Replay(small.result, inputs=get_scenario("matmul").inputs(small.params))
    lesson.state_at(0)
    middle = len(lesson) // 2
    moves = [middle + d for d in (1, 2, 3, 2, 1, 0, -1, -2, -1, 0) * 4]
    step = _median_ms(lambda s=s: lesson.state_at(s) for s in moves)
    return [
        Figure(
            "replay_state_at_ms",
            round(seek, 2),
            SEEK_TARGET_MS,
            "lower",
            "ms",
            f"{size}^3 timing-only trace, {len(replay.trace)} rows: replay built in {build:.2f} s, "
            f"median of {len(steps)} random seeks",
        ),
        Figure(
            "replay_step_ms",
            round(step, 2),
            STEP_TARGET_MS,
            "lower",
            "ms",
            f"256^3 matmul on 4 cores with numerics, {len(lesson)} steps: median of {len(moves)} steps back and forth",
        ),
    ]
