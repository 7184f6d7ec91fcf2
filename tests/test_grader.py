"""A class graded as an instructor would: every good submission passes, no attack passes or does damage.

One batch of lesson 3 submissions (good, broken, cheating, hostile and oddly named) is graded with the real
command, ``ascendsim grade --jobs 2``, in the real sandbox; then again in two shards, merged. Each test
below reads that batch: the verdict of one attack class and the absence of what it tried to do.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import site
import time
from pathlib import Path

import pytest
from hostile_submissions import Where, attacks
from lesson_submissions import l3_variants, solution, stub, write

from app.cli import main
from lessons import sandbox

REPO = Path(__file__).resolve().parents[1]
L3_DIR = REPO / "lessons" / "l03_copyin_compute_copyout"
GOOD_COPIES = 6
TIMEOUT_S = 12

if sandbox.missing():
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: {sandbox.missing()}", pytrace=False)
    pytest.skip(sandbox.missing(), allow_module_level=True)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _ancestors(pid: int) -> list[str]:
    """The command names of a process's parents up to init."""
    names = []
    while pid > 1:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            break
        pid = int(stat[stat.rindex(")") + 2 :].split()[1])
        try:
            names.append(Path(f"/proc/{pid}/comm").read_text().strip())
        except OSError:
            break
    return names


def _harness_processes() -> list[int]:
    """Processes running this checkout's child harness that no sandbox and no grader holds: a grandchild that
    escaped its sandbox, or outlived it, would be one (an orphan, its parent gone). (The sandbox binds the
    harness at its own path, so another checkout's gradings are not counted. A grading running at the same
    time in another test, in another test process, is not counted either: its bwrap, whose command line names
    the harness, and its harness under that bwrap; or, run unsandboxed, its harness under a grader's Python.)"""
    harness = str(REPO / "lessons" / "harness.py").encode()
    out = []
    for pid in os.listdir("/proc"):
        try:
            ours = pid.isdigit() and harness in Path(f"/proc/{pid}/cmdline").read_bytes()
            if not ours:
                continue
            held = [Path(f"/proc/{pid}/comm").read_text().strip(), *_ancestors(int(pid))]
            if "bwrap" not in held and not any(name.startswith("python") for name in held[1:]):
                out.append(int(pid))
        except OSError:
            pass
    return out


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    root = tmp_path_factory.mktemp("grading")
    outside = root / "outside"
    outside.mkdir()
    where = Where(str(outside), str(REPO), site.getsitepackages()[0], str(L3_DIR / "check.py"), os.getpid())
    folder = root / "class"
    expected: dict[str, frozenset[str]] = {}
    for name, (src, verdict) in l3_variants().items():
        write(folder, name, f"# MARK-{name}\n" + src)
        expected[name] = frozenset({verdict})
    for name, (src, verdicts) in attacks(where).items():
        write(folder, name, src)
        expected[name] = verdicts
    for i in range(GOOD_COPIES):
        write(folder, f"good-{i}", f"# MARK-good-{i}\n" + solution(3))
        expected[f"good-{i}"] = frozenset({"PASS"})
    _oddities(folder, expected)
    protected = {p: _digest(p) for p in (L3_DIR / "check.py", L3_DIR / "solution.py", REPO / "lessons" / "hostkit.py")}
    lessons_before = {p.name for p in (REPO / "lessons").iterdir()}

    # one seed for the hidden cases: the shards then grade every submission on the cases the whole run did
    common = ["--lesson", "3", "--jobs", "2", "--timeout", str(TIMEOUT_S), "--hidden-seed", "20240607"]
    t0 = time.perf_counter()
    rc = main(["grade", str(folder), *common, "--out", str(root / "all.json")])
    elapsed = time.perf_counter() - t0
    report = json.loads((root / "all.json").read_text(encoding="utf-8"))
    shards = []
    for k in (1, 2):
        main(["grade", str(folder), *common, "--shard", f"{k}/2", "--out", str(root / f"s{k}.json")])
        shards.append(root / f"s{k}.json")
    main(["grade", "--merge", *map(str, shards), "--out", str(root / "merged.json")])
    main(["grade", "--merge", *map(str, shards), "--out", str(root / "merged.csv")])
    print(f"\ngraded {report['count']} submissions of lesson 3 with --jobs 2 in {elapsed:.1f} s")
    return {
        "rc": rc,
        "report": report,
        "rows": {r["id"]: r for r in report["rows"]},
        "expected": expected,
        "entries": sorted(p.name for p in folder.iterdir()),
        "outside": outside,
        "protected": protected,
        "lessons_before": lessons_before,
        "root": root,
        "elapsed": elapsed,
    }


