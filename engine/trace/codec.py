"""A finished run as plain data and back: JSON-able tables plus numpy arrays, nothing executable.

:func:`run_to_doc` splits a :class:`~engine.simulation.RunResult` into a JSON-able document (string
tables, lanes, typed details, findings, task records, GM tensor names, totals) and a dict of plain
numeric arrays (the trace's columns and task table). :func:`run_from_doc` checks and rebuilds it.
The web's run store writes the pair to an ``.npz`` file; the lesson grader sends it from a child
process over a pipe. Both trust nothing in it: every array is checked against the tables it indexes.
"""

from __future__ import annotations

from dataclasses import asdict
from types import MappingProxyType

import numpy as np

from ..device.stream import TaskKind, TaskRecord
from ..profiles.profile import load_profile
from ..simulation import GmTensor, RunResult
from . import detail as D
from .data import TraceData
from .findings import Finding
from .schema import COLUMN_DTYPES, TASK_COLUMNS, TASK_DETAIL, Lane

FORMAT = 1
_DETAIL_TYPES = MappingProxyType(
    {
        cls.__name__: cls
        for cls in (
            D.Rect,
            D.Instr,
            D.Nd2Nz,
            D.Load2D,
            D.Load3D,
            D.Fixpipe,
            D.QueueOp,
            D.Flag,
            D.CrossFlag,
            D.HostWait,
            D.HostWork,
            D.Mark,
            D.Phase,
            D.Block,
            D.Issue,
            D.TaskInfo,
        )
    }
)
_TASK_FIELDS = tuple(TaskRecord.__dataclass_fields__)


def _encode_detail(d) -> list:
    fields = []
    for v in d:
        if isinstance(v, tuple) and hasattr(v, "_fields"):
            fields.append(_encode_detail(v))
        elif isinstance(v, tuple) and v and hasattr(v[0], "_fields"):
            fields.append({"tuple": [_encode_detail(x) for x in v]})
        elif isinstance(v, tuple):
            fields.append({"plain": list(v)})
        else:
            fields.append(v)
    return [type(d).__name__, fields]


def _decode_detail(item):
    name, fields = item
    if name not in _DETAIL_TYPES:
        raise ValueError(f"unknown detail type {name!r}")
    values = []
    for v in fields:
        if isinstance(v, list) and len(v) == 2 and isinstance(v[0], str) and v[0] in _DETAIL_TYPES:
            values.append(_decode_detail(v))
        elif isinstance(v, dict) and "tuple" in v:
            values.append(tuple(_decode_detail(x) for x in v["tuple"]))
        elif isinstance(v, dict) and "plain" in v:
            values.append(tuple(v["plain"]))
        elif isinstance(v, str | int | float | bool) or v is None:
            values.append(v)
        else:
            raise ValueError(f"a {name} field holds {type(v).__name__}")
    return _DETAIL_TYPES[name](*values)


def _tuples(value):
    """JSON lists back to the nested tuples task records hold."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def _plain(value):
    """numpy scalars in ``extra`` as Python numbers (JSON has no numpy)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def run_to_doc(result: RunResult) -> tuple[dict, dict[str, np.ndarray]]:
    """``(document, arrays)``: everything of the run, the document JSON-able, the arrays plain numbers."""
    t = result.trace
    doc = {
        "format": FORMAT,
        "profile": result.profile.name,
        "names": list(t.names),
        "srcs": list(t.srcs),
        "lanes": [asdict(lane) for lane in t.lanes],
        "details": [_encode_detail(d) for d in t.details],
        "findings": [f.to_dict() for f in result.findings],
        "end_ps": int(result.end_ps),
        "host_end_ps": int(result.host_end_ps),
        "device_events": int(result.device_events),
        "extra": _plain(result.extra),
        "tasks": [_plain([getattr(r, f) for f in _TASK_FIELDS]) for r in result.tasks],
        "gm": {str(k): asdict(v) for k, v in result.gm.items()},
        "gm_labels": {str(k): v for k, v in result.gm_labels.items()},
    }
    arrays = {f"col_{k}": np.asarray(v) for k, v in t.columns.stored.items()}
    arrays.update({f"task_{k}": np.asarray(v) for k, v in t.tasks.items()})
    return doc, arrays


def run_from_doc(doc: dict, arrays: dict[str, np.ndarray]) -> RunResult:
    """Rebuild a run; ``ValueError`` naming what is wrong when the data is inconsistent."""
    if doc.get("format") != FORMAT:
        raise ValueError(f"run format {doc.get('format')!r}, this version reads {FORMAT}")
    columns = {}
    for name, dtype in COLUMN_DTYPES.items():
        col = np.asarray(arrays[f"col_{name}"])
        if col.dtype != dtype or col.ndim != 1:
            raise ValueError(f"trace column {name} has dtype {col.dtype} and {col.ndim} dimensions, expected {dtype}")
        columns[name] = col
    n = len(columns["start"])
    if any(len(c) != n for c in columns.values()):
        raise ValueError("trace columns differ in length")
    tasks = {name: np.asarray(arrays[f"task_{name}"]).astype(dtype, copy=False) for name, dtype in TASK_COLUMNS}
    lanes = tuple(Lane(**lane) for lane in doc["lanes"])
    names, srcs = tuple(map(str, doc["names"])), tuple(map(str, doc["srcs"]))
    details = tuple(_decode_detail(d) for d in doc["details"])
    for key, size in (("lane", len(lanes)), ("name", len(names))):
        if n and (columns[key].min() < 0 or columns[key].max() >= size):
            raise ValueError(f"trace column {key} points outside its table of {size}")
    detail = columns["detail"]
    plain = detail[detail < TASK_DETAIL]
    if len(plain) and (plain.min() < -1 or plain.max() >= len(details)):
        raise ValueError("trace column detail points outside the detail table")
    if n and (detail[detail >= TASK_DETAIL] - TASK_DETAIL >= len(tasks["seq"])).any():
        raise ValueError("trace column detail points outside the task table")
    for c in columns.values():
        c.setflags(write=False)
    trace = TraceData(columns, names, srcs, lanes, details, tasks)
    records = []
    for values in doc["tasks"]:
        fields = dict(zip(_TASK_FIELDS, values, strict=True))
        fields["kind"] = TaskKind(fields["kind"])
        for key in ("reads", "writes", "vc"):
            fields[key] = _tuples(fields[key])
        records.append(TaskRecord(**fields))
    gm = {int(k): GmTensor(**{**v, "shape": tuple(v["shape"])}) for k, v in doc["gm"].items()}
    return RunResult(
        profile=load_profile(doc["profile"]),
        trace=trace,
        findings=[Finding(**{"message_zh": "", **f}) for f in doc["findings"]],  # runs stored before message_zh
        end_ps=int(doc["end_ps"]),
        host_end_ps=int(doc["host_end_ps"]),
        device_events=int(doc["device_events"]),
        extra=dict(doc["extra"]),
        tasks=records,
        gm=gm,
        gm_labels={int(k): str(v) for k, v in doc.get("gm_labels", {}).items()},
    )
