"""The up-front estimate of a run (engine/scenarios/cost.py) is close to what the run really needs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from engine.profiles.profile import load_profile
from engine.scenarios import registry
from engine.scenarios.runner import run_scenario

BASELINE_RSS = 150e6  # the interpreter with numpy, click and the engine loaded


def test_every_scenario_has_an_estimate():
    profile = load_profile()
    for scenario in registry().values():
        assert scenario.estimate(profile, scenario.validate(profile, {}), numerics=False).events > 0, scenario.name


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("matmul", {"m": 1024, "n": 1024, "k": 1024}),
        ("matmul", {"m": 2048, "n": 2048, "k": 2048}),
        ("matmul", {"m": 4096, "n": 512, "k": 2048, "buffer_num": 1}),
        ("matmul", {"m": 1000, "n": 1000, "k": 3000, "base": "64,64,64"}),
        ("matmul-leaky-relu", {"m": 1024, "n": 1024, "k": 1024}),
        ("matmul-leaky-relu", {"m": 2048, "n": 512, "k": 256}),
        ("vector-add", {"length": 1_000_000}),
        ("vector-add", {"length": 100_001, "buffer_num": 1, "tile_length": 512}),
        ("pipeline", {"batches": 1000, "streams": 3}),
        ("pipeline", {"batches": 300, "streams": 1, "sync_each": True}),
    ],
)
def test_event_estimate_is_within_30_percent(name, params):
    profile = load_profile()
    run = run_scenario(name, profile, numerics=False, **params)
    guess = registry()[name].estimate(profile, run.params, numerics=False).events
    actual = len(run.result.trace)
    assert 0.85 * actual <= guess <= 1.3 * actual, (guess, actual)


@pytest.mark.slow
@pytest.mark.parametrize("args", [["pipeline", "--n", "512", "--batches", "80"], ["vector-add", "--length", "8000000"]])
def test_memory_estimate_covers_the_real_peak(args):
    """The child's peak resident memory, less the interpreter, stays under the estimate (and near it)."""
    name = args[0]
    values = {args[i][2:].replace("-", "_"): int(args[i + 1]) for i in range(1, len(args), 2)}
    profile = load_profile()
    scenario = registry()[name]
    cost = scenario.estimate(profile, scenario.validate(profile, values), numerics=True)
    # the child reports its own high-water mark (VmHWM): getrusage's ru_maxrss would carry the peak of this
    # (large) pytest process across fork and exec
    code = (
        "import sys\n"
        "from app.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "hwm = next(line for line in open('/proc/self/status') if line.startswith('VmHWM'))\n"
        "print(int(hwm.split()[1]) * 1024, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    child = subprocess.run(
        [sys.executable, "-c", code, "run", *args, "--json"], capture_output=True, text=True, check=False
    )
    assert child.returncode == 0 and json.loads(child.stdout)["correct"] is True, child.stderr
    peak = int(child.stderr.strip().splitlines()[-1])
    assert peak - BASELINE_RSS <= cost.memory_bytes <= 3 * peak, (peak, cost.memory_bytes)
