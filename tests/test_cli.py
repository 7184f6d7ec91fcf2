"""The ascendsim command: JSON output, trace files, and one-line errors with exit code 2."""

import json
import os
import subprocess
import sys

import pytest

from app.cli import main

REQUIRED = {"scenario", "profile", "simulated_us", "correct", "events", "wall_s", "lane_busy_us"}


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, check=False)


def test_run_json_prints_one_object_and_nothing_else():
    out = run_cli("run", "host-lifecycle", "--n", "64", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc.keys() >= REQUIRED
    assert doc["correct"] is True and doc["scenario"] == "host-lifecycle" and doc["profile"] == "ascend910b1"


def test_pipeline_on_measured_profile(capsys):
    code = main(
        [
            "run",
            "pipeline",
            "--profile",
            "measured-accelerator",
            "--n",
            "128",
            "--batches",
            "3",
            "--streams",
            "2",
            "--json",
        ]
    )
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["correct"] is True and doc["params"]["streams"] == 2
    assert doc["lane_busy_us"]["Device 0 copy engines/H2D engine 0"] > 0


def test_no_numerics_keeps_the_timing(capsys):
    assert main(["run", "pipeline", "--n", "256", "--batches", "3", "--json"]) == 0
    with_numbers = json.loads(capsys.readouterr().out)
    assert main(["run", "pipeline", "--n", "256", "--batches", "3", "--json", "--no-numerics"]) == 0
    without = json.loads(capsys.readouterr().out)
    assert without["correct"] is None
    assert without["simulated_us"] == with_numbers["simulated_us"]
    assert without["events"] == with_numbers["events"]


def test_trace_writes_a_chrome_file(tmp_path, capsys):
    out = tmp_path / "t.json"
    assert main(["trace", "pipeline", "--n", "64", "--batches", "2", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert any(e["ph"] == "X" for e in doc["traceEvents"])


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "pipeline", "--n", "0"], "--n must be >= 1, got 0"),
        (["run", "pipeline", "--n", "-5"], "--n must be >= 1, got -5"),
        (["run", "pipeline", "--batches", "0"], "--batches must be >= 1, got 0"),
        (["run", "pipeline", "--streams", "0"], "--streams must be >= 1, got 0"),
        (
            ["run", "pipeline", "--n", "200000"],
            "ascend910b1's 68719476736 B of device memory (got --n 200000 --streams 2)",
        ),
        (["run", "host-lifecycle", "--profile", "nope"], "--profile: unknown profile 'nope'"),
        (["run", "pipeline", "--n", "abc"], "'abc' is not a valid integer"),
        (["run", "nosuch"], "No such command 'nosuch'"),
        (["profiles", "show", "nope"], "unknown profile 'nope'"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(args, needle):
    out = run_cli(*args)
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], out.stderr
    assert "Traceback" not in out.stderr


def test_profiles_list_and_show(capsys):
    assert main(["profiles"]) == 0
    text = capsys.readouterr().out
    assert "ascend910b1" in text and "(default)" in text and "363.7 TFLOPS" in text
    assert main(["profiles", "show", "ascend910b1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["chip"]["aic_cores"] == 24 and doc["derived"]["peak_fp16_tflops"] == 363.7


MATMUL_KEYS = {"tflops", "cube_utilization", "pipe_ratios", "pipe_time_us", "kernel_us", "tiling", "max_abs_err"}
RATIOS = {
    "aic_mac_ratio",
    "aic_mte1_ratio",
    "aic_mte2_ratio",
    "aic_fixpipe_ratio",
    "aiv_vec_ratio",
    "aiv_mte2_ratio",
    "aiv_mte3_ratio",
}


def test_matmul_json(capsys):
    assert main(["run", "matmul", "--m", "300", "--n", "200", "--k", "100", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc.keys() >= REQUIRED | MATMUL_KEYS
    assert doc["correct"] is True and doc["max_abs_err"] <= doc["tolerance"]
    assert doc["pipe_ratios"].keys() >= RATIOS
    assert set(doc["pipe_time_us"]) == {"s", "v", "m", "mte1", "mte2", "mte3", "fix"}
    assert 0 < doc["cube_utilization"] == doc["pipe_ratios"]["aic_mac_ratio"] <= 1
    assert doc["tiling"]["usedCoreNum"] >= 1 and doc["tflops"] > 0
    t = doc["tiling"]
    assert doc["kernel_us"] > 0 and t["M"] == 300 and t["N"] == 200 and t["Ka"] == 100


def test_matmul_fixed_base_and_fp32(capsys):
    args = [
        "run",
        "matmul",
        "--m",
        "96",
        "--n",
        "80",
        "--k",
        "64",
        "--base",
        "32,32,32",
        "--out-dtype",
        "fp32",
        "--buffer-num",
        "1",
        "--cores",
        "4",
        "--json",
    ]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["correct"] is True
    assert (doc["tiling"]["baseM"], doc["tiling"]["baseN"], doc["tiling"]["baseK"]) == (32, 32, 32)
    assert doc["tiling"]["usedCoreNum"] <= 4 and doc["tiling"]["dbL0A"] == 1


def test_vector_add_json(capsys):
    assert main(["run", "vector-add", "--length", "10001", "--buffer-num", "1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["correct"] is True and doc["pipe_ratios"]["aiv_mte2_ratio"] > 0


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "matmul", "--m", "0"], "--m must be >= 1, got 0"),
        (
            ["run", "matmul", "--base", "256,256,128"],
            "--base: baseM*baseK*2*dbL0A must fit L0A (65536 B), got 131072 B",
        ),
        (["run", "matmul", "--base", "100,64,64"], "--base must be multiples of 16"),
        (["run", "matmul", "--base", "64,64"], "--base must be three integers BM,BN,BK"),
        (["run", "matmul", "--cores", "25"], "--cores must be in 1..24 (ascend910b1), got 25"),
        (["run", "matmul", "--buffer-num", "3"], "--buffer-num must be one of 1, 2, got 3"),
        (["run", "matmul", "--m", "200000", "--n", "200000"], "more than ascend910b1's 68719476736 B"),
        (["run", "vector-add", "--length", "-1"], "--length must be >= 1, got -1"),
        (["run", "vector-add", "--tile-length", "40000"], "--tile-length: 3 queues x 2 slots x 40000 fp16"),
    ],
)
def test_bad_kernel_arguments_exit_2(args, needle):
    out = run_cli(*args)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], out.stderr


def test_a_command_collects_garbage_as_runs_need():
    """A run keeps hundreds of thousands of small containers alive: the command collects at app.collector's
    thresholds, not CPython's default of a young collection every 700 allocations."""
    from app.collector import RUN_THRESHOLDS

    code = (
        "import gc, io, contextlib; from app.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()): main(['run', 'host-lifecycle', '--n', '64', '--json'])\n"
        "print(list(gc.get_threshold()))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == list(RUN_THRESHOLDS)


FINALIZED = "import atexit, sys\natexit.register(lambda: sys.stderr.write('finalized\\n'))\n"


@pytest.mark.parametrize(
    ("args", "code", "quick"),
    [
        (["run", "matmul", "--m", "64", "--n", "64", "--k", "64", "--json"], 0, True),
        (["run", "pipeline", "--batches", "3"], 0, True),
        (["trace", "host-lifecycle", "--n", "64", "--out", "{tmp}/t.json"], 0, True),
        (["compare", "--json", "pipeline", "--batches", "2", "--", "pipeline", "--batches", "3"], 0, True),
        (["profiles"], 0, False),  # nothing big built: the usual ending
        (["run", "matmul", "--m", "0"], 2, False),  # refused: the usual ending, its one line
    ],
)
def test_a_run_command_ends_its_process_without_tearing_its_run_down(tmp_path, args, code, quick):
    """After ``run``, ``trace`` or ``compare`` wrote its output, the ``ascendsim`` process ends at once (Python's
    finalisation freed an 8192^3 run object by object for 0.2 s): the output is whole and the exit status kept, and
    no exit handler runs (this one prints "finalized"). Other commands, and refused ones, end the usual way."""
    (tmp_path / "sitecustomize.py").write_text(FINALIZED)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    out = subprocess.run(
        [sys.executable, "-m", "app.cli", *argv], capture_output=True, text=True, check=False, env=env, timeout=120
    )
    assert out.returncode == code, out.stderr
    assert ("finalized" in out.stderr) is not quick, out.stderr
    if "--json" in argv:  # the whole object, flushed before the process ended
        doc = json.loads(out.stdout)
        assert doc["events"] > 0 if argv[0] == "run" else doc["a"].startswith("pipeline")
    if argv[0] == "trace":
        assert json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    if argv[:2] == ["run", "pipeline"]:
        assert "busy time per lane:" in out.stdout


@pytest.mark.parametrize("reader", ["head -1", "true"])
def test_a_run_whose_reader_went_away_ends_without_a_traceback(reader):
    """``ascendsim run ... | head -1`` (the reader takes a line and leaves) and ``| true`` (it leaves before the
    output is written): the process ends, quietly."""
    cmd = f"{sys.executable} -m app.cli run pipeline --batches 3 | {reader}"
    out = subprocess.run(["bash", "-c", cmd], check=False, capture_output=True, text=True, timeout=120)
    assert out.stdout.startswith("scenario pipeline") if reader != "true" else out.stdout == ""
    assert out.stderr == "", out.stderr
