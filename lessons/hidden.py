"""Hidden cases: what every check also runs, on values drawn when it grades and never shown to the trainee.

A lesson declares the KINDS of its hidden cases in ``lesson.toml`` (what a trainee may read: the kind's name)

    [hidden.tail]
    en = "a share per core that is not a whole number of tiles"
    zh = "每个核分到的元素数不是分块大小的整数倍"
    count = 1            # optional: cases of this kind per check (1 to 4; keep the check fast)
    hint_en = "..."      # optional, with hint_zh: shown, instead of the criterion's hint, when a case of it fails

and in ``scenario.py`` how to draw one case of each kind: ``draw_<kind>(rng) -> dict``, the case's parameters as
plain JSON values (numbers, strings, lists), from the ``numpy.random.Generator`` it is given and nothing else.

How a case travels (nothing the child says decides anything):

1. the grader draws the cases (:func:`draw`) from a fresh seed at grading time, or from an instructor's
   ``--hidden-seed``; each case is a :class:`Case`: the run it is recorded as (``hidden_1``, ...), its kind and
   its parameters;
2. they reach the child in its control line (:func:`encode`); the drive runs the trainee's code on each, as it
   does on the visible cases, recording a run named ``case.run``::

       for case in rec.hidden:
           with rec.hidden_case(case):       # what the code prints, and an exception's text, stay unseen
               sim = rec.simulation(case.run)
               ...                           # the case's values: case.params["total"], ...
               rec.run(case.run, sim)
               rec.output(f"y_{case.run}", y)

   A run's simulation settings are ``drive.hidden_run(case)`` (a dict of ``Simulation`` keywords, e.g. another
   profile), ``{}`` when the drive has none (:func:`runs`);
3. the grader replays the recording with the same runs, and ``check.judge_hidden(data, ctx, case)`` judges each
   case from the grader's own copy of it (``ctx.hidden``) and its own expected values: a list of criteria whose
   ids are among the lesson's;
4. :func:`merge` folds those into the visible criteria: a criterion right on the visible cases but wrong on a
   hidden one fails, naming only the case's kind (both languages). The case's own texts (values, shapes, the
   first wrong element) never leave the grader.
"""

from __future__ import annotations

import contextlib
import io
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from types import MappingProxyType

MAX_PER_KIND = 4  # cases of one kind per check
SEED_MAX = (1 << 63) - 1  # --hidden-seed: 0 .. SEED_MAX


@dataclass(frozen=True)
class Kind:
    """A kind of hidden case, as ``lesson.toml`` declares it: what a trainee may read about it."""

    id: str
    name: dict  # lang -> the kind in words ("a length that is not a multiple of 16 elements")
    count: int = 1
    hint: dict | None = None  # lang -> what to think of when a case of this kind fails (instead of the criterion's)


@dataclass(frozen=True)
class Case:
    """One drawn hidden case: the run it is recorded as, its kind, and its values (the grader's to know)."""

    run: str
    kind: str
    params: MappingProxyType


def new_seed() -> int:
    """A fresh seed for one grading (the operating system's randomness)."""
    return secrets.randbelow(SEED_MAX + 1)


def draw(lesson, seed: int | None = None) -> tuple[Case, ...]:
    """The lesson's hidden cases for one grading: ``count`` of each declared kind, in ``lesson.toml``'s order,
    drawn by the scenario's ``draw_<kind>(rng)`` from ``seed`` (None: a fresh one)."""
    import numpy as np

    if not lesson.hidden:
        return ()
    if seed is not None and not (isinstance(seed, int) and 0 <= seed <= SEED_MAX):
        raise ValueError(f"--hidden-seed must be an integer in [0, {SEED_MAX}], got {seed!r}")
    rng = np.random.default_rng(new_seed() if seed is None else seed)
    scenario = lesson.module("scenario")
    cases = []
    for kind in lesson.hidden:
        make = getattr(scenario, f"draw_{kind.id}")
        for _ in range(kind.count):
            params = make(rng)
            if not isinstance(params, dict):
                raise TypeError(f"{lesson.path.name}: draw_{kind.id} must return a dict, got {type(params).__name__}")
            cases.append(Case(f"hidden_{len(cases) + 1}", kind.id, MappingProxyType(_plain(params))))
    return tuple(cases)


