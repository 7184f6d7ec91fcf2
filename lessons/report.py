"""Class reports: one row per submission, written as JSON, CSV or JUnit XML, and shards merged back.

A row: ``id``, ``lesson``, ``verdict``, ``score`` (0-100), ``criteria`` (``{id: PASS | FAIL |
NOT_RUN}``), ``messages``, ``predictions``, ``hidden`` (``{kind: PASS | FAIL | NOT_RUN}``) and ``time_s``.
A submission's hidden cases are drawn afresh at each grading, so a submission that is right on some cases
of a kind and wrong on others can grade differently twice; with ``--hidden-seed`` everything but ``time_s``
is deterministic, and a report merged from shards (``merge``) equals the unsharded one row for row.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from xml.etree import ElementTree as ET

FORMATS = (".json", ".csv")


class ReportError(ValueError):
    """A report cannot be written or merged (the message names the file and why)."""


def document(lesson: int, rows: list[dict], shard: str | None = None) -> dict:
    return {"lesson": lesson, "shard": shard, "count": len(rows), "rows": sorted(rows, key=lambda r: r["id"])}


def to_csv(doc: dict) -> str:
    criteria: list[str] = []
    kinds: list[str] = []
    for row in doc["rows"]:
        for c in row["criteria"]:
            if c not in criteria:
                criteria.append(c)
        for k in row.get("hidden", {}):
            if k not in kinds:
                kinds.append(k)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)  # a CR or LF in an id stays in its field
    hidden = [f"hidden:{k}" for k in kinds]
    writer.writerow(["id", "lesson", "verdict", "score", *criteria, *hidden, "messages", "time_s"])
    for row in doc["rows"]:
        writer.writerow(
            [
                row["id"],
                row["lesson"],
                row["verdict"],
                row["score"],
                *[row["criteria"].get(c, "") for c in criteria],
                *[row.get("hidden", {}).get(k, "") for k in kinds],
                " | ".join(row["messages"]),
                row["time_s"],
            ]
        )
    return out.getvalue()


def text(doc: dict, path: Path) -> str:
    """The report as ``path`` stores it: JSON or CSV, by its suffix."""
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise ReportError(f"--out must end in .json or .csv, got {str(path)!r}")
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n" if suffix == ".json" else to_csv(doc)


def junit(suite: str, cases: list[tuple[str, bool, str, str]], time_s: float = 0.0) -> str:
    """JUnit XML: ``cases`` are (name, passed, failure message, details)."""
    root = ET.Element(
        "testsuite",
        name=suite,
        tests=str(len(cases)),
        failures=str(sum(1 for c in cases if not c[1])),
        time=f"{time_s:.3f}",
    )
    for name, passed, message, details in cases:
        case = ET.SubElement(root, "testcase", classname=suite, name=name)
        if not passed:
            failure = ET.SubElement(case, "failure", message=message)
            failure.text = details
    return ET.tostring(root, encoding="unicode") + "\n"


def merge(paths: list[Path]) -> dict:
    """One report from shard reports (JSON): same lesson, no submission twice."""
    rows: dict[str, dict] = {}
    lesson = None
    for path in paths:
        try:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ReportError(f"--merge: cannot read {path}: {exc}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
            raise ReportError(f"--merge: {path} is not a grade report (no rows)")
        if lesson is None:
            lesson = doc.get("lesson")
        elif doc.get("lesson") != lesson:
            raise ReportError(f"--merge: {path} grades lesson {doc.get('lesson')}, the others lesson {lesson}")
        for row in doc["rows"]:
            if row["id"] in rows:
                raise ReportError(f"--merge: submission {row['id']!r} appears twice (again in {path})")
            rows[row["id"]] = row
    return document(lesson, list(rows.values()))
