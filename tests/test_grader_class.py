"""Grading a class: 50 mixed submissions with --jobs 2 give 50 rows with the right verdicts; shards merge back."""

import csv
import json
import time
from xml.etree import ElementTree as ET

import pytest
from lesson_submissions import l3_variants, write

from app.cli import main

MIX = (  # how many of each variant: 50 in all
    ("good", 19),
    ("stub", 4),
    ("wrong_b", 3),
    ("wrong_prediction", 3),
    ("no_free", 2),
    ("syntax", 3),
    ("raises", 3),
    ("exit0", 2),
    ("fake_pass", 2),
    ("host_numpy", 2),
    ("patch_check", 2),
    ("memory", 2),
    ("fork", 2),
    ("loop", 1),
)


@pytest.mark.slow
def test_fifty_submissions_sharded_and_merged(tmp_path, capsys):
    variants = l3_variants()
    folder = tmp_path / "class"
    expected = {}
    for kind, count in MIX:
        for i in range(count):
            name = f"{kind}-{i:02d}"
            write(folder, name, variants[kind][0])
            expected[name] = variants[kind][1]
    (folder / "lonely.py").write_text(variants["good"][0], encoding="utf-8")  # a bare file is a submission too
    expected["lonely"] = "PASS"
    (folder / "empty").mkdir()  # a folder without an exercise is reported, not dropped
    expected["empty"] = "NO_SUBMISSION"
    assert len(expected) == 52

    common = ["--lesson", "3", "--jobs", "2", "--timeout", "3"]
    t0 = time.perf_counter()
    rc = main(["grade", str(folder), *common, "--out", str(tmp_path / "all.json"), "--junit", str(tmp_path / "j.xml")])
    elapsed = time.perf_counter() - t0
    assert rc == 1  # not everyone passed
    report = json.loads((tmp_path / "all.json").read_text())
    rows = {r["id"]: r for r in report["rows"]}
    assert report["count"] == len(rows) == 52
    assert {k: r["verdict"] for k, r in rows.items()} == expected
    assert all(set(r) == {"id", "lesson", "verdict", "score", "criteria", "messages", "time_s"} for r in rows.values())
    assert rows["good-00"]["score"] == 100 and rows["stub-00"]["criteria"]["numerics"] == "FAIL"
    assert rows["syntax-00"]["criteria"]["numerics"] == "NOT_RUN"
    suite = ET.parse(tmp_path / "j.xml").getroot()
    assert suite.get("tests") == "52" and int(suite.get("failures")) == 52 - 20
    print(f"\ngraded 52 submissions of lesson 3 with --jobs 2 in {elapsed:.1f} s")

    for k in (1, 2):
        assert main(["grade", str(folder), *common, "--shard", f"{k}/2", "--out", str(tmp_path / f"s{k}.json")]) == 1
    shard_ids = [{r["id"] for r in json.loads((tmp_path / f"s{k}.json").read_text())["rows"]} for k in (1, 2)]
    assert not shard_ids[0] & shard_ids[1] and shard_ids[0] | shard_ids[1] == set(expected)
    merged_path = tmp_path / "merged.json"
    assert (
        main(["grade", "--merge", str(tmp_path / "s1.json"), str(tmp_path / "s2.json"), "--out", str(merged_path)]) == 1
    )
    merged = json.loads(merged_path.read_text())

    def without_time(doc):
        return [{k: v for k, v in r.items() if k != "time_s"} for r in doc["rows"]]

    assert without_time(merged) == without_time(report)  # only the wall time differs between runs

    assert (
        main(
            ["grade", "--merge", str(tmp_path / "s1.json"), str(tmp_path / "s2.json"), "--out", str(tmp_path / "m.csv")]
        )
        == 1
    )
    with open(tmp_path / "m.csv", newline="", encoding="utf-8") as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == 52 and {r["id"]: r["verdict"] for r in table} == expected
    assert table[0].keys() >= {"id", "verdict", "score", "numerics", "on_device", "messages", "time_s"}
    capsys.readouterr()
