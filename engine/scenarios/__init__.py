"""Scenarios: complete host programs that the CLI, the lessons and the UIs run.

A scenario is a plain function of a :class:`~engine.simulation.Simulation` and its parameters that
drives the pyACL-shaped API like a user script would, and returns whether the numbers were right.
Parameters are declared with their limits, so every front end validates them the same way and
reports the argument, its limit and the value.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..profiles.profile import Profile
from .cost import Cost

SEED_MAX = 2**32 - 1  # seeds of the inputs' random generator: 0 .. 2^32 - 1 (one 32-bit word)


class ScenarioArgError(ValueError):
    """A scenario argument is out of range; the message names the argument, its limit and the value.

    ``params`` are the names of the parameters at fault (``("cores",)``, ``("m", "n", "k")``; empty when the
    error is about the scenario itself), so a form can mark its fields without reading the message.
    ``zh`` is the same message in Chinese, written where the error is made from the same facts (the UIs
    show the trainee's language)."""

    def __init__(self, message: str, *params: str, zh: str) -> None:
        super().__init__(message)
        self.params = params
        self.zh = zh

    def text(self, lang: str) -> str:
        return self.zh if lang == "zh" else str(self)


class ParamValueError(ValueError):
    """A parameter's ``parse`` refused a value: what it must be, in English and (``zh``) Chinese."""

    def __init__(self, message: str, zh: str) -> None:
        super().__init__(message)
        self.zh = zh


def flag_of(name: str) -> str:
    """The CLI flag of a parameter: ``buffer_num`` -> ``--buffer-num``."""
    return "--" + name.replace("_", "-")


class ScenarioFailed(RuntimeError):
    """A host API call of the scenario returned an ACL error; ``code`` is it, the message says why (``zh``: the
    same in Chinese)."""

    def __init__(self, message: str, code: int, zh: str) -> None:
        super().__init__(message)
        self.code = code
        self.zh = zh


@dataclass(frozen=True)
class Param:
    name: str
    type: type
    default: Any
    help: str
    help_zh: str  # the same help in Chinese (the UIs show the trainee's language)
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple | None = None
    parse: Callable[[Any], Any] | None = None  # turns the raw value into the scenario's value, or raises
    auto: str = ""  # what a default of None means: "aic_cores", "aiv_blocks", "tiling" (the UIs say it in words)

    @property
    def flag(self) -> str:
        return flag_of(self.name)

    def check(self, value: Any) -> Any:
        flag = self.flag
        if self.type is bool:
            return bool(value)
        if value is None and self.default is None:
            return None  # optional and not given
        if self.parse is not None:
            try:
                return self.parse(value)
            except (TypeError, ValueError) as exc:
                zh = exc.zh if isinstance(exc, ParamValueError) else "的值无法识别"
                raise ScenarioArgError(
                    f"{flag} {exc}, got {value!r}", self.name, zh=f"{flag} {zh}，收到 {value!r}"
                ) from None
        if self.choices is not None and value not in self.choices:
            choices = ", ".join(map(str, self.choices))
            raise ScenarioArgError(
                f"{flag} must be one of {choices}, got {value!r}",
                self.name,
                zh=f"{flag} 必须是 {choices} 之一，收到 {value!r}",
            )
        if self.type in (int, float):
            kinds, noun = (int, "an integer") if self.type is int else ((int, float), "a number")
            noun_zh = "整数" if self.type is int else "数字"
            if isinstance(value, bool) or not isinstance(value, kinds) or value != value:  # noqa: PLR0124 (NaN)
                raise ScenarioArgError(
                    f"{flag} must be {noun}, got {value!r}", self.name, zh=f"{flag} 必须是{noun_zh}，收到 {value!r}"
                )
            if self.minimum is not None and value < self.minimum:
                raise ScenarioArgError(
                    f"{flag} must be >= {self.minimum}, got {value}",
                    self.name,
                    zh=f"{flag} 必须 >= {self.minimum}，收到 {value}",
                )
            if self.maximum is not None and value > self.maximum:
                raise ScenarioArgError(
                    f"{flag} must be <= {self.maximum}, got {value}",
                    self.name,
                    zh=f"{flag} 必须 <= {self.maximum}，收到 {value}",
                )
        return value


@dataclass(frozen=True)
class Outcome:
    correct: bool | None  # None when numerics were skipped, or the results not compared (``Simulation.verify``)
    details: dict = field(default_factory=dict)
    # the named input arrays the run drew (what ``Scenario.inputs`` gives for its parameters), when it drew them:
    # whoever replays the run right after it (the web job that renders its first views) need not draw them again
    inputs: dict | None = field(default=None, repr=False, compare=False)


# the seed of a scenario's seeded inputs: the same parameter in every scenario that draws them
SEED = Param("seed", int, 0, "random seed of the inputs", help_zh="输入数据的随机种子", minimum=0, maximum=SEED_MAX)


@dataclass(frozen=True)
class NumericSize:
    """How big a run's real arithmetic is, in the unit a server limits it by: ``unit`` is ``"macs"`` (a
    matmul's m x n x k multiply-adds) or ``"elements"`` (a vector's length); ``params`` set it."""

    unit: str
    value: int
    params: tuple[str, ...]


@dataclass(frozen=True)
class Scenario:
    name: str
    summary: str
    summary_zh: str  # the same summary in Chinese
    params: tuple[Param, ...]
    run: Callable[..., Outcome]
    cost: Callable[[Profile, dict, bool], Cost]  # what a run will need, estimated before it runs
    check: Callable[[Profile, dict], None] = lambda profile, values: None
    report: Callable[[Any], dict] | None = None  # extra summary keys computed from the finished RunResult
    # the named input arrays the run copies to the device (seeded: the same values every time), so a replay
    # can show the numbers in any tile, also of timing-only runs and of runs rebuilt from storage
    inputs: Callable[[dict], dict] | None = None
    # the size of the run's numerics (None: small whatever the parameters), which a server caps
    numeric_size: Callable[[dict], NumericSize] | None = None

    def validate(self, profile: Profile, values: dict) -> dict:
        out = {}
        for p in self.params:
            out[p.name] = p.check(values.get(p.name, p.default))
        self.check(profile, out)
        return out

    def estimate(self, profile: Profile, values: dict, numerics: bool) -> Cost:
        """The cost of a run with validated ``values`` (:mod:`.cost`); nothing is simulated."""
        return self.cost(profile, values, numerics)


def registry() -> dict[str, Scenario]:
    """All scenarios by name (built on each call: no module-level state)."""
    from . import debug_demo, dynamic_shapes, host_lifecycle, kernels, pipeline

    scenarios = [host_lifecycle.SCENARIO, pipeline.SCENARIO, *kernels.SCENARIOS, debug_demo.SCENARIO]
    scenarios.append(dynamic_shapes.SCENARIO)
    return {s.name: s for s in scenarios}