def _plain(value):
    """``value`` as JSON data (numpy scalars as Python numbers), so every process sees the same case."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        return value.item()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(f"a hidden case's parameter must be plain data, got {type(value).__name__}")


def encode(cases) -> list[dict]:
    """The cases as JSON (the child's control line, the worker's request)."""
    return [{"run": c.run, "kind": c.kind, "params": dict(c.params)} for c in cases]


def decode(doc) -> tuple[Case, ...]:
    """:func:`encode`'s cases back (from the grader's own messages only)."""
    return tuple(Case(str(d["run"]), str(d["kind"]), MappingProxyType(dict(d["params"]))) for d in doc or ())


def runs(drive, cases) -> dict:
    """The simulations' settings of every run: the drive's visible ``RUNS`` and one per hidden case."""
    settings = getattr(drive, "hidden_run", None)
    out = dict(drive.RUNS)
    for case in cases:
        if case.run in out:
            raise ValueError(f"hidden run {case.run!r} is also a visible run of the lesson")
        out[case.run] = dict(settings(case)) if settings is not None else {}
    return out


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """What the code prints while a hidden case runs goes nowhere (it could show the case's values)."""
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        yield


# -- judging (in the grader) -----------------------------------------------------------------------------------
def kind_name(lesson, kind: str) -> dict:
    """The kind's name in both languages (its id if the lesson does not declare it)."""
    found = next((k for k in lesson.hidden if k.id == kind), None)
    return dict(found.name) if found is not None else {"en": kind, "zh": kind}


def concealed(criterion, case: Case, lesson):
    """``criterion`` as judged on a hidden case, as a trainee may read it: passed or not and the case's kind;
    nothing of what the check wrote about the case (its values, the first wrong element, a finding's text)."""
    from .checks import Criterion, bi

    name = kind_name(lesson, case.kind)
    if criterion.passed:
        yours = bi(f"right on a hidden case: {name['en']}", f"在隐藏用例上正确：{name['zh']}")
    else:
        yours = bi(f"wrong on a hidden case: {name['en']}", f"在隐藏用例上出错：{name['zh']}")
    expected = bi("right on the visible cases and on every hidden case", "在可见用例和所有隐藏用例上都正确")
    detail = bi(
        "hidden cases are drawn afresh at every check; their values are never shown",
        "隐藏用例在每次检查时重新抽取，其具体数值从不显示",
    )
    return Criterion(criterion.id, bool(criterion.passed), yours, expected, detail, criterion.off_device, case.kind)


def merge(lesson, visible: list, judged: list[tuple[Case, list]]) -> tuple[list, list[dict]]:
    """The criteria a trainee sees: each visible criterion, replaced by its concealed failure when it passed on the
    visible cases but failed on a hidden one (the first such case, in drawing order); and the hidden cases' outcome
    by kind, ``[{"kind", "passed"}]`` (a kind passes when every criterion passed on each of its cases)."""
    by_id = {c.id: i for i, c in enumerate(visible)}
    out = list(visible)
    passed: dict[str, bool] = {}
    for case, criteria in judged:
        ok = True
        for c in criteria:
            ok = ok and bool(c.passed)
            at = by_id.get(c.id)
            if at is None:  # a criterion only a hidden case judges
                by_id[c.id] = len(out)
                out.append(concealed(c, case, lesson))
            elif not c.passed and out[at].passed:
                out[at] = concealed(c, case, lesson)
        passed[case.kind] = passed.get(case.kind, True) and ok
    return out, [{"kind": kind, "passed": ok} for kind, ok in passed.items()]


__all__ = (
    "MAX_PER_KIND",
    "SEED_MAX",
    "Case",
    "Kind",
    "concealed",
    "decode",
    "draw",
    "encode",
    "kind_name",
    "merge",
    "new_seed",
    "quiet",
    "runs",
)
