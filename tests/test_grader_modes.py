"""Without bubblewrap: ``grade`` refuses in one line naming the package; ``lesson check`` of a trainee's own
file runs unsandboxed and says so, in its output and in the report; ``grade --no-sandbox`` says so too."""

from __future__ import annotations

import json

from lesson_submissions import solution, write

import lessons.sandbox
from app.cli import main


def _no_bwrap(monkeypatch) -> None:
    monkeypatch.setattr(lessons.sandbox, "missing", lambda: lessons.sandbox.MISSING)


def test_grade_refuses_without_the_sandbox(monkeypatch, tmp_path, capsys):
    _no_bwrap(monkeypatch)
    write(tmp_path / "class", "alice", solution(3))
    assert main(["grade", str(tmp_path / "class"), "--lesson", "3"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "bubblewrap" in err and "--no-sandbox" in err and "Traceback" not in err


def test_lesson_check_runs_unsandboxed_and_says_so(monkeypatch, tmp_path, capsys):
    _no_bwrap(monkeypatch)
    file = write(tmp_path, "mine", solution(3))
    assert main(["lesson", "check", "3", "--file", str(file), "--json"]) == 0
    out = capsys.readouterr()
    assert "runs unsandboxed" in out.err
    doc = json.loads(out.out)
    assert doc["verdict"] == "PASS" and any("without the sandbox" in m for m in doc["messages"])


def test_grade_no_sandbox_is_said_in_the_report(monkeypatch, tmp_path, capsys):
    _no_bwrap(monkeypatch)
    write(tmp_path / "class", "alice", solution(3))
    out = tmp_path / "r.json"
    assert main(["grade", str(tmp_path / "class"), "--lesson", "3", "--no-sandbox", "--out", str(out)]) == 0
    row = json.loads(out.read_text())["rows"][0]
    assert row["verdict"] == "PASS" and "without the sandbox" in row["messages"][0]
    capsys.readouterr()
