"""What a browser sends, validated: a playground request and the player's breakpoints.

Whatever a page sends may be anything (a tampered page, a typed request). A value the server will not use is
refused with :class:`~app.web.errors.RunRequestError`, whose message names the field, the limit and the value in
English and in Chinese (the page shows the trainee's language); never a Python error's own words.
"""

from __future__ import annotations

from app.present import Breakpoint
from app.server import limits
from app.server.store import RunSpec
from engine.profiles.profile import DEFAULT_PROFILE, ProfileError, list_profiles, load_profile
from engine.scenarios import Scenario, ScenarioArgError, registry
from engine.scenarios.cost import Cost
from engine.trace import Kind
from engine.trace.locations import SourceLine

from .errors import RunRequestError, shown
from .loaded import Loaded


def _field(message: str, params) -> str:
    """A scenario message names its CLI flags (``--buffer-num``); the page names the fields (``buffer_num``)."""
    for p in params:
        message = message.replace(p.flag, p.name)
    return message


def _coerce(p, raw):
    """A form value (number, text, bool or empty) as the parameter's type, or ScenarioArgError."""
    if p.type is bool:
        return bool(raw)
    if raw is None or raw == "":
        if p.default is None:
            return None
        raise ScenarioArgError(
            f"{p.name} is required (default {p.default}), got nothing",
            p.name,
            zh=f"{p.name} 不能为空（默认值 {p.default}），收到的是空值",
        )
    if p.type is int:
        if isinstance(raw, float) and raw.is_integer():
            return int(raw)
        if isinstance(raw, str):
            try:
                return int(raw.strip())
            except ValueError:
                raise ScenarioArgError(
                    f"{p.name} must be an integer, got {shown(raw)}",
                    p.name,
                    zh=f"{p.name} 必须是整数，收到 {shown(raw)}",
                ) from None
    if p.type is float and isinstance(raw, str):
        try:
            return float(raw.strip())
        except ValueError:
            raise ScenarioArgError(
                f"{p.name} must be a number, got {shown(raw)}", p.name, zh=f"{p.name} 必须是数字，收到 {shown(raw)}"
            ) from None
    if p.type is str and not isinstance(raw, str):
        raise ScenarioArgError(
            f"{p.name} must be text, got {shown(raw)}", p.name, zh=f"{p.name} 必须是文本，收到 {shown(raw)}"
        )
    return raw


def validate_request(request: dict) -> tuple[RunSpec, Scenario, Cost]:
    """A playground request as a :class:`RunSpec` (raises :class:`RunRequestError` naming the field)."""
    scenarios = registry()
    name = request.get("scenario")
    if not isinstance(name, str) or name not in scenarios:
        choices = ", ".join(scenarios)
        raise RunRequestError(
            f"scenario must be one of {choices}, got {shown(name)}", f"场景必须是 {choices} 之一，收到 {shown(name)}"
        )
    scenario = scenarios[name]
    profile_name = request.get("profile") or DEFAULT_PROFILE
    if not isinstance(profile_name, str) or profile_name not in list_profiles():
        choices = ", ".join(list_profiles())
        raise RunRequestError(
            f"profile must be one of {choices}, got {shown(profile_name)}",
            f"硬件配置必须是 {choices} 之一，收到 {shown(profile_name)}",
        )
    try:
        profile = load_profile(profile_name)
    except ProfileError as exc:
        raise RunRequestError(f"profile: {exc}", f"硬件配置 {profile_name} 的描述文件有误，无法加载") from None
    raw = request.get("params") or {}
    if not isinstance(raw, dict):
        raise RunRequestError(
            f"params must be a mapping of names to values, got {shown(raw)}",
            f"参数必须是名称到值的映射，收到 {shown(raw)}",
        )
    unknown = sorted(set(raw) - {p.name for p in scenario.params})
    if unknown:
        names = ", ".join(p.name for p in scenario.params)
        raise RunRequestError(
            f"{shown(unknown[0])} is not a parameter of {name} ({names})",
            f"{shown(unknown[0])} 不是 {name} 的参数（{names}）",
        )
    numerics = request.get("numerics", True)
    if not isinstance(numerics, bool):
        raise RunRequestError(
            f"numerics must be true or false, got {shown(numerics)}",
            f"numerics 必须是 true 或 false，收到 {shown(numerics)}",
        )
    try:
        values = {p.name: _coerce(p, raw.get(p.name, p.default)) for p in scenario.params}
        values = scenario.validate(profile, values)
        cost = limits.check(scenario, profile, values, numerics)
    except ScenarioArgError as exc:  # every refusal names its parameters (exc.params)
        named = {p.name: p for p in scenario.params}
        at_fault = [named[n] for n in exc.params if n in named]
        raise RunRequestError(_field(str(exc), at_fault), _field(exc.zh, at_fault)) from None
    return RunSpec.of(name, profile_name, values, numerics), scenario, cost


def breakpoints_of(items, loaded: Loaded) -> tuple[Breakpoint, ...]:
    """Breakpoints a browser sent, validated (an invalid one raises RunRequestError)."""
    out = []
    if not isinstance(items, list | tuple | type(None)):
        raise RunRequestError(f"breakpoints must be a list, got {shown(items)}", f"断点必须是列表，收到 {shown(items)}")
    for item in items or []:
        if not isinstance(item, dict):
            raise RunRequestError(
                f"a breakpoint must be a mapping, got {shown(item)}", f"断点必须是映射，收到 {shown(item)}"
            )
        kind, core = item.get("kind") or None, item.get("core") or None
        src, mark = item.get("src") or None, item.get("mark")
        if kind is not None and (not isinstance(kind, str) or kind not in Kind.__members__):
            kinds = ", ".join(Kind.__members__)
            raise RunRequestError(
                f"breakpoint kind must be one of {kinds}, got {shown(kind)}",
                f"断点的事件类型必须是 {kinds} 之一，收到 {shown(kind)}",
            )
        if core is not None:
            ref = loaded.core(core)
            if ref is None:
                cores = ", ".join(loaded.outline["cores"])
                raise RunRequestError(
                    f"breakpoint core must be one of {cores}, got {shown(core)}",
                    f"断点的核必须是 {cores} 之一，收到 {shown(core)}",
                )
            core = ref
        if src is not None:
            wrong = not isinstance(src, str) or len(src) > 300
            try:
                src = None if wrong else SourceLine.parse(src)  # what a person typed
            except ValueError:
                wrong = True
            if wrong:
                raise RunRequestError(
                    f"breakpoint source line must be file:line such as kernels/add.py:42 (at most 300 characters), "
                    f"got {shown(item.get('src'))}",
                    f"断点的源码行必须是“文件:行号”，例如 kernels/add.py:42（最多 300 个字符），"
                    f"收到 {shown(item.get('src'))}",
                )
        if mark is not None and (not isinstance(mark, str) or len(mark) > 100):
            raise RunRequestError(
                f"breakpoint mark must be text of at most 100 characters, got {shown(mark)}",
                f"断点标记必须是最多 100 个字符的文本，收到 {shown(mark)}",
            )
        if kind is None and core is None and src is None and mark is None:
            continue
        out.append(Breakpoint(kind=kind, core=core, src=src, mark=mark))
    return tuple(out)


__all__ = ("breakpoints_of", "validate_request")
