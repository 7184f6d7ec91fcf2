"""The curriculum: one folder per lesson under ``lessons/``, described by its ``lesson.toml``.

A lesson folder ``lNN_slug/`` holds:

* ``lesson.toml`` — title, summary and exercise text in English and Chinese; its ``level`` on the path
  (:data:`LEVELS`); the exercise's ``[objective]`` (a short statement in both languages and the ``figures``
  of :data:`lessons.costs.FIGURES` the check compares with the reference solution's); the steps (each a
  selector into the scenario's run and its text in both languages, and optionally a diagnosis,
  ``diagnosis_en`` / ``diagnosis_zh``, that the views show only once revealed: :mod:`lessons.progress`);
  the predict-then-run questions; the criteria of the check with their titles and hints; the kinds of its
  hidden cases (``[hidden.<kind>]``, :mod:`lessons.hidden`); optional limits and settings;
* ``scenario.py`` — ``scenario(sim)``, the run the lesson plays (its outcome: ``correct``);
  optionally ``scenario_inputs()``, the arrays it copies to the device by the names it gives them
  with ``sim.name_tensor``, so the views show tile values; and ``truth_<question>()`` for each
  question, answered by running the simulator; and ``draw_<kind>(rng)`` for each hidden case kind;
* ``exercise.py`` — the stub a trainee starts from (``# TODO`` where they write);
* ``solution.py`` — the reference solution;
* ``drive.py`` — ``collect(exercise, rec)``: runs the trainee's code on seeded inputs in the sandboxed
  child, on simulations from ``rec.simulation(name)`` whose settings are ``RUNS[name]``, and records
  the program (``rec.run``), the trainee's answers (``rec.value``) and the results the device computed
  (``rec.output``), on the visible cases and on each hidden case of ``rec.hidden``; it never judges.
  Optionally ``LIBRARY`` (the engine kernels and lesson services the program may use), ``observer(name,
  sim)``, called by the grader on its replay's simulation, and ``hidden_run(case)``, a hidden case's settings;
* ``check.py`` — ``judge(data, ctx)``: the criteria, computed in the grader from its own replay
  (``REFERENCES``: the scenario's baselines it needs); with hidden cases, ``judge_hidden(data, ctx, case)``.

Everything a trainee reads exists in English (``en``) and Chinese (``zh``); :func:`load` refuses a
lesson that lacks either.
"""

from __future__ import annotations

import importlib
import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType

from engine.analysis.rules import RULES

from .hidden import MAX_PER_KIND, Kind
from .selectors import SelectorError, validate

LESSONS_DIR = Path(__file__).resolve().parent
LANGS = ("en", "zh")
_FOLDER = re.compile(r"^l(\d\d)_[a-z0-9_]+$")
_FILES = ("lesson.toml", "scenario.py", "exercise.py", "solution.py", "drive.py", "check.py")
LEVELS = MappingProxyType(  # the seed's path (section 7.3): 初学者路径, 进阶开发者路径, 专家级路径
    {
        "beginner": {"en": "beginner", "zh": "初学者"},
        "intermediate": {"en": "intermediate", "zh": "进阶"},
        "expert": {"en": "expert", "zh": "专家"},
    }
)
_KIND = re.compile(r"^[a-z][a-z0-9_]{0,31}$")


class LessonError(ValueError):
    """A lesson folder is incomplete or its lesson.toml is malformed (the message names the field)."""


@dataclass(frozen=True)
class Limits:
    """What one graded run of a submission may use."""

    wall_s: float = 30.0  # wall-clock seconds for the child process
    cpu_s: int = 60  # CPU seconds (RLIMIT_CPU)
    memory_mb: int = 1024  # address space (RLIMIT_AS)
    output_kb: int = 256  # bytes the program may print (RLIMIT_FSIZE on its stdout/stderr files)

    def replace(self, **changes) -> Limits:
        return Limits(**{**self.__dict__, **{k: v for k, v in changes.items() if v is not None}})


@dataclass(frozen=True)
class Step:
    selector: dict
    text: dict  # lang -> text
    view: str = "timeline"
    diagnosis: dict | None = None  # lang -> what the step's symptom means: shown once revealed (lessons.progress)


