"""The g key grades the trainee's exercise file with the lesson's check (lessons.grader, in a worker)
and shows the result; and ``ascendsim tui`` from the command line, with ``--screenshot``."""

import shutil

import pytest

from app.cli import main
from lessons import catalog
from tests.tui_helpers import ARTIFACTS, drive, lesson, make_app, status


def _check(file, lang="en"):
    app = make_app(lesson(1), exercise=file, lang=lang)
    out = {}

    async def script(pilot):
        await pilot.press("g")
        assert app.checking or app.check_result is not None
        assert app.check_action("check", ()) is None or app.check_result is not None  # no second check meanwhile
        for _ in range(3000):
            if app.check_result is not None:
                break
            await pilot.pause(0.01)
        await pilot.pause()
        screen = app.screen
        out["screen"] = type(screen).__name__
        out["text"] = str(screen.query_one("#check-text").render())
        out["status"] = status(app)
        await pilot.press("escape")
        out["after"] = type(app.screen).__name__
        out["checking"] = app.checking

    drive(app, script)
    return app, out


def test_g_grades_a_known_bad_exercise_and_shows_what_failed(tmp_path):
    file = tmp_path / "exercise.py"
    shutil.copy(catalog.get(1).exercise_file, file)  # the stub: nothing written yet
    app, out = _check(file)
    result = app.check_result
    assert result.verdict == "FAIL" and result.score < 100
    assert out["screen"] == "CheckScreen" and out["after"] != "CheckScreen" and not out["checking"]
    assert "Verdict: FAIL" in out["text"] and "[FAIL]" in out["text"]
    assert f"FAIL {result.score}/100" in out["status"]
    failed = [c for c in result.criteria if c.passed is False]
    assert failed and all(c.title in out["text"] for c in failed)


def test_g_grades_a_known_good_exercise_as_passed(tmp_path):
    file = tmp_path / "exercise.py"
    shutil.copy(catalog.get(1).solution_file, file)
    app, out = _check(file, lang="zh")
    assert app.check_result.verdict == "PASS", app.check_result.messages
    assert "PASS" in out["text"] and "全部标准通过" in out["text"]


def test_g_without_an_exercise_file_says_how_to_start_one(tmp_path):
    app = make_app(lesson(1), exercise=tmp_path / "missing" / "exercise.py")

    async def script(pilot):
        await pilot.press("g")
        text = str(app.screen.query_one("#check-text").render())
        assert "does not exist" in text and "ascendsim lesson start 1" in text
        assert app.check_result is None and not app.checking

    drive(app, script)


def test_screenshot_option_writes_the_screen_after_k_steps(capsys):
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / "cli-lesson1-steps5.svg"
    path.unlink(missing_ok=True)
    assert main(["tui", "--lesson", "1", "--steps", "5", "--screenshot", str(path), "--size", "100x30"]) == 0
    assert capsys.readouterr().out.strip() == f"wrote {path}"
    svg = path.read_text(encoding="utf-8")
    assert svg.startswith("<svg") and "Lesson&#160;1:&#160;Host&#160;lifecycle" in svg
    assert f"step&#160;6&#160;/&#160;{len(lesson(1).replay)}" in svg


def test_screenshot_of_a_scenario_with_its_options_in_chinese():
    path = ARTIFACTS / "cli-vector-add-zh.svg"
    args = ["tui", "--scenario", "vector-add", "--length", "4096", "--cores", "2", "--lang", "zh"]
    assert main([*args, "--steps", "20", "--screenshot", str(path), "--size", "80x24"]) == 0
    svg = path.read_text(encoding="utf-8")
    assert "场景&#160;vector-add" in svg and "第&#160;21&#160;/" in svg


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--lesson", "99"], "error: --lesson: lesson must be one of"),
        (["--scenario", "nope"], "error: --scenario must be one of"),
        (["--scenario", "matmul", "--m", "-4"], "error: "),
        (["--scenario", "matmul", "--bogus", "1"], "error: --scenario matmul: No such option '--bogus'"),
        # refused before the app starts, as `ascendsim run` refuses it (memory, or time on a huge machine)
        (["--scenario", "matmul", "--m", "65536", "--n", "65536", "--k", "65536"], "error: --m/--n/--k: the run "),
        (["--lesson", "1", "--scenario", "matmul"], "error: --lesson and --scenario exclude each other"),
        (["--lesson", "1", "--m", "4"], "error: unexpected argument '--m'"),
        (["--screenshot", "x.svg", "--size", "10x2"], "error: --size must be WIDTHxHEIGHT of at least 40x12"),
        (["--lang", "fr"], "error: --lang must be one of en, zh, got fr"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_code_2(args, message, capsys):
    assert main(["tui", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1, err


def test_screenshot_after_pressing_keys_shows_a_slot_s_fractals():
    """Lesson 6 at a B load, v and s twice: L0A's tile of A, its ZZ grid of fractals drawn in the buffers pane."""
    path = ARTIFACTS / "cli-lesson6-l0a-fractals.svg"
    step = lesson(6).stops[3].step  # a load of B: A's rows of fractals have landed in L0A
    args = ["tui", "--lesson", "6", "--steps", str(step), "--screenshot", str(path), "--size", "160x50"]
    assert main([*args, "--press", "v s s"]) == 0
    svg = path.read_text(encoding="utf-8").replace("&#160;", " ")
    assert "L0A queue 2 slot 0: A[0:64, " in svg
    assert "ZZ (CANN's Zz): rows of fractals, each row-major" in svg.replace("&#x27;", "'")
    assert " 0→   1→   2→   3→" in svg and "12→  13→  14→  15→" in svg  # the Z path through the fractals