def _oddities(folder: Path, expected: dict) -> None:
    """Entries a real class folder has: odd names, a notebook, encodings, links."""
    good = solution(3)
    write(folder, "cr\rname", good)  # a carriage return in a folder name
    expected["cr\rname"] = frozenset({"PASS"})
    write(folder, "dup", good)
    (folder / "dup.py").write_text(stub(3), encoding="utf-8")  # dup/ and dup.py: two submissions, two ids
    expected["dup"], expected["dup.py"] = frozenset({"PASS"}), frozenset({"FAIL"})
    (folder / "notebook.ipynb").write_text("{}", encoding="utf-8")
    expected["notebook.ipynb"] = frozenset({"NO_SUBMISSION"})
    (folder / "bom.py").write_bytes(b"\xef\xbb\xbf" + good.encode())
    expected["bom.py"] = frozenset({"PASS"})
    cookie = "# -*- coding: latin-1 -*-\n# caf\xe9\n" + good
    (folder / "cookie.py").write_bytes(cookie.encode("latin-1"))
    expected["cookie.py"] = frozenset({"PASS"})
    (folder / "ref_symlink").mkdir()
    (folder / "ref_symlink" / "exercise.py").symlink_to(L3_DIR / "solution.py")
    expected["ref_symlink"] = frozenset({"NO_SUBMISSION"})
    side = write(folder, "side_symlink", stub(3).replace("def copy_in(", "from solution import *  # noqa\n\n\ndef _x("))
    (side.parent / "solution.py").symlink_to(L3_DIR / "solution.py")
    expected["side_symlink"] = frozenset({"RUNTIME_ERROR"})
    (folder / "linked_entry").symlink_to(folder / "good-0", target_is_directory=True)
    expected["linked_entry"] = frozenset({"NO_SUBMISSION"})
    try:
        (folder / "ref_hardlink").mkdir()
        os.link(L3_DIR / "solution.py", folder / "ref_hardlink" / "exercise.py")
        expected["ref_hardlink"] = frozenset({"NO_SUBMISSION"})
    except OSError:  # another file system: a hard link cannot be made here
        (folder / "ref_hardlink").rmdir()


@pytest.mark.slow
def test_one_row_per_entry_with_its_verdict(batch):
    rows, expected = batch["rows"], batch["expected"]
    assert len(batch["entries"]) >= 40
    assert sorted(rows) == batch["entries"] == sorted(expected)
    wrong = {n: rows[n]["verdict"] for n in rows if rows[n]["verdict"] not in expected[n]}
    assert not wrong, {n: (v, rows[n]["messages"][:1]) for n, v in wrong.items()}
    assert batch["rc"] == 1


@pytest.mark.slow
def test_every_good_submission_passes_and_no_attack_does(batch):
    rows = batch["rows"]
    good = [n for n, want in batch["expected"].items() if want == {"PASS"}]
    assert len(good) >= GOOD_COPIES + 5
    assert all(rows[n]["verdict"] == "PASS" and rows[n]["score"] == 100 for n in good)
    for name in attacks(Where("", "", "", "", 0)):
        assert rows[name]["verdict"] != "PASS", name


@pytest.mark.slow
def test_nothing_was_written_outside_a_sandbox(batch):
    assert list(batch["outside"].iterdir()) == []  # popen, fork, plain writes: nothing arrived
    assert {p.name for p in (REPO / "lessons").iterdir()} == batch["lessons_before"]  # pwned.py, renamed.txt
    assert all(_digest(p) == digest for p, digest in batch["protected"].items())  # check.py, solution, hostkit
    assert not any(Path(s, "aaa-pwned.pth").exists() for s in site.getsitepackages())
    assert _harness_processes() == []  # no forked or setsid grandchild outlived its sandbox


@pytest.mark.slow
def test_processes_and_writes_are_refused_by_the_sandbox(batch):
    rows = batch["rows"]
    for name in ("ctypes_fork_setsid", "os_fork_setsid", "write_project", "symlink_write", "hardlink_write"):
        assert rows[name]["verdict"] == "FORBIDDEN", (name, rows[name]["messages"])
    assert "Operation not permitted" in rows["os_fork_setsid"]["messages"][0]
    assert "Read-only file system" in rows["write_project"]["messages"][0]
    assert 'File "exercise.py"' in rows["dir_fd_write"]["messages"][0]


