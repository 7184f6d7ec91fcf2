"""The channel from a graded child process to the grader: framed, typed data, never code.

A frame is ``MAGIC``, a 4-byte header length, a JSON header and raw array bytes. Arrays travel as
(dtype, shape, byte range) entries of the header, so the grader rebuilds them with ``np.frombuffer``
from a whitelist of plain numeric dtypes: nothing the child sends is unpickled or executed.

A finished simulation travels as a *run*: the trace's columns and string tables, the findings, the
device tasks with their vector clocks (for the cross-stream check) and a few totals. On the grader's
side :class:`RunData` offers what :mod:`engine.analysis` reads from a ``RunResult`` (``trace``,
``profile``, ``findings``, ``tasks``, ``end_ps``, ...). :func:`pack_run` and :func:`unpack_run` are
the only functions that know the trace's in-memory form.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from functools import cached_property
from types import SimpleNamespace
from typing import Any

import numpy as np

from engine.findings import Finding
from engine.profile import load_profile
from engine.trace import Lane, TraceData

MAGIC = b"ASIMLSN1"
MAX_FRAME_BYTES = 512 << 20
_DTYPES = frozenset(
    ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64")
)
TRACE_COLUMNS = ("start", "end", "nbytes", "flops", "cause", "src", "name", "lane", "kind", "buf", "slot")


class WireError(ValueError):
    """A frame is malformed, too large, or holds something other than plain data."""


# -- frames ---------------------------------------------------------------------------------------
def encode(doc: Any) -> bytes:
    """One frame holding ``doc``: JSON values, with numpy arrays anywhere inside."""
    blobs: list[bytes] = []
    specs: list[list] = []

    def walk(x):
        if isinstance(x, np.ndarray):
            arr = np.ascontiguousarray(x)
            if arr.dtype.name not in _DTYPES:
                raise WireError(f"array dtype {arr.dtype} cannot travel (plain numbers only)")
            specs.append([arr.dtype.name, list(arr.shape), sum(len(b) for b in blobs), arr.nbytes])
            blobs.append(arr.tobytes())
            return {"__array__": len(specs) - 1}
        if isinstance(x, dict):
            return {str(k): walk(v) for k, v in x.items()}
        if isinstance(x, list | tuple):
            return [walk(v) for v in x]
        if isinstance(x, np.generic):
            return x.item()
        if x is None or isinstance(x, bool | int | float | str):
            return x
        return str(x)

    header = json.dumps({"doc": walk(doc), "arrays": specs}, allow_nan=True).encode()
    return MAGIC + struct.pack("<Q", len(header)) + header + b"".join(blobs)


def decode(frame: bytes) -> Any:
    """The document of one frame; :class:`WireError` if it is not exactly one well-formed frame."""
    if len(frame) > MAX_FRAME_BYTES:
        raise WireError(f"frame of {len(frame)} B exceeds the limit of {MAX_FRAME_BYTES} B")
    if not frame.startswith(MAGIC) or len(frame) < len(MAGIC) + 8:
        raise WireError("not a result frame")
    (size,) = struct.unpack("<Q", frame[len(MAGIC) : len(MAGIC) + 8])
    start = len(MAGIC) + 8
    try:
        header = json.loads(frame[start : start + size])
    except ValueError as exc:
        raise WireError(f"frame header is not JSON: {exc}") from None
    body = memoryview(frame)[start + size :]
    arrays = []
    total = 0
    for spec in header.get("arrays", []):
        dtype, shape, offset, nbytes = spec
        if dtype not in _DTYPES or not all(isinstance(s, int) and s >= 0 for s in shape):
            raise WireError(f"bad array spec {spec!r}")
        if offset != total or offset + nbytes > len(body):
            raise WireError("array bytes out of place")
        arr = np.frombuffer(body[offset : offset + nbytes], dtype=dtype)
        if arr.size != int(np.prod(shape)):
            raise WireError(f"array of {arr.size} elements does not have shape {shape}")
        arrays.append(arr.reshape(shape))
        total += nbytes
    if total != len(body):
        raise WireError("trailing bytes after the last array")

    def walk(x):
        if isinstance(x, dict):
            if set(x) == {"__array__"}:
                return arrays[x["__array__"]]
            return {k: walk(v) for k, v in x.items()}
        if isinstance(x, list):
            return [walk(v) for v in x]
        return x

    return walk(header["doc"])


# -- runs -----------------------------------------------------------------------------------------
def pack_run(result, max_rows: int | None = None, coarse: bool = False) -> dict:
    """A finished ``RunResult`` as plain data (columns, tables, findings, tasks, totals).

    ``coarse`` leaves out the rows of the cores' pipe lanes (what each pipe did), keeping the host,
    streams, copy engines, kernels and blocks: enough for timings and totals of a very long run.
    """
    t = result.trace
    columns = {name: np.asarray(t.columns[name] if name in t.columns else getattr(t, name)) for name in TRACE_COLUMNS}
    if coarse:
        from .selectors import trace_lane_facts

        fine = np.array([f.kind == "pipe" for f in trace_lane_facts(t)] or [False], dtype=bool)
        keep = ~fine[columns["lane"]] if len(t) else np.zeros(0, dtype=bool)
        index = np.cumsum(keep) - 1
        columns = {name: col[keep] for name, col in columns.items()}
        cause = columns["cause"].copy()
        linked = cause >= 0
        cause[linked] = np.where(keep[cause[linked]], index[cause[linked]], -1)
        columns["cause"] = cause
    if max_rows is not None and len(columns["start"]) > max_rows:
        raise WireError(f"trace of {len(columns['start'])} rows exceeds the {max_rows} rows a lesson run may send")
    tasks = []
    for task in result.tasks:
        tasks.append(
            {
                "seq": task.seq,
                "kind": int(task.kind),
                "stream": task.stream.ident,
                "stream_label": task.stream.label,
                "name": task.name,
                "src": task.src,
                "submit": task.submit,
                "start": task.start,
                "end": task.end,
                "nbytes": task.nbytes,
                "reads": [[list(a), lo, hi] for a, lo, hi in task.reads],
                "writes": [[list(a), lo, hi] for a, lo, hi in task.writes],
                "vc": {str(k): v for k, v in task.vc.items()},
            }
        )
    return {
        "profile": result.profile.name,
        "columns": columns,
        "names": list(t.names),
        "srcs": list(t.srcs),
        "lanes": [[lane.process, lane.thread, lane.sort] for lane in t.lanes],
        "findings": [_finding_doc(f) for f in result.findings],
        "tasks": tasks,
        "end_ps": result.end_ps,
        "host_end_ps": result.host_end_ps,
    }


def _finding_doc(f: Finding) -> dict:
    return {"kind": f.kind, "message": f.message, "code": f.code, "time_ps": f.time_ps, "src": f.src}


@dataclass
class RunData:
    """A run rebuilt in the grader: what ``engine.analysis`` reads from a ``RunResult``."""

    profile_name: str
    trace: TraceData
    findings: list[Finding]
    tasks: list
    end_ps: int
    host_end_ps: int
    extra: dict = field(default_factory=dict)

    @cached_property
    def profile(self):
        return load_profile(self.profile_name)

    @property
    def simulated_us(self) -> float:
        return self.end_ps / 1e6


def unpack_run(doc: dict) -> RunData:
    """Rebuild a run; :class:`WireError` when a column or table is missing or inconsistent."""
    try:
        cols = {name: np.asarray(doc["columns"][name]) for name in TRACE_COLUMNS}
        n = len(cols["start"])
        if any(len(v) != n for v in cols.values()):
            raise WireError("trace columns differ in length")
        lanes = tuple(Lane(str(p), str(t), int(s)) for p, t, s in doc["lanes"])
        names, srcs = tuple(map(str, doc["names"])), tuple(map(str, doc["srcs"]))
        for key, table in (("lane", lanes), ("name", names)):
            if n and (cols[key].min() < 0 or cols[key].max() >= len(table)):
                raise WireError(f"trace column {key} points outside its table")
        for v in cols.values():
            v.setflags(write=False)
        trace = TraceData(columns=cols, names=names, srcs=srcs, lanes=lanes)
        findings = [
            Finding(str(f["kind"]), str(f["message"]), f.get("code"), int(f.get("time_ps", 0)), str(f.get("src", "")))
            for f in doc["findings"]
        ]
        streams: dict[int, SimpleNamespace] = {}
        tasks = []
        for d in doc["tasks"]:
            stream = streams.setdefault(
                int(d["stream"]), SimpleNamespace(ident=int(d["stream"]), label=d["stream_label"])
            )
            tasks.append(
                SimpleNamespace(
                    seq=int(d["seq"]),
                    kind=int(d["kind"]),
                    stream=stream,
                    name=int(d["name"]),
                    src=int(d["src"]),
                    submit=int(d["submit"]),
                    start=int(d["start"]),
                    end=int(d["end"]),
                    nbytes=int(d["nbytes"]),
                    reads=tuple(((str(a[0]), int(a[1])), int(lo), int(hi)) for a, lo, hi in d["reads"]),
                    writes=tuple(((str(a[0]), int(a[1])), int(lo), int(hi)) for a, lo, hi in d["writes"]),
                    vc={int(k): int(v) for k, v in d["vc"].items()},
                )
            )
        return RunData(str(doc["profile"]), trace, findings, tasks, int(doc["end_ps"]), int(doc["host_end_ps"]))
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        if isinstance(exc, WireError):
            raise
        raise WireError(f"malformed run: {type(exc).__name__}: {exc}") from None
