"""What a learner reads: compare's columns, "not checked", the roofline once per shape, bench's wording."""

from __future__ import annotations

import subprocess
import sys

import pytest

from app.cli import main


def test_compare_text_keeps_its_headers_and_drops_idle_pipes(capsys):
    small = ["--m", "256", "--n", "256", "--k", "256", "--no-numerics"]
    assert main(["compare", "matmul", *small, "--buffer-num", "1", "--", "matmul", *small]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("A: matmul m=256 n=256 k=256 ") and "buffer_num=1" in lines[0]
    assert lines[1].startswith("B: matmul m=256 n=256 k=256 ") and "buffer_num=2" in lines[1]
    assert lines[2].split() == ["A", "B", "B/A"]  # the column headers, whole
    pipes = lines[lines.index("== pipe_ratios ==") + 1 : lines.index("== gaps_us ==")]
    names = [line.split()[0] for line in pipes]
    assert "aic_mac_ratio" in names and not [n for n in names if n.startswith("aiv_")]  # a Cube-only kernel


def test_no_numerics_says_not_checked(capsys):
    assert main(["run", "pipeline", "--n", "64", "--batches", "2", "--no-numerics"]) == 0
    out = capsys.readouterr().out
    assert "correct: not checked (--no-numerics" in out and "None" not in out
    assert main(["run", "pipeline", "--n", "64", "--batches", "2"]) == 0
    assert "correct: True (matches numpy)" in capsys.readouterr().out


def test_roofline_prints_one_line_per_kernel_shape(capsys):
    assert main(["run", "pipeline", "--profile", "measured-accelerator", "--no-numerics", "--report"]) == 0
    out = capsys.readouterr().out
    roofline = out.split("== Roofline ==")[1].split("==")[0].strip().splitlines()
    assert len(roofline) == 1 and "matmul 1024x1024x1024 (x8)" in roofline[0], roofline
    assert "roofs compute 989.5, hbm" in roofline[0]  # the measured device's roofs, not the 910B1's


@pytest.mark.slow
def test_bench_says_its_figures_describe_this_machine():
    out = subprocess.run(
        [sys.executable, "-m", "app.cli", "bench", "--quick"], capture_output=True, text=True, check=True
    )
    assert "describe this machine" in out.stderr and "bench [3/5]" in out.stderr and "bench [5/5]" in out.stderr
    assert out.stdout.startswith("This machine: ") and "MISSED" not in out.stdout
