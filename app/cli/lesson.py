"""``ascendsim lesson ...`` and ``ascendsim grade``: the curriculum from the command line.

* ``lesson list [--json]``, ``lesson show N [--lang en|zh] [--json | --cpp] [--dir DIR] [--reveal]``
  (``--cpp``: the lesson's whole program in C++, Ascend C and ACL, generated from its Python by the mapping
  table of :mod:`app.present.cpp`; a step's diagnosis shows after the first ``lesson check`` of the exercise
  in DIR, or with ``--reveal``);
* ``lesson start N [--dir DIR]`` copies the exercise stub to a work folder (never over an existing file);
* ``lesson check N [--file PATH] [--json] [--junit FILE] [--lang]`` grades one file; exit code 0 only
  when every criterion passes;
* ``grade SUBMISSIONS_DIR --lesson N [--jobs J] [--shard K/M] [--out report.csv|report.json]
  [--junit FILE] [--hidden-seed S]`` grades a class, one row per submission; ``grade --merge A.json B.json
  --out all.json`` merges shard reports. Exit code 0 only when every submission passes.

Every check also runs the lesson's hidden cases (:mod:`lessons.hidden`), drawn afresh for each submission.
``--hidden-seed S`` (an instructor's: ``grade`` lists it, ``lesson check`` takes it without listing it in
``--help``) draws them from ``S`` instead, to reproduce a grading; no output ever shows a seed or a case's
values, only the kinds of case.

Bad arguments raise click usage errors: ``app.cli.main`` prints them as one line and exits with 2.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click

from .usage import OutputFile, SecondsIn, ValueChoice, fail, write_atomically

LANG = ValueChoice(("en", "zh"))
HIDDEN_SEED = click.IntRange(0, (1 << 63) - 1)  # lessons.hidden.SEED_MAX


def _lesson(number: int, flag: str = "N"):
    from lessons.catalog import LessonError, get

    try:
        return get(number)
    except LessonError as exc:
        fail(f"{flag}: {exc!s}")


def _default_dir(number: int) -> Path:
    return Path(f"ascendsim-lesson-{number:02d}")


@click.group("lesson")
def lesson() -> None:
    """The lessons: list, show, start an exercise, check it."""


@lesson.command("list")
@click.option("--json", "as_json", is_flag=True, help="print JSON")
def lesson_list(as_json: bool) -> None:
    """List the lessons."""
    from lessons.catalog import LEVELS, lessons

    rows = [
        {
            "number": ls.number,
            "slug": ls.slug,
            "title": ls.title,
            "level": ls.level,
            "level_name": dict(LEVELS[ls.level]),
            "objective": ls.objective.text,
            "steps": len(ls.steps),
            "questions": [q.id for q in ls.questions],
            "criteria": list(ls.criteria),
        }
        for ls in lessons()
    ]
    if as_json:
        click.echo(json.dumps(rows, ensure_ascii=False, indent=1))
        return
    width = max(len(r["title"]["en"]) for r in rows)
    for level, names in LEVELS.items():  # the seed's path (section 7.3), level by level
        click.echo(f"{names['en']} / {names['zh']}")
        for r in rows:
            if r["level"] == level:
                click.echo(f"  {r['number']:>2}  {r['title']['en']:<{width}}  {r['title']['zh']}")


@lesson.command("show")
@click.argument("number", metavar="N", type=int)
@click.option("--lang", type=LANG, default="en", show_default=True, help="language of the text")
@click.option("--json", "as_json", is_flag=True, help="print the lesson as JSON (both languages)")
@click.option(
    "--cpp",
    is_flag=True,
    help="print the lesson's whole program (its solution, kernel and host code) in C++ (Ascend C) instead",
)
@click.option("--dir", "folder", default=None, help="your work folder (default: ./ascendsim-lesson-NN)")
@click.option("--reveal", is_flag=True, help="show the steps' diagnoses now (else: after your first check)")
def lesson_show(number: int, lang: str, as_json: bool, cpp: bool, folder: str | None, reveal: bool) -> None:
    """Print lesson N: its steps, questions and exercise (--cpp: its whole program in C++). A step's diagnosis
    (lesson 10) shows once you have checked your exercise in the work folder, or with --reveal (remembered in
    the work folder)."""
    from lessons import progress
    from lessons.render import render_lesson

    ls = _lesson(number)
    if cpp:
        from app.present.cpp.view import lesson_program, program_text
        from app.present.walkthrough import run_lesson

        if as_json:
            fail("--cpp and --json exclude each other: --cpp prints C++ text")
        program = lesson_program(ls.number, ls.solution_file, run_lesson(ls).trace, lang)
        click.echo(program_text(program), nl=False)
        return
    work = Path(folder) if folder else _default_dir(number)
    if reveal:
        progress.reveal(number, work)
    revealed = reveal or progress.revealed(number, work) is not None
    if as_json:
        doc = {
            "number": ls.number,
            "slug": ls.slug,
            "title": ls.title,
            "summary": ls.summary,
            "exercise": ls.exercise_text,
            "level": ls.level,
            "objective": {"text": ls.objective.text, "figures": list(ls.objective.figures)},
            "hidden": [{"kind": k.id, "name": k.name} for k in ls.hidden],
            "steps": [
                {"selector": s.selector, "view": s.view, "text": s.text}
                | ({"diagnosis": s.diagnosis} if s.diagnosis and revealed else {})
                for s in ls.steps
            ],
            "questions": [
                {
                    "id": q.id,
                    "text": q.text,
                    "choices": list(q.choices),
                    "labels": {k: list(v) for k, v in q.labels.items()},
                }
                for q in ls.questions
            ],
            "criteria": {k: {"title": c.title, "hint": c.hint} for k, c in ls.criteria.items()},
        }
        click.echo(json.dumps(doc, ensure_ascii=False, indent=1))
        return
    click.echo(render_lesson(ls, lang, revealed))


@lesson.command("start")
@click.argument("number", metavar="N", type=int)
@click.option("--dir", "folder", default=None, help="work folder (default: ./ascendsim-lesson-NN)")
def lesson_start(number: int, folder: str | None) -> None:
    """Copy lesson N's exercise stub into a work folder (an existing file is never overwritten)."""
    ls = _lesson(number)
    target_dir = Path(folder) if folder else _default_dir(number)
    target = target_dir / "exercise.py"
    if target.exists():
        fail(f"--dir: {target} already exists; not overwriting it (choose another --dir)")
    if target_dir.exists() and not target_dir.is_dir():
        fail(f"--dir: {target_dir} is a file, not a folder")
    target_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ls.exercise_file, target)
    click.echo(f"wrote {target}: edit the # TODO parts, then run: ascendsim lesson check {number} --file {target}")


