"""No report states an impossible number: every ratio lies in [0, 1] and every percentage in [0, 100].

Checked on every scenario and every profile (the summary, the metrics, the per-core pipe ratios, the
roofline), and on random shapes drawn by hypothesis. A % of peak above 100 would mean a figure used
the peak of a unit other than the one that did the work.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.profiles.profile import list_profiles, load_profile
from engine.scenarios import ScenarioArgError, registry
from engine.scenarios.runner import analyze_run, run_scenario
from tests.scenario_sizes import SMALL

UNIT_RATIO = ("_ratio", "utilization", "overlap", "hit_rate", "_share", "balance_score", "memory_bound_index")


def ratios(doc, path=""):
    """Every (path, value) in a report document that is a ratio or a percentage."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            here = f"{path}.{key}"
            if isinstance(value, int | float) and not isinstance(value, bool):
                if key.startswith("percent") or key.endswith(UNIT_RATIO):
                    yield here, key, value
            elif isinstance(value, dict) and (key.endswith(("ratios", "utilization")) or "per_core" in key):
                for name, v in _flatten(value, here):
                    yield name, key, v
            else:
                yield from ratios(value, here)
    elif isinstance(doc, list):
        for i, item in enumerate(doc):
            yield from ratios(item, f"{path}[{i}]")


def _flatten(d, path):
    for k, v in d.items():
        if isinstance(v, dict):
            yield from _flatten(v, f"{path}.{k}")
        else:
            yield f"{path}.{k}", v


def check(doc) -> int:
    found = 0
    for where, key, value in ratios(doc):
        found += 1
        top = 100 if key.startswith("percent") else 1
        assert 0 <= value <= top, f"{where} = {value} is outside [0, {top}]"
    return found


def report_of(name, profile, **params):
    run = run_scenario(name, profile, numerics=False, **params)
    analysis = analyze_run(run, measure_gains=False)
    return {"summary": run.summary(), "report": analysis.to_dict()}


@pytest.mark.parametrize("profile", list_profiles())
@pytest.mark.parametrize("name", sorted(registry()))
def test_every_ratio_is_possible(name, profile):
    try:
        doc = report_of(name, profile, **SMALL[name])
    except ScenarioArgError as exc:  # a mixed kernel on a chip without AIC/AIV groups is refused, by design
        assert name == "matmul-leaky-relu" and load_profile(profile).chip.architecture == "coupled", exc
        return
    assert check(doc) > 0


def test_measured_op_matmul_uses_the_measured_devices_peak():
    """The op-level matmul on measured-accelerator: time from the H200 table, peak from the H200."""
    doc = report_of("pipeline", "measured-accelerator", n=2048, batches=8, streams=2)
    metrics, roofline = doc["report"]["metrics"], doc["report"]["roofline"]
    assert 50 < metrics["percent_of_peak"] <= 100  # the JSON document
    assert len(roofline) == 1 and roofline[0]["count"] == 8  # one line per kernel shape
    assert roofline[0]["roofs"]["compute_tflops"] == load_profile("measured-accelerator").op_matmul.peak_tflops
    check(doc)


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(
    profile=st.sampled_from(list_profiles()),
    case=st.one_of(
        st.tuples(
            st.just("matmul"),
            st.fixed_dictionaries(
                {
                    "m": st.integers(1, 700),
                    "n": st.integers(1, 700),
                    "k": st.integers(1, 700),
                    "buffer_num": st.sampled_from([1, 2]),
                    "out_dtype": st.sampled_from(["fp16", "fp32"]),
                }
            ),
        ),
        st.tuples(
            st.just("vector-add"),
            st.fixed_dictionaries(
                {
                    "length": st.integers(1, 200_000),
                    "buffer_num": st.sampled_from([1, 2]),
                    "tile_length": st.sampled_from([256, 1024, 4096]),
                }
            ),
        ),
        st.tuples(
            st.just("pipeline"),
            st.fixed_dictionaries(
                {
                    "n": st.sampled_from([64, 512, 1024, 2048, 4096]),
                    "batches": st.integers(1, 10),
                    "streams": st.integers(1, 4),
                    "pageable": st.booleans(),
                    "sync_each": st.booleans(),
                }
            ),
        ),
    ),
)
def test_ratios_stay_in_range_on_random_runs(profile, case):
    name, params = case
    check(report_of(name, profile, **params))
