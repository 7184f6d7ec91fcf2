"""Golden traces: a few small runs compared exactly, column by column, with files in tests/golden/.

Each golden file holds everything a run's trace has (every stored and derived column of the row table with
its dtype, the task table, the name, source, lane and detail tables), the run's task records and GM tensor
names, its findings, its end times and its figures (the ``--json`` summary without the wall time, and the
metrics). Integers are JSON integers; floats are JSON numbers written by ``repr``, which reads back as the
same float, and are compared bit for bit (``float.hex``), never within a tolerance. Nothing is approximate.

A golden file is written only by ``python -m pytest tests/test_golden_traces.py --update-golden``; without
that flag a missing or different file fails the test, naming the first differing table, row and column.
"""

from __future__ import annotations

import copy
import gzip
import json
import math
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from pathlib import Path

import pytest

from engine import Kind
from engine.analysis import run_metrics
from engine.scenarios.runner import run_scenario
from engine.trace import DERIVED_COLUMNS

GOLDEN = Path(__file__).parent / "golden"
ROOT = GOLDEN.parent.parent
PROFILE = "ascend910b1"
FORMAT = 1
GZIP_OVER = 200_000  # bytes of JSON text: larger goldens are stored gzipped
UPDATE = "--update-golden"

# golden name -> (scenario, parameters); all numerics on. Together: host API calls and waits, streams and
# events (a prefetch pipeline), the vector and the Cube units at instruction level, and findings (a race).
RUNS = {
    "host_lifecycle": ("host-lifecycle", {"n": 64}),
    "pipeline_events": ("pipeline", {"n": 128, "batches": 4, "streams": 2, "prefetch_depth": 1}),
    "vector_add": ("vector-add", {"length": 4096, "tile_length": 1024, "cores": 2}),
    "matmul": ("matmul", {"m": 128, "n": 128, "k": 64, "cores": 2, "base": "64,64,64"}),
    "debug_missing_wait": ("debug-demo", {"bug": "missing-wait"}),
}

# lists written one item per line (each item compact): the tables
ROW_TABLES = frozenset(
    (
        ("trace", "rows"),
        ("tasks", "rows"),
        ("names",),
        ("srcs",),
        ("lanes",),
        ("details",),
        ("task_records",),
        ("findings",),
    )
)


# -- the document ---------------------------------------------------------------------------------------
def plain(value):
    """``value`` as JSON data: numpy scalars and int enums as ints, typed records as dicts of their fields
    (a detail record also names its type), tuples as lists, mapping keys as strings, non-finite floats as
    ``{"float": "nan"}`` (JSON has no NaN)."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):  # int enums too
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else {"float": repr(float(value))}
    if hasattr(value, "item") and hasattr(value, "dtype") and getattr(value, "ndim", None) == 0:  # numpy scalar
        return plain(value.item())
    if hasattr(value, "tolist"):  # numpy array
        return plain(value.tolist())
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a detail record
        return {"type": type(value).__name__, **{k: plain(getattr(value, k)) for k in value._fields}}
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    raise TypeError(f"no golden form for {type(value).__name__}: {value!r}")


def table(columns: Mapping, names) -> dict:
    """A columnar table as a header, the columns' dtypes and one list of values per row."""
    names = list(names)
    cols = [columns[n] for n in names]
    return {
        "columns": names,
        "dtypes": [str(c.dtype) for c in cols],
        "rows": [list(row) for row in zip(*(c.tolist() for c in cols), strict=True)],
    }


def golden_doc(name: str) -> dict:
    """A fresh run of golden ``name`` as its golden document."""
    scenario, params = RUNS[name]
    run = run_scenario(scenario, PROFILE, numerics=True, **params)
    result = run.result
    trace = result.trace
    figures = run.summary()
    del figures["wall_s"]  # the host's wall time: not the simulation's
    del figures["findings"]  # in "findings" below
    return {
        "format": FORMAT,
        "run": {"scenario": scenario, "profile": PROFILE, "numerics": True, "params": plain(run.params)},
        "end_ps": plain(result.end_ps),
        "host_end_ps": plain(result.host_end_ps),
        "device_events": plain(result.device_events),
        "correct": plain(run.outcome.correct),
        "trace": table(trace.columns, [*trace.columns, *DERIVED_COLUMNS]),
        "tasks": table(trace.tasks, trace.tasks),
        "names": list(trace.names),
        "srcs": list(trace.srcs),
        "lanes": plain(trace.lanes),
        "details": plain(trace.details),
        "task_records": plain(list(result.tasks)),
        "gm": plain(result.gm),
        "gm_labels": plain(result.gm_labels),
        "findings": [plain(f.to_dict()) for f in result.findings],
        "figures": plain(figures),
        "metrics": plain(run_metrics(result).to_dict()),
    }


