"""Lesson 10's steps show symptoms; their diagnoses appear only after the trainee's first check, or on request,
in the command line and the terminal app alike (the fact is kept beside the exercise: lessons.progress)."""

from __future__ import annotations

import json
import shutil

from app.cli import main
from lessons import catalog, progress
from tests.tui_helpers import drive, lesson, make_app, shown

L10 = catalog.get(10)
DIAGNOSED = [s for s in L10.steps if s.diagnosis]


def test_lesson_10_has_three_diagnosed_symptoms_in_both_languages():
    assert len(DIAGNOSED) == 3
    for step in DIAGNOSED:  # the symptom says what is seen; the bug is named only in the diagnosis
        assert {"en", "zh"} <= set(step.diagnosis) and step.diagnosis["en"] not in step.text["en"]
    words = " ".join(s.text["en"] for s in L10.steps).lower()
    assert not any(w in words for w in ("race", "deadlock", "bottleneck", "enqueue", "stream_wait_event"))


def test_progress_is_kept_beside_the_exercise(tmp_path):
    assert progress.revealed(10, tmp_path) is None
    progress.reveal(10, tmp_path)
    assert progress.revealed(10, tmp_path) == "request"
    progress.record_check(10, tmp_path)
    doc = json.loads((tmp_path / progress.FILE_NAME).read_text())
    assert doc == {"lessons": {"10": {"checks": 1, "revealed": "request"}}}
    (tmp_path / progress.FILE_NAME).write_text("{not json")  # a damaged file reveals nothing, and mends
    assert progress.revealed(10, tmp_path) is None
    progress.record_check(10, tmp_path)
    assert progress.revealed(10, tmp_path) == "check"
    assert progress.revealed(10, tmp_path / "missing") is None
    progress.reveal(10, tmp_path / "missing")  # no work folder: nothing is written
    assert not (tmp_path / "missing").exists()


def test_the_cli_shows_diagnoses_after_the_first_check_or_on_request(tmp_path, monkeypatch, capsys):
    def _show(*args) -> str:
        assert main(["lesson", "show", "10", *args]) == 0
        return capsys.readouterr().out

    work = tmp_path / "ascendsim-lesson-10"
    hidden = _show("--dir", str(work))
    assert "diagnoses of 3 steps are hidden" in hidden
    assert all(s.diagnosis["en"].splitlines()[0] not in hidden for s in DIAGNOSED)
    assert "-- diagnosis --" in _show("--dir", str(work), "--reveal") and not work.exists()
    zh = _show("--dir", str(work), "--lang", "zh", "--json")
    assert not any(
        "diagnosis" in step for step in json.loads(zh)["steps"]
    )  # --reveal without a work folder keeps nothing
    monkeypatch.chdir(tmp_path)
    assert main(["lesson", "start", "10"]) == 0
    assert main(["lesson", "check", "10"]) == 1  # the program as given still misbehaves
    assert "Verdict: FAIL" in capsys.readouterr().out
    after = _show()
    assert all(s.diagnosis["en"].splitlines()[0] in after for s in DIAGNOSED) and "are hidden until" not in after
    doc = json.loads(_show("--lang", "zh", "--json"))
    assert [bool(s.get("diagnosis")) for s in doc["steps"]] == [bool(s.diagnosis) for s in L10.steps]


def test_the_tui_shows_the_diagnosis_on_request_and_remembers_it(tmp_path):
    file = tmp_path / "exercise.py"
    shutil.copy(L10.exercise_file, file)
    out = {}

    async def script(pilot):
        app = pilot.app
        await pilot.press("n")  # the app opens on the first lesson step: the next one is the first symptom
        await pilot.pause()
        out["stop"] = app.stop
        out["before"] = shown(app, "narration")
        out["can_reveal"] = app.check_action("reveal", ())
        await pilot.press("D")
        await pilot.pause()
        out["after"] = shown(app, "narration")
        out["can_reveal_again"] = app.check_action("reveal", ())

    drive(make_app(lesson(10), exercise=file), script, size=(120, 40))
    first = L10.steps[out["stop"]].diagnosis["en"].split()[:3]
    assert "appears after your first check" in out["before"] and " ".join(first) not in " ".join(out["before"].split())
    assert out["can_reveal"] and not out["can_reveal_again"]
    assert " ".join(first) in " ".join(out["after"].split())
    assert progress.revealed(10, tmp_path) == "request"
    again = make_app(lesson(10), exercise=file)
    assert again.revealed  # a new session in the same work folder shows them at once


def _words(children) -> str:
    """The text a list of Dash components shows."""
    if isinstance(children, str):
        return children
    if isinstance(children, list | tuple):
        return " ".join(_words(c) for c in children)
    return _words(getattr(children, "children", None) or "")


def test_the_web_reveals_after_a_check_or_on_request_and_sends_no_diagnosis_before():
    from dash import no_update

    from app.web.exercise import Callbacks

    cb = Callbacks(None)
    diagnosis = DIAGNOSED[0].diagnosis
    store, children, button = cb.reveal(0, None, "en", 10, None, trigger="ex-number")  # the panel appears
    assert store is no_update and button == {} and "after your first check" in _words(children)
    assert not any(s.diagnosis["en"][:40] in _words(children) for s in DIAGNOSED)
    store, children, button = cb.reveal(1, None, "zh", 10, None, trigger="ex-reveal")
    assert store == {"10": "request"} and button == {"display": "none"}
    assert diagnosis["zh"][:20] in _words(children) and "步骤" in _words(children)
    other = {"lesson": 3, "verdict": "PASS"}  # a grade of another lesson reveals nothing here
    assert "after your first check" in _words(cb.reveal(0, other, "en", 10, {}, trigger="ex-result")[1])
    store, children, _ = cb.reveal(0, {"lesson": 10, "verdict": "FAIL"}, "en", 10, {}, trigger="ex-result")
    assert store == {"10": "check"} and diagnosis["en"][:40] in _words(children)
    assert cb.reveal(0, None, "en", 10, store, trigger="lang-page")[0] is no_update  # kept: nothing to write
    assert cb.reveal(0, None, "en", 3, None, trigger="ex-number")[1:] == ([], {"display": "none"})
