"""``ascendsim bench``'s scale table: how wall time and memory grow with the size of a timing-only matmul.

For each size N (2048^3 ... 16384^3 by default) a fresh child process (``python -m app.cli.scale N``) runs
what ``ascendsim run matmul --m N --n N --k N --no-numerics`` runs (the scenario and its summary) and then
builds the replay a UI steps through (:class:`~app.present.replay.Replay` and one ``state_at``); its wall time
and its peak resident memory are measured from a small process of its own (:mod:`engine.tools.measured`: from
the bench's, the peak would read at least the bench's). A row gives the run's wall time and
its nanoseconds per trace event (growth linear in instructions keeps that flat), the replay's build time, the
child's peak memory, and the bytes per event: the peak minus what the child held before the run (its imports,
those a run makes lazily included: a 128^3 run and its replay first), over the events, replay included (issue 23:
at most 200 B). A size this machine cannot run is refused
before it starts, with its estimate, by the check ``ascendsim run`` makes (:func:`app.cli.budget.check_budget`).
"""

from __future__ import annotations

import json
import resource
import sys
import time
from collections.abc import Callable

SIZES = (2048, 4096, 8192, 16384)
QUICK_SIZES = (512, 1024)
BYTES_PER_EVENT_TARGET = 200


def scale_rows(sizes: tuple[int, ...] = SIZES, progress: Callable[[int], None] | None = None) -> list[dict]:
    """One row per size (see the module); ``progress(n)`` is called before each."""
    from engine.profiles.profile import DEFAULT_PROFILE
    from engine.scenarios.runner import get_scenario

    from .options import prepare_run
    from .usage import UsageFailure

    rows = []
    for n in sizes:
        if progress is not None:
            progress(n)
        try:
            prepared = prepare_run(get_scenario("matmul"), DEFAULT_PROFILE, True, {"m": n, "n": n, "k": n})
        except UsageFailure as refused:
            rows.append({"size": n, "refused": str(refused)})
            continue
        row = {"size": n, "estimated_events": prepared.events, "estimated_s": round(prepared.seconds, 1)}
        row.update(_measure(n))
        rows.append(row)
    return rows


def _measure(n: int) -> dict:
    from engine.tools.measured import measured

    run = measured([sys.executable, "-m", "app.cli.scale", str(n)])
    if run.status != 0:
        raise RuntimeError(f"scale run {n}^3 failed: {run.stderr.strip()}")
    doc = json.loads(run.stdout)
    wall, peak = run.wall_s, run.peak_kb * 1024
    events = doc["events"]
    return {
        "events": events,
        "instructions": doc["instructions"],
        "run_s": doc["run_s"],
        "ns_per_event": round(doc["run_s"] / events * 1e9, 1),
        "replay_s": doc["replay_s"],
        "wall_s": round(wall, 3),
        "peak_mb": round(peak / 1e6, 1),
        "bytes_per_event": round((peak - doc["rss_before"]) / events, 1),
    }


def render_rows(rows: list[dict]) -> list[str]:
    """The table as lines of text."""
    lines = [
        f"{'size':>7} {'events':>11} {'run s':>7} {'ns/event':>9} {'replay s':>9} {'wall s':>7} "
        f"{'peak MB':>8} {'B/event':>8}"
    ]
    for r in rows:
        if "refused" in r:
            lines.append(f"{r['size']:>5}^3 refused: {r['refused']}")
            continue
        flag = "" if r["bytes_per_event"] <= BYTES_PER_EVENT_TARGET else f"  (> {BYTES_PER_EVENT_TARGET} B)"
        lines.append(
            f"{r['size']:>5}^3 {r['events']:>11,} {r['run_s']:>7.2f} {r['ns_per_event']:>9.0f} {r['replay_s']:>9.2f} "
            f"{r['wall_s']:>7.2f} {r['peak_mb']:>8.0f} {r['bytes_per_event']:>8.0f}{flag}"
        )
    return lines


def _child(n: int) -> dict:
    """In the child: the run as ``ascendsim run`` makes it, then its replay; what the parent cannot see."""
    from app.collector import after_run
    from app.present.replay import Replay
    from engine.scenarios.runner import run_scenario

    warm = run_scenario("matmul", m=128, n=128, k=128, numerics=False)  # the modules a run and a replay import
    Replay(warm.result).state_at(0)  # lazily: memory of the code, not of the run
    del warm
    after_run()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    t0 = time.perf_counter()
    run = run_scenario("matmul", m=n, n=n, k=n, numerics=False)
    summary = run.summary()
    t1 = time.perf_counter()
    after_run()  # as the UIs do before they build the replay (its time counts in the replay's)
    replay = Replay(run.result)
    replay.state_at(len(replay) // 2)
    t2 = time.perf_counter()
    return {
        "events": len(run.result.trace),
        "instructions": summary["instructions"],
        "run_s": round(t1 - t0, 3),
        "replay_s": round(t2 - t1, 3),
        "rss_before": before,
    }


if __name__ == "__main__":
    print(json.dumps(_child(int(sys.argv[1]))))
