"""The limits a server shared by a class enforces before it starts a run, so a run that would exhaust
it is refused with a message naming the field, the limit and the value.

A run's memory grows with the events it records (the trace's columns, then the replay's indexes and
a browser's windows over them), and its wall time with the events too, plus the arithmetic when
numerics are on. The events come from the one estimate the command line uses as well
(``Scenario.estimate``, :mod:`engine.scenarios.cost`: the scenario's own tiler and per-unit counts measured on
this code base, kept within 30 % of real runs by ``tests/test_cost.py``).
"""

from __future__ import annotations

from types import MappingProxyType

from engine.profiles.profile import Profile
from engine.scenarios import Scenario, ScenarioArgError
from engine.scenarios.cost import Cost

# 8192^3 timing-only (3.66 M events, measured) must fit with room to spare; a run of 6 M events
# peaks at about 1.2 GB of one worker's memory (0.7 GB measured for the 8192^3 run and its replay,
# scaled by events): two workers and their caches stay within a 4 GB class server.
MAX_EVENTS = 6_000_000
# Real arithmetic costs about 1 s per 2^33 multiply-adds (2048^3 measured: 1.1 s); 4096^3 (2^36,
# about 9 s) is the largest matmul computed for real. Larger shapes run timing-only.
MAX_NUMERIC_MACS = 4096**3
MAX_NUMERIC_ELEMENTS = 64 * 2**20  # vector-add with numerics: 64 Mi fp16 elements (3 x 128 MiB on the host)
# the cap of each unit a scenario measures its numerics in (Scenario.numeric_size)
NUMERIC_LIMITS = MappingProxyType({"macs": MAX_NUMERIC_MACS, "elements": MAX_NUMERIC_ELEMENTS})


def _fields(names: tuple[str, ...], values: dict) -> tuple[str, str]:
    """("m x n x k", "8192 x 8192 x 8192") from the parameters that set a cost and the run's values."""
    return " x ".join(names), " x ".join(str(values[n]) for n in names)


def check(scenario: Scenario, profile: Profile, values: dict, numerics: bool, max_events: int = MAX_EVENTS) -> Cost:
    """Refuse (:class:`ScenarioArgError`) a run too big for the server; returns its estimated cost."""
    cost = scenario.estimate(profile, values, numerics)
    if cost.events > max_events:
        names = cost.params["events"]
        field, shown = _fields(names, values)
        raise ScenarioArgError(
            f"{field}: this run would record about {cost.events:,} events, more than the server's limit of "
            f"{max_events:,} (got {shown})",
            *names,
            zh=f"{field}：这次运行将记录约 {cost.events:,} 个事件，超过了服务器的上限 {max_events:,}（收到 {shown}）",
        )
    size = scenario.numeric_size(values) if numerics and scenario.numeric_size is not None else None
    if size is not None and size.value > (limit := NUMERIC_LIMITS[size.unit]):
        field, shown = _fields(size.params, values)
        power = " (4096^3)" if size.unit == "macs" else ""
        given = f" ({shown})" if len(size.params) > 1 else ""
        raise ScenarioArgError(
            f"{field} with numerics must be <= {limit:,}{power}, got {size.value:,}{given}; "
            "turn numerics off for a timing-only run",
            *size.params,
            zh=f"开启 numerics 时 {field} 必须 <= {limit:,}{power}，收到 {size.value:,}{given}；"
            "关闭 numerics 即可只计时运行",
        )
    return cost


__all__ = ("MAX_EVENTS", "MAX_NUMERIC_ELEMENTS", "MAX_NUMERIC_MACS", "NUMERIC_LIMITS", "check")