def _junit_cases(result) -> list[tuple[str, bool, str, str]]:
    if not result.criteria or all(c.passed is None for c in result.criteria):
        return [("submission", result.passed, result.verdict, "\n".join(result.messages))]
    cases = []
    for c in result.criteria:
        details = f"yours: {c.yours}\nexpected: {c.expected}\n{c.hint}".strip()
        cases.append((c.id, bool(c.passed), c.title, details))
    return cases


@lesson.command("check")
@click.argument("number", metavar="N", type=int)
@click.option("--file", "path", default=None, help="the exercise to check (default: ./ascendsim-lesson-NN/exercise.py)")
@click.option("--json", "as_json", is_flag=True, help="print the result as JSON")
@click.option(
    "--junit", "junit_path", type=OutputFile("report.xml"), default=None, help="also write a JUnit XML report"
)
@click.option("--lang", type=LANG, default="en", show_default=True, help="language of the report")
@click.option(
    "--timeout", type=SecondsIn(1, 3600), default=None, help="wall-time limit in seconds (default: the lesson's)"
)
@click.option("--hidden-seed", "hidden_seed", type=HIDDEN_SEED, default=None, hidden=True)  # an instructor's
def lesson_check(
    number: int, path: str | None, as_json: bool, junit_path: str | None, lang: str, timeout, hidden_seed
) -> int:
    """Check an exercise of lesson N; exit code 0 only when every criterion passes."""
    from app import kept_references
    from lessons.render import render_result
    from lessons.report import junit

    ls = _lesson(number)
    file = Path(path) if path else _default_dir(number) / "exercise.py"
    if not file.is_file():
        how = "" if path else f" (ascendsim lesson start {number} creates it)"
        fail(f"--file: {file} does not exist{how}")
    from lessons.sandbox import missing

    why = missing()
    if why:  # a trainee's own file on their own machine: run it anyway, and say so
        click.echo(f"note: {why}; your code runs unsandboxed", err=True)
    limits = ls.limits.replace(wall_s=timeout)
    result = kept_references.check(ls, file, lang, why is None, limits, hidden_seed)
    from lessons import progress

    progress.record_check(number, file.parent)  # a check reveals the steps' diagnoses (lessons.progress)
    if junit_path:
        _write(junit_path, junit(f"lesson {number}", _junit_cases(result), result.time_s))
    if as_json:
        doc = result.to_dict()
        doc["criteria"] = [c.to_dict() for c in result.criteria]
        doc["predictions"] = [p.to_dict() for p in result.predictions]
        doc["hidden"] = [h.to_dict() for h in result.hidden]
        doc["figures"] = result.figures
        doc["costs"] = result.costs
        doc["stdout"] = result.stdout
        click.echo(json.dumps(doc, ensure_ascii=False))
    else:
        click.echo(render_result(ls, result, lang))
    return 0 if result.passed else 1


