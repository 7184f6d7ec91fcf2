"""``ascendsim bench --quick`` produces every figure (timing targets are judged only by the full run)."""

import json
import subprocess
import sys

import pytest

FIGURES = {
    "numerics_ratio",
    "timing_instr_per_s",
    "timing_wall_s_1024",
    "peak_rss_mb_1024",
    "host_events_per_s",
    "trace_bytes_per_event",
    "replay_state_at_ms",
    "replay_step_ms",
}


@pytest.mark.slow
def test_bench_quick_reports_every_figure():
    out = subprocess.run(
        [sys.executable, "-m", "app.cli", "bench", "--quick", "--json"], capture_output=True, text=True, check=True
    )
    doc = json.loads(out.stdout)
    assert set(doc["figures"]) == FIGURES
    for name, f in doc["figures"].items():
        assert f["value"] > 0, name
        assert f["target"] > 0 and f["better"] in ("lower", "higher") and f["ok"] is None
    assert doc["machine"]["cores"] >= 1 and doc["quick"] is True and doc["machine"]["factor"] > 0
    from app.cli.scale import QUICK_SIZES

    assert [r["size"] for r in doc["scale"]] == list(QUICK_SIZES)  # the scale table: one row per size, measured
    for row in doc["scale"]:
        assert row["events"] > 0 and row["instructions"] > 0 and row["peak_mb"] > 0 and row["bytes_per_event"] > 0
    small, big = doc["scale"]
    assert big["instructions"] > 2 * small["instructions"]  # 8x the work: the rows measure different runs
    assert big["peak_mb"] > small["peak_mb"]  # each child's own peak (not the bench's, which both would read)


def test_a_command_measured_from_a_large_process_reports_its_own_peak_memory():
    """Spawned by a process holding 400 MB, a small command's ``ru_maxrss`` reads the parent's (Linux keeps the
    high-water mark through fork and exec); measured by :func:`engine.tools.measured.measured`, its own."""
    import os

    import numpy as np

    from engine.tools.measured import measured

    held = np.ones(50_000_000)  # 400 MB, touched
    small = [sys.executable, "-c", "import sys; sys.stdout.write('ok'); sys.exit(3)"]
    child = subprocess.Popen(small, stdout=subprocess.DEVNULL)
    _pid, _status, usage = os.wait4(child.pid, 0)
    child.returncode = 3
    assert usage.ru_maxrss / 1024 > 350  # what the bench used to read
    run = measured(small)
    assert run.peak_kb / 1024 < 100 and run.status == 3 and run.stdout == "ok" and run.wall_s > 0
    assert held[-1] == 1.0
