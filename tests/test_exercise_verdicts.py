"""The browser's verdict is ``ascendsim lesson check``'s: for the reference, the stub and three broken
submissions of every lesson, the web's job path (:meth:`app.web.runs.Runs.check`, what Run & check calls) and
the command line (``main(["lesson", "check", N, "--file", F, "--json"])``) give the same verdict, score, state
of every criterion and error line; and the page's verdict view shows that verdict."""

from __future__ import annotations

import contextlib
import io
import json
import os
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from app.cli import main
from app.web.exercise import grade_doc, verdict_view
from app.web.runs import Runs
from lessons.catalog import lessons
from lessons.sandbox import missing

pytestmark = pytest.mark.slow


def _submissions(lesson) -> dict[str, str]:
    ref = lesson.solution_file.read_text(encoding="utf-8")
    return {
        "reference": ref,
        "stub": lesson.exercise_file.read_text(encoding="utf-8"),
        "syntax": ref + "\n\ndef broken(:\n    pass\n",
        "exception": ref + "\n\nraise RuntimeError('a trainee bug')\n",
        "early_exit": "import sys\nsys.exit(3)\n" + ref,
    }


def _cli(number: int, path) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["lesson", "check", str(number), "--file", str(path), "--json"])
    doc = json.loads(out.getvalue())
    assert code == (0 if doc["verdict"] == "PASS" else 1)
    return doc


def _states(criteria: list[dict]) -> dict[str, str]:
    return {c["id"]: "NOT_RUN" if c["passed"] is None else ("PASS" if c["passed"] else "FAIL") for c in criteria}


@pytest.mark.parametrize("lesson", lessons(), ids=lambda x: f"lesson{x.number}")
def test_the_browsers_verdict_equals_lesson_checks(lesson, tmp_path):
    if why := missing():
        pytest.fail(why) if os.environ.get("CI") == "true" else pytest.skip(why)
    runs = Runs(tmp_path / "runs")
    cases = _submissions(lesson)

    paths = {}
    for name, code in cases.items():
        paths[name] = tmp_path / name / lesson.exercise_file.name
        paths[name].parent.mkdir()
        paths[name].write_text(code, encoding="utf-8")
    with ThreadPoolExecutor(1) as pool:  # the web's path beside the command line's (stdout is the CLI's alone)
        web = {
            n: pool.submit(runs.check, lesson.number, c, "en", uuid.uuid4().hex, lambda *_: None)
            for n, c in cases.items()
        }
        cli = {name: _cli(lesson.number, path) for name, path in paths.items()}
        results = [(name, *web[name].result(), cli[name]) for name in cases]
    seen = {}
    for name, web, run, cli in results:
        seen[name] = web.verdict
        assert (web.verdict, web.score) == (cli["verdict"], cli["score"]), name
        assert _states([c.to_dict() for c in web.criteria]) == _states(cli["criteria"]), name
        assert web.line == cli.get("line"), name
        doc = grade_doc(web, run, runs)
        head, criteria, _output = verdict_view(doc, "en")
        assert head.children[0].children == cli["verdict"] and len(criteria) == len(cli["criteria"])
        assert [c.to_dict() for c in web.criteria_in["zh"]] != [c.to_dict() for c in web.criteria_in["en"]]
    assert seen["reference"] == "PASS" and seen["stub"] == "FAIL", seen
    assert (seen["syntax"], seen["exception"], seen["early_exit"]) == ("SYNTAX_ERROR", "RUNTIME_ERROR", "EARLY_EXIT")
