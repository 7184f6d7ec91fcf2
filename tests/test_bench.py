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
        assert row["events"] > 0 and row["instructions"] > 0 and row["peak_mb"] > 0 and row["bytes_per_event"] >= 0
    small, big = doc["scale"]
    assert big["instructions"] > 2 * small["instructions"]  # 8x the work: the rows measure different runs