@pytest.mark.slow
def test_classmates_cannot_be_read_or_killed(batch):
    rows = batch["rows"]
    reader = rows["folder_reader"]
    assert reader["verdict"] == "FAIL"
    stdout = _stdout(batch, "folder_reader")
    assert "MARK-folder_reader" in stdout  # it reads its own folder, and only that
    assert "MARK-good" not in stdout and "MARK-sibling" not in stdout
    assert rows["sibling_killer"]["verdict"] == "FAIL"  # it ran to its end; it killed nobody
    assert all(rows[f"good-{i}"]["verdict"] == "PASS" for i in range(GOOD_COPIES))


def _stdout(batch, name: str) -> str:
    """What one submission printed, graded again alone (reports carry messages, not output)."""
    from lessons.catalog import get
    from lessons.grader import grade_file

    folder = batch["root"] / "class" / name
    return grade_file(get(3), folder / "exercise.py", name).stdout


@pytest.mark.slow
def test_the_reference_is_out_of_reach(batch):
    rows = batch["rows"]
    for name in ("import_solution", "b64_import", "sys_modules", "pycache", "side_symlink"):
        assert rows[name]["verdict"] == "RUNTIME_ERROR", (name, rows[name]["messages"])
    assert rows["exec_solution"]["verdict"] == "FORBIDDEN"
    assert "Permission denied" in rows["exec_solution"]["messages"][0]  # solution.py cannot even be opened
    for name in ("ref_symlink", "ref_hardlink", "linked_entry"):
        if name in rows:
            assert rows[name]["verdict"] == "NO_SUBMISSION", name
    assert "not a regular file" in rows["ref_symlink"]["messages"][0]


@pytest.mark.slow
def test_forged_results_and_device_memory_pokes_do_not_count(batch):
    rows = batch["rows"]
    assert rows["forge_channel"]["verdict"] == "TAMPERED"
    assert "recording" in rows["forge_channel"]["messages"][0]
    poke = rows["gm_poke"]
    assert poke["verdict"] == "NOT_ON_DEVICE" and poke["criteria"]["numerics"] == "FAIL"
    assert "not computed by the device" in poke["messages"][0]
    assert rows["host_numpy"]["verdict"] == "NOT_ON_DEVICE"
    cleared = rows["clear_findings"]
    assert cleared["verdict"] == "FAIL" and cleared["criteria"]["no_findings"] == "FAIL"


@pytest.mark.slow
def test_reports_are_bounded_and_show_no_grader_paths(batch):
    rows = batch["rows"]
    assert all(len(m) <= 6000 for r in rows.values() for m in r["messages"])
    assert len(rows["huge_message"]["messages"][0]) <= 6000 and "more characters" in rows["huge_message"]["messages"][0]
    deep = rows["deep_traceback"]["messages"][0]
    assert "RecursionError" in deep and deep.count("\n") <= 50
    text = json.dumps(batch["report"])
    for leak in ("ascendsim-grade", "/sandbox/", "harness.py", "lessons/tape.py"):  # the grader's own paths
        assert leak not in text, leak


@pytest.mark.slow
def test_odd_entries_get_stable_ids_and_csv_holds_them(batch):
    rows = batch["rows"]
    assert rows["dup"]["verdict"] == "PASS" and rows["dup.py"]["verdict"] == "FAIL"
    assert rows["notebook.ipynb"]["verdict"] == "NO_SUBMISSION"
    assert rows["bom.py"]["verdict"] == rows["cookie.py"]["verdict"] == "PASS"
    with open(batch["root"] / "merged.csv", newline="", encoding="utf-8") as fh:
        table = list(csv.DictReader(fh))
    assert {r["id"]: r["verdict"] for r in table} == {n: r["verdict"] for n, r in rows.items()}
    with open(batch["root"] / "merged.csv", newline="", encoding="utf-8") as fh:
        raw = fh.read()
    assert '"cr\rname"' in raw  # quoted: the carriage return stays inside its field
    assert len(list(csv.reader(io.StringIO(raw)))) == len(rows) + 1


@pytest.mark.slow
def test_shards_merge_into_the_whole(batch):
    root = batch["root"]
    shard_ids = [{r["id"] for r in json.loads((root / f"s{k}.json").read_text())["rows"]} for k in (1, 2)]
    assert not shard_ids[0] & shard_ids[1] and shard_ids[0] | shard_ids[1] == set(batch["rows"])
    merged = json.loads((root / "merged.json").read_text())

    def without_time(doc):
        return [{k: v for k, v in r.items() if k != "time_s"} for r in doc["rows"]]

    assert without_time(merged) == without_time(batch["report"])  # a hostile sibling changed nobody's verdict
