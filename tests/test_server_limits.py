"""The server's run budget: refusals that name the field, the limit and the value."""

import pytest

from app.server import limits as budget
from engine.profiles.profile import load_profile
from engine.scenarios import ScenarioArgError, registry

PROFILE = load_profile("ascend910b1")


def _values(name, **params):
    return registry()[name].validate(PROFILE, params)


def _check(name, numerics, **params):
    return budget.check(registry()[name], PROFILE, _values(name, **params), numerics=numerics)


def test_8192_cubed_timing_only_fits_and_twice_that_is_refused_naming_the_field():
    assert _check("matmul", False, m=8192, n=8192, k=8192).events < budget.MAX_EVENTS
    with pytest.raises(ScenarioArgError) as err:
        _check("matmul", False, m=16384, n=8192, k=8192)
    text = str(err.value)
    assert text.startswith("m x n x k:") and f"{budget.MAX_EVENTS:,}" in text and "16384 x 8192 x 8192" in text


def test_numerics_of_8192_cubed_are_refused_with_the_limit():
    with pytest.raises(ScenarioArgError) as err:
        _check("matmul", True, m=8192, n=8192, k=8192)
    text = str(err.value)
    assert "m x n x k with numerics must be <=" in text and f"{budget.MAX_NUMERIC_MACS:,}" in text
    assert "8192 x 8192 x 8192" in text
    assert _check("matmul", True, m=2048, n=2048, k=2048) is not None


def test_vector_add_limits_name_length():
    with pytest.raises(ScenarioArgError, match=r"^length: .*\(got 1000000000\)"):
        _check("vector-add", False, length=10**9, tile_length=16)
    with pytest.raises(ScenarioArgError, match=r"^length with numerics must be <="):
        _check("vector-add", True, length=100 * 2**20)


def test_every_scenario_has_an_estimate_and_small_runs_pass():
    for scenario in registry().values():
        assert budget.check(scenario, PROFILE, scenario.validate(PROFILE, {}), numerics=True).events > 0


@pytest.mark.parametrize(
    ("name", "params", "at_fault"),
    [
        ("matmul", {"m": 0}, ("m",)),  # a parameter's own range
        ("matmul", {"cores": 99}, ("cores",)),  # a scenario's rule
        ("matmul", {"base": "512,512,512"}, ("base",)),  # the tiling refused: L0A overflows
        ("pipeline", {"streams": 40000}, ("streams",)),  # more than the profile's 32768
        ("pipeline", {"sync_each": True, "prefetch_depth": 2}, ("sync_each", "prefetch_depth")),
        ("vector-add", {"tile_length": 2**20}, ("tile_length",)),
    ],
)
def test_a_refusal_carries_the_parameters_at_fault_as_fields(name, params, at_fault):
    """A form marks its fields from ``params``, never from the message's words."""
    with pytest.raises(ScenarioArgError) as err:
        _values(name, **params)
    assert err.value.params == at_fault, str(err.value)


def test_the_server_budget_names_its_parameters_as_fields():
    with pytest.raises(ScenarioArgError) as err:
        _check("matmul", False, m=16384, n=8192, k=8192)
    assert err.value.params == ("m", "n", "k")
    cost = _check("vector-add", False, length=4096, cores=2)
    assert cost.params["events"] == ("length", "cores") and cost.params["host_bytes"] == ("length",)