def _parse_shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    parts = text.split("/")
    if len(parts) == 2 and all(p.isdigit() for p in parts):
        k, m = int(parts[0]), int(parts[1])
        if 1 <= k <= m:
            return k, m
    fail(f"--shard: must be K/M with 1 <= K <= M, got {text!r}")


@click.command("grade")
@click.argument("paths", nargs=-1, metavar="SUBMISSIONS_DIR | --merge REPORT.json...")
@click.option("--lesson", "number", type=int, default=None, help="the lesson the submissions answer")
@click.option("--jobs", type=click.IntRange(1, 64), default=1, show_default=True, help="submissions graded at once")
@click.option("--shard", default=None, help="grade only shard K of M (K/M, 1-based), e.g. for a CI matrix")
@click.option("--out", type=OutputFile("report.json"), default=None, help="write the report: .json or .csv")
@click.option(
    "--junit", "junit_path", type=OutputFile("report.xml"), default=None, help="also write a JUnit XML report"
)
@click.option("--lang", type=LANG, default="en", show_default=True, help="language of the messages")
@click.option("--timeout", type=SecondsIn(1, 3600), default=None, help="wall-time limit per submission (s)")
@click.option("--merge", is_flag=True, help="merge shard reports (JSON) given as PATHS into --out")
@click.option(
    "--hidden-seed",
    "hidden_seed",
    type=HIDDEN_SEED,
    default=None,
    help="draw every submission's hidden cases from this seed (the same cases for all, to reproduce a grading; "
    "default: fresh cases for each submission)",
)
@click.option(
    "--no-sandbox",
    "no_sandbox",
    is_flag=True,
    help="run submissions without bubblewrap (a trusted single user only; the report says so)",
)
def grade(
    paths: tuple[str, ...],
    number: int | None,
    jobs: int,
    shard: str | None,
    out: str | None,
    junit_path: str | None,
    lang: str,
    timeout: float | None,
    merge: bool,
    hidden_seed: int | None,
    no_sandbox: bool,
) -> int:
    """Grade every submission in SUBMISSIONS_DIR (each entry is one row: a sub-folder or .py file is graded,
    anything else is NO_SUBMISSION), or merge reports. Each submission runs in a bubblewrap sandbox."""
    from lessons import report

    if out and Path(out).suffix.lower() not in report.FORMATS:
        fail(f"--out: must end in .json or .csv, got {out!r}")
    if merge:
        if not paths:
            fail("--merge: give the shard reports to merge")
        if not out:
            fail("--out: --merge needs --out FILE (.json or .csv)")
        try:
            doc = report.merge([Path(p) for p in paths])
            _write(out, report.text(doc, Path(out)))
        except report.ReportError as exc:  # its message names the flag
            fail(str(exc))
        click.echo(f"merged {len(paths)} report(s): {doc['count']} submissions -> {out}")
        return 0 if all(r["verdict"] == "PASS" for r in doc["rows"]) else 1
    from lessons.grader import discover, grade_many
    from lessons.grader import shard as take_shard

    if len(paths) != 1:
        fail(f"SUBMISSIONS_DIR: give exactly one SUBMISSIONS_DIR, got {len(paths)}")
    folder = Path(paths[0])
    if not folder.is_dir():
        fail(f"SUBMISSIONS_DIR: {folder} is not a folder")
    if number is None:
        fail("--lesson: the lesson is required (--lesson N)")
    ls = _lesson(number, "--lesson")
    if not no_sandbox:
        from lessons.sandbox import missing

        why = missing()
        if why:
            fail(f"{why}; install it, or pass --no-sandbox to grade trusted code without it")
    picked = _parse_shard(shard)
    entries = discover(folder)
    if picked:
        entries = take_shard(entries, *picked)
    limits = ls.limits.replace(wall_s=timeout)
    results = grade_many(ls, entries, jobs, lang, limits, sandboxed=not no_sandbox, hidden_seed=hidden_seed)
    doc = report.document(ls.number, [r.to_dict() for r in results], shard)
    if out:
        _write(out, report.text(doc, Path(out)))
    if junit_path:
        cases = [(r.id, r.passed, r.verdict, "\n".join(r.messages)) for r in results]
        _write(junit_path, report.junit(f"lesson {ls.number}", cases, sum(r.time_s for r in results)))
    for r in results:
        click.echo(f"{r.id:<24} {r.verdict:<14} {r.score:>3}  {r.time_s:6.2f} s")
    passed = sum(r.passed for r in results)
    click.echo(f"{len(results)} submissions, {passed} passed" + (f" -> {out}" if out else ""))
    return 0 if passed == len(results) else 1


def _write(path: str, text: str) -> None:
    """A report file, written whole (UTF-8) or not at all."""
    with write_atomically(path, encoding="utf-8") as fh:
        fh.write(text)