@dataclass(frozen=True)
class Question:
    id: str
    text: dict
    choices: tuple[str, ...]  # the answers as a prediction gives them (compared with the simulator's)
    explain: dict  # lang -> what the run shows, told after the answer
    labels: dict = field(default_factory=dict)  # lang -> the choices as a trainee reads them

    def label(self, choice: str, lang: str) -> str:
        """``choice`` as it reads in ``lang`` (the choice itself if it is not one of this question's)."""
        names = self.labels.get(lang) or self.choices
        return names[self.choices.index(choice)] if choice in self.choices else choice


@dataclass(frozen=True)
class CriterionMeta:
    id: str
    title: dict
    hint: dict
    integrity: bool = False  # the work must have been done on the simulated device
    correctness: bool = False  # the numbers


@dataclass(frozen=True)
class Objective:
    """What the exercise must achieve, in a line, and the figures the check compares with the reference's."""

    text: dict  # lang -> the objective
    figures: tuple[str, ...] = ()  # ids of lessons.costs.FIGURES


@dataclass(frozen=True)
class Lesson:
    number: int
    slug: str
    path: Path
    title: dict
    summary: dict
    exercise_text: dict
    level: str
    objective: Objective
    steps: tuple[Step, ...]
    questions: tuple[Question, ...]
    criteria: MappingProxyType
    limits: Limits
    settings: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    quiet_rules: tuple[str, ...] = ()  # the profiler's rules that do not apply to the lesson's chosen set-up
    hidden: tuple[Kind, ...] = ()  # the kinds of the check's hidden cases (lessons.hidden)

    def level_name(self, lang: str) -> str:
        return LEVELS[self.level][lang]

    @property
    def package(self) -> str:
        return f"lessons.{self.path.name}"

    @property
    def exercise_file(self) -> Path:
        return self.path / "exercise.py"

    @property
    def solution_file(self) -> Path:
        return self.path / "solution.py"

    def module(self, name: str):
        """One of the lesson's modules: ``scenario``, ``drive`` or ``check``."""
        return importlib.import_module(f"{self.package}.{name}")

    def scenario_inputs(self) -> dict | None:
        """The arrays the lesson's scenario copies to the device, by the names it gives the tensors (for
        tile values; None when the scenario names none)."""
        make = getattr(self.module("scenario"), "scenario_inputs", None)
        return make() if make is not None else None


def _bilingual(doc: dict, key: str, where: str) -> dict:
    value = doc.get(key)
    if not isinstance(value, dict):
        raise LessonError(f"{where}: {key} must be a table with en and zh, got {value!r}")
    return _langs(value, f"{where}.{key}")


def _langs(value: dict, where: str, prefix: str = "") -> dict:
    out = {}
    for lang in LANGS:
        text = value.get(prefix + lang)
        if not isinstance(text, str) or not text.strip():
            raise LessonError(f"{where}: {prefix + lang} is missing or empty")
        out[lang] = text.strip()
    return out


