"""``ascendsim lesson`` and ``ascendsim grade`` from the command line: output, exit codes, one-line errors."""

import json
import os

import pytest
from lesson_submissions import solution, write

from app.cli import main


def test_list_shows_the_lessons_in_both_languages(capsys):
    assert main(["lesson", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    numbers = [r["number"] for r in rows]
    assert numbers[:10] == list(range(1, 11)) and numbers == sorted(set(numbers)) and 13 in numbers
    assert rows[7]["title"]["zh"] == "流、事件与预取" and rows[7]["questions"] == ["third_stream"]
    assert rows[8]["questions"] == ["cache_random", "run_faster"]
    assert main(["lesson", "list"]) == 0
    assert "Double buffering" in capsys.readouterr().out


def test_show_in_chinese_and_as_json(capsys):
    assert main(["lesson", "show", "5", "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("第 5 课：双缓冲") and "先预测，再运行" in out and "ascendsim lesson start 5" in out
    assert main(["lesson", "show", "1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["steps"][1]["selector"] == {"kind": "ERROR"} and doc["steps"][1]["text"]["zh"]


def test_start_copies_the_stub_and_never_overwrites(tmp_path, capsys):
    folder = tmp_path / "work"
    assert main(["lesson", "start", "3", "--dir", str(folder)]) == 0
    stub = (folder / "exercise.py").read_text(encoding="utf-8")
    assert "# TODO" in stub
    (folder / "exercise.py").write_text("my work", encoding="utf-8")
    assert main(["lesson", "start", "3", "--dir", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--dir:" in err and "already exists" in err
    assert (folder / "exercise.py").read_text(encoding="utf-8") == "my work"


def test_check_exit_codes_json_and_junit(tmp_path, capsys):
    good = write(tmp_path, "good", solution(3))
    assert main(["lesson", "check", "3", "--file", str(good), "--json", "--junit", str(tmp_path / "j.xml")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "PASS" and doc["costs"]["bytes"]["GM -> UB"] == 2 * 8 * 10240  # the main run: 8 cores
    assert {c["id"] for c in doc["criteria"]} >= {"numerics", "through_queues", "on_device", "no_findings"}
    assert 'failures="0"' in (tmp_path / "j.xml").read_text()
    guessed = write(tmp_path, "guessed", solution(3).replace('"MTE2"}', '"VECTOR"}'))  # a wrong prediction: a PASS
    assert main(["lesson", "check", "3", "--file", str(guessed), "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert "结论: PASS" in out and "== 你的预测（不影响结论） ==" in out and "你的结果: VECTOR；" not in out
    assert "你的结果: VECTOR; 模拟器: MTE2 (不对)" in out
    bad = write(
        tmp_path,
        "bad",
        solution(3).replace("asc.adds(y_local, y_local, b, count)", "asc.adds(y_local, y_local, -b, count)"),
    )
    assert main(["lesson", "check", "3", "--file", str(bad), "--lang", "zh"]) == 1
    out = capsys.readouterr().out
    assert "结论: FAIL" in out and "[FAIL]" in out and "提示:" in out
    assert "== 本次运行的开销 ==" in out


@pytest.mark.parametrize(
    ("argv", "flag", "words"),
    [
        (["lesson", "show", "99"], "N:", "must be one of 1, 2, 3, 4, 5, 6, 7, 8, 9, 10"),
        (["lesson", "show", "3", "--lang", "fr"], "--lang", "must be one of en, zh, got fr"),
        (["lesson", "check", "3", "--file", "nowhere/exercise.py"], "--file", "does not exist"),
        (["grade", ".", "--lesson", "3", "--jobs", "0"], "--jobs", "0 is not in the range 1<=x<=64"),
        (["grade", ".", "--lesson", "3", "--shard", "3/2"], "--shard", "1 <= K <= M, got '3/2'"),
        (["grade", ".", "--lesson", "99"], "--lesson", "got 99"),
        (["grade", ".", "--lesson", "3", "--out", "r.txt"], "--out", "must end in .json or .csv, got 'r.txt'"),
        (["grade", "nowhere", "--lesson", "3"], "SUBMISSIONS_DIR", "is not a folder"),
        (["grade", "."], "--lesson", "required"),
        (["grade", "--merge", "a.json"], "--out", "--merge needs --out"),
        (["grade", "--merge", "nowhere.json", "--out", "m.json"], "error: --merge: cannot read", "nowhere.json"),
        (["grade", "--merge", "a.json", "--out", "m.txt"], "error: --out: must", "end in .json or .csv"),
        (["grade", ".", "--lesson", "3", "--timeout", "0"], "--timeout", "between 1 and 3600 seconds, got 0"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(argv, flag, words, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and flag in err and words in err


def test_a_merge_error_names_its_flag_once(capsys):
    assert main(["grade", "--merge", "nowhere.json", "--out", "m.json"]) == 2
    assert capsys.readouterr().err.count("--merge") == 1


def test_merging_refuses_duplicates_and_mixed_lessons(tmp_path, capsys):
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    row = {"id": "x", "lesson": 3, "verdict": "PASS", "score": 100, "criteria": {}, "messages": [], "time_s": 1.0}
    a.write_text(json.dumps({"lesson": 3, "rows": [row]}))
    b.write_text(json.dumps({"lesson": 3, "rows": [row]}))
    assert main(["grade", "--merge", str(a), str(b), "--out", str(tmp_path / "m.json")]) == 2
    assert "submission 'x' appears twice" in capsys.readouterr().err
    b.write_text(json.dumps({"lesson": 4, "rows": [{**row, "id": "y"}]}))
    assert main(["grade", "--merge", str(a), str(b), "--out", str(tmp_path / "m.json")]) == 2
    assert "grades lesson 4" in capsys.readouterr().err
    b.write_text(json.dumps({"lesson": 3, "rows": [{**row, "id": "y"}]}))
    assert main(["grade", "--merge", str(a), str(b), "--out", str(tmp_path / "m.json")]) == 0
    assert json.loads((tmp_path / "m.json").read_text())["count"] == 2


def test_a_report_is_written_whole_or_not_at_all(tmp_path, monkeypatch, capsys):
    a = tmp_path / "a.json"
    row = {"id": "x", "lesson": 3, "verdict": "PASS", "score": 100, "criteria": {}, "messages": [], "time_s": 1.0}
    a.write_text(json.dumps({"lesson": 3, "rows": [row]}))
    out = tmp_path / "m.json"
    out.write_text("the earlier report")

    def full_disk(src, dst):
        raise OSError(28, "No space left on device")

    import app.cli.usage

    with monkeypatch.context() as m:
        m.setattr(app.cli.usage.os, "replace", full_disk)  # the report cannot be moved into place
        assert main(["grade", "--merge", str(a), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"error: cannot write {out}: No space left on device; the earlier m.json is unchanged"
    assert out.read_text() == "the earlier report"  # not half a report
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "m.json"]  # no temporary file left
    assert main(["grade", "--merge", str(a), "--out", str(out)]) == 0
    assert json.loads(out.read_text())["count"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "m.json"]


def test_a_sandboxed_check_keeps_the_lessons_references_for_the_next_one(tmp_path, monkeypatch, capsys):
    """The references computed beside a sandboxed check (the lesson's own code: lesson 9 takes about 3 s) are kept in
    the user's cache in a folder named after the code, and the next check reads them instead of computing them."""
    from app import kept_references
    from lessons.catalog import get
    from lessons.judge import references

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    good = write(tmp_path, "good", solution(3))
    assert main(["lesson", "check", "3", "--file", str(good), "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    folders = list((tmp_path / "cache" / "ascendsim" / "references").iterdir())
    assert folders == [kept_references.user_folder()]
    assert kept_references.kept(get(3), folders[0]) == json.loads(json.dumps(references(get(3))))

    def computed(_lesson):
        raise AssertionError("the references were computed again")

    monkeypatch.setattr("lessons.grader.references", computed)
    monkeypatch.setattr("lessons.judge.references", computed)
    assert main(["lesson", "check", "3", "--file", str(good), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["verdict"] == first["verdict"] == "PASS" and again["criteria"] == first["criteria"]


def test_kept_references_that_do_not_read_back_are_computed_and_kept_again(tmp_path):
    from app import kept_references
    from lessons.catalog import get

    lesson, folder = get(3), tmp_path / "code"
    kept_references.keep(lesson, folder)
    path = next(folder.iterdir())
    good = path.read_text(encoding="utf-8")
    path.write_text('{"truth_cut', encoding="utf-8")  # a write cut short: never read as references
    assert kept_references.kept(lesson, folder) is None
    kept_references.keep(lesson, folder)
    assert path.read_text(encoding="utf-8") == good


def test_an_unsandboxed_check_neither_reads_nor_keeps_references(tmp_path, monkeypatch, capsys):
    """Without bubblewrap the trainee's code runs with the user's rights: what it could write is never read."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr("lessons.sandbox.missing", lambda: "bubblewrap (bwrap) is not installed")
    assert main(["lesson", "check", "3", "--file", str(write(tmp_path, "good", solution(3)))]) == 0
    assert "runs unsandboxed" in capsys.readouterr().err
    assert not (tmp_path / "cache").exists()


def test_older_codes_references_are_pruned_to_the_newest_few(tmp_path):
    from app import kept_references

    root = tmp_path / "references"
    for i in range(7):
        (root / f"old{i}").mkdir(parents=True)
        os.utime(root / f"old{i}", (1000 + i, 1000 + i))
    current = root / "current"
    current.mkdir()
    kept_references.prune(current, keep_others=2)
    assert sorted(p.name for p in root.iterdir()) == ["current", "old5", "old6"]