# -- the file ---------------------------------------------------------------------------------------------
def _compact(value) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _format(value, path: tuple = (), depth: int = 0) -> str:
    """Objects one key per line; tables one row per line; lists of scalars on one line when short."""
    pad, close = "  " * (depth + 1), "  " * depth
    if isinstance(value, dict) and value:
        items = [f"{pad}{_compact(k)}: {_format(v, (*path, k), depth + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + close + "}"
    if isinstance(value, list) and value:
        if path in ROW_TABLES:
            return "[\n" + ",\n".join(pad + _compact(v) for v in value) + "\n" + close + "]"
        one_line = _compact(value)
        if not any(isinstance(v, list | dict) for v in value) and len(one_line) <= 120:
            return one_line
        items = [pad + _format(v, (*path, i), depth + 1) for i, v in enumerate(value)]
        return "[\n" + ",\n".join(items) + "\n" + close + "]"
    return _compact(value)


def dumps(doc: dict) -> str:
    return _format(doc) + "\n"


def golden_path(name: str, folder: Path = GOLDEN) -> Path:
    """The golden file of ``name`` (``.json``, or ``.json.gz`` when that one exists)."""
    gz = folder / f"{name}.json.gz"
    return gz if gz.exists() else folder / f"{name}.json"


def read_golden(path: Path) -> dict:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return json.loads(data.decode("utf-8"))


def write_golden(name: str, doc: dict, folder: Path = GOLDEN) -> Path:
    """Write golden ``name`` (gzipped, with a fixed header, when large); returns its path. An unchanged file
    is left alone."""
    text = dumps(doc).encode("utf-8")
    plain_path, gz_path = folder / f"{name}.json", folder / f"{name}.json.gz"
    path, data = (gz_path, gzip.compress(text, mtime=0)) if len(text) > GZIP_OVER else (plain_path, text)
    folder.mkdir(exist_ok=True)
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)
    (plain_path if path == gz_path else gz_path).unlink(missing_ok=True)
    return path


# -- the comparison -----------------------------------------------------------------------------------------
def _show(value) -> str:
    text = repr(value)
    if isinstance(value, float):
        text += f" ({value.hex()})"
    return text if len(text) <= 80 else text[:77] + "..."


def _same_scalar(a, b) -> bool:
    if type(a) is not type(b):
        return False
    return a.hex() == b.hex() if isinstance(a, float) else a == b


def _where(path: tuple) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "the document"


def _row_text(doc: dict, i: int) -> str:
    """Row ``i`` of the trace in words: its lane, kind and name."""
    try:
        header, row = doc["trace"]["columns"], doc["trace"]["rows"][i]
        lane = doc["lanes"][row[header.index("lane")]]
        kind = Kind(row[header.index("kind")]).name
        return f" ({lane['process']}/{lane['thread']} {kind} {doc['names'][row[header.index('name')]]!r})"
    except (KeyError, IndexError, TypeError, ValueError):
        return ""


def _diff(golden, fresh, path: tuple, doc: dict) -> str | None:
    if isinstance(golden, dict) and isinstance(fresh, dict):
        if list(golden) != list(fresh):
            missing = [k for k in golden if k not in fresh]
            added = [k for k in fresh if k not in golden]
            what = f"missing {missing}" if missing else (f"new {added}" if added else "the same keys in another order")
            return f"{_where(path)}: keys differ ({what})"
        if "columns" in golden and "rows" in golden:  # a table: compare the header, then row by row
            found = _diff(golden["columns"], fresh["columns"], (*path, "columns"), doc)
            found = found or _diff(golden["dtypes"], fresh["dtypes"], (*path, "dtypes"), doc)
            return found or _diff_rows(golden, fresh, path, doc)
        for k in golden:
            found = _diff(golden[k], fresh[k], (*path, k), doc)
            if found:
                return found
        return None
    if isinstance(golden, list) and isinstance(fresh, list):
        for i, (g, f) in enumerate(zip(golden, fresh, strict=False)):
            found = _diff(g, f, (*path, i), doc)
            if found:
                return found
        if len(golden) != len(fresh):
            return f"{_where(path)}: {len(golden)} items in the golden file, {len(fresh)} in this run"
        return None
    if not _same_scalar(golden, fresh):
        return f"{_where(path)}: golden {_show(golden)}, this run {_show(fresh)}"
    return None