def load(path: Path) -> Lesson:
    """Read and validate one lesson folder."""
    where = path.name
    m = _FOLDER.match(path.name)
    if not m:
        raise LessonError(f"{where}: a lesson folder is named lNN_slug")
    for name in _FILES:
        if not (path / name).is_file():
            raise LessonError(f"{where}: {name} is missing")
    with open(path / "lesson.toml", "rb") as fh:
        try:
            doc = tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise LessonError(f"{where}/lesson.toml: {exc}") from None
    number = doc.get("number")
    if number != int(m.group(1)):
        raise LessonError(f"{where}: number must be {int(m.group(1))} (the folder's), got {number!r}")
    steps = []
    for i, s in enumerate(doc.get("steps", [])):
        sw = f"{where}.steps[{i}]"
        try:
            validate(s.get("selector"))
        except SelectorError as exc:
            raise LessonError(f"{sw}.selector: {exc}") from None
        diagnosis = _langs(s, sw, "diagnosis_") if ("diagnosis_en" in s or "diagnosis_zh" in s) else None
        steps.append(Step(dict(s["selector"]), _langs(s, sw), s.get("view", "timeline"), diagnosis))
    if not steps:
        raise LessonError(f"{where}: a lesson needs at least one step")
    questions = []
    for i, q in enumerate(doc.get("questions", [])):
        qw = f"{where}.questions[{i}]"
        choices = tuple(q.get("choices", ()))
        if not q.get("id") or len(choices) < 2:
            raise LessonError(f"{qw}: a question needs an id and at least two choices")
        zh = tuple(q.get("choices_zh", ()))
        if len(zh) != len(choices):
            raise LessonError(f"{qw}: choices_zh must translate each of the {len(choices)} choices, got {len(zh)}")
        labels = {"en": choices, "zh": zh}
        questions.append(Question(q["id"], _langs(q, qw), choices, _langs(q, qw, "explain_"), labels))
    criteria = {}
    for ident, c in doc.get("criteria", {}).items():
        cw = f"{where}.criteria.{ident}"
        criteria[ident] = CriterionMeta(
            ident, _langs(c, cw), _langs(c, cw, "hint_"), bool(c.get("integrity")), bool(c.get("correctness"))
        )
    limits = Limits().replace(**{k: v for k, v in doc.get("limits", {}).items() if k in Limits.__dataclass_fields__})
    quiet = doc.get("quiet_rules", [])
    level = doc.get("level")
    if level not in LEVELS:
        raise LessonError(f"{where}: level must be one of {', '.join(LEVELS)}, got {level!r}")
    if not isinstance(quiet, list) or not all(isinstance(x, str) and x in RULES for x in quiet):
        raise LessonError(f"{where}: quiet_rules must list rules among {', '.join(RULES)}, got {quiet!r}")
    return Lesson(
        number=number,
        slug=path.name[4:],
        path=path,
        title=_bilingual(doc, "title", where),
        summary=_bilingual(doc, "summary", where),
        exercise_text=_bilingual(doc, "exercise", where),
        level=level,
        objective=_objective(doc, where),
        steps=tuple(steps),
        questions=tuple(questions),
        criteria=MappingProxyType(criteria),
        limits=limits,
        settings=MappingProxyType(dict(doc.get("settings", {}))),
        quiet_rules=tuple(quiet),
        hidden=_hidden(doc, where),
    )


def _objective(doc: dict, where: str) -> Objective:
    from .costs import FIGURES

    text = _bilingual(doc, "objective", where)
    figures = doc["objective"].get("figures", [])
    if not isinstance(figures, list) or not all(isinstance(f, str) and f in FIGURES for f in figures):
        raise LessonError(f"{where}: objective.figures must list figures among {', '.join(FIGURES)}, got {figures!r}")
    return Objective(text, tuple(figures))


def _hidden(doc: dict, where: str) -> tuple[Kind, ...]:
    table = doc.get("hidden", {})
    if not isinstance(table, dict):
        raise LessonError(f"{where}: hidden must be a table of kinds ([hidden.<kind>]), got {table!r}")
    kinds = []
    for ident, k in table.items():
        kw = f"{where}.hidden.{ident}"
        if not _KIND.match(ident) or not isinstance(k, dict):
            raise LessonError(f"{kw}: a kind is a table named in lower case (a-z, 0-9, _; at most 32), got {ident!r}")
        count = k.get("count", 1)
        if type(count) is not int or not 1 <= count <= MAX_PER_KIND:
            raise LessonError(f"{kw}.count must be an integer from 1 to {MAX_PER_KIND}, got {count!r}")
        hint = _langs(k, kw, "hint_") if ("hint_en" in k or "hint_zh" in k) else None
        kinds.append(Kind(ident, _langs(k, kw), count, hint))
    return tuple(kinds)


@cache
def lessons() -> tuple[Lesson, ...]:
    """Every lesson, by number (read once per process)."""
    found = [load(p) for p in sorted(LESSONS_DIR.iterdir()) if p.is_dir() and _FOLDER.match(p.name)]
    return tuple(sorted(found, key=lambda lesson: lesson.number))


def numbers() -> list[int]:
    return [lesson.number for lesson in lessons()]


def get(number: int) -> Lesson:
    for lesson in lessons():
        if lesson.number == number:
            return lesson
    raise LessonError(f"lesson must be one of {', '.join(map(str, numbers()))}, got {number!r}")