def _diff_rows(golden: dict, fresh: dict, path: tuple, doc: dict) -> str | None:
    header = golden["columns"]
    for i, (g, f) in enumerate(zip(golden["rows"], fresh["rows"], strict=False)):
        if len(g) != len(f):
            return f"{_where(path)}: row {i} has {len(g)} values in the golden file, {len(f)} in this run"
        for column, a, b in zip(header, g, f, strict=True):
            if not _same_scalar(a, b):
                words = _row_text(doc, i) if path == ("trace",) else ""
                return f"{_where(path)}: row {i}{words}, column {column!r}: golden {_show(a)}, this run {_show(b)}"
    n, m = len(golden["rows"]), len(fresh["rows"])
    if n != m:
        return f"{_where(path)}: {n} rows in the golden file, {m} in this run (the first {min(n, m)} agree)"
    return None


def first_difference(golden: dict, fresh: dict) -> str | None:
    """The first place where two golden documents differ, in one line, or None when they are identical
    (same keys in the same order, same types, ints equal, floats equal bit for bit)."""
    return _diff(golden, fresh, (), golden)


# -- the tests ------------------------------------------------------------------------------------------------
@pytest.fixture
def update_golden(request) -> bool:
    return bool(request.config.getoption(UPDATE))


@pytest.mark.parametrize("name", sorted(RUNS))
def test_run_matches_its_golden_trace(name, update_golden):
    fresh = golden_doc(name)
    path = golden_path(name)
    if update_golden:
        written = write_golden(name, fresh)
        assert first_difference(read_golden(written), fresh) is None
        return
    if not path.exists():
        pytest.fail(f"no golden file for {name} ({path}): generate it with {UPDATE} and review it", pytrace=False)
    found = first_difference(read_golden(path), fresh)
    if found:
        pytest.fail(
            f"{name} differs from {path.relative_to(ROOT)}: {found}\n"
            f"If the change is intended, regenerate with `python -m pytest {Path(__file__).relative_to(ROOT)} "
            f"{UPDATE}` and review the diff.",
            pytrace=False,
        )


def test_every_golden_file_belongs_to_a_run():
    files = {p.name for p in GOLDEN.glob("*.json*")}
    expected = {golden_path(name).name for name in RUNS}
    assert files <= expected, f"golden files of no run: {sorted(files - expected)}"


def test_a_golden_document_reads_back_exactly():
    doc = golden_doc("matmul")
    assert first_difference(json.loads(dumps(doc)), doc) is None
    assert dumps(json.loads(dumps(doc))) == dumps(doc)


def test_a_large_golden_is_gzipped_the_same_every_time(tmp_path):
    small = {"format": FORMAT, "names": ["a", "b"]}
    assert write_golden("x", small, tmp_path) == tmp_path / "x.json"
    large = {"format": FORMAT, "names": [f"name {i}" for i in range(GZIP_OVER // 8)]}
    path = write_golden("x", large, tmp_path)
    assert path == tmp_path / "x.json.gz" == golden_path("x", tmp_path)
    assert not (tmp_path / "x.json").exists()  # one file per golden
    data = path.read_bytes()
    assert read_golden(path) == large
    path.unlink()
    assert write_golden("x", large, tmp_path).read_bytes() == data  # no time stamp in the gzip header


def test_the_comparison_names_the_row_and_column_that_changed():
    name = "vector_add"
    path = golden_path(name)
    if not path.exists():
        pytest.fail(f"no golden file for {name} ({path}): generate it with {UPDATE}", pytrace=False)
    golden = read_golden(path)
    assert first_difference(golden, copy.deepcopy(golden)) is None

    changed = copy.deepcopy(golden)
    end = changed["trace"]["columns"].index("end")
    changed["trace"]["rows"][7][end] += 1  # one picosecond later
    found = first_difference(golden, changed)
    assert found is not None and found.startswith("trace: row 7 (") and "column 'end'" in found, found

    changed = copy.deepcopy(golden)
    changed["tasks"]["rows"][-1][0] = float(changed["tasks"]["rows"][-1][0])  # an int became a float
    found = first_difference(golden, changed)
    assert found is not None and found.startswith(f"tasks: row {len(golden['tasks']['rows']) - 1}, column 'seq'")


def test_the_comparison_is_exact():
    golden = {"metrics": {"share": 0.25, "count": 3}, "names": ["a"], "trace": {"columns": [], "rows": []}}
    changed = copy.deepcopy(golden)
    changed["metrics"]["share"] = math.nextafter(0.25, 1.0)  # one ulp
    assert first_difference(golden, changed).startswith("metrics.share: golden 0.25")
    changed = copy.deepcopy(golden)
    changed["metrics"]["count"] = True  # the same value to ==, another type
    assert first_difference(golden, changed).startswith("metrics.count: golden 3, this run True")
    changed = copy.deepcopy(golden)
    changed["names"].append("b")
    assert first_difference(golden, changed) == "names: 1 items in the golden file, 2 in this run"
    changed = copy.deepcopy(golden)
    changed["metrics"] = {"count": 3, "share": 0.25}
    assert first_difference(golden, changed) == "metrics: keys differ (the same keys in another order)"
