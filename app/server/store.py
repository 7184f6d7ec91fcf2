"""Runs a server can keep: a finished run serialised compactly, and a cache keyed by its parameters.

A run of a built-in scenario is deterministic: the same scenario, profile, parameters and numerics
give the same trace. So a run is stored under the hash of those (:class:`RunSpec`), as one ``.npz``
file: the trace's numpy columns and task table, and a JSON document with the string tables, lanes,
details, findings, task records and GM tensor names. Inputs are not stored: they are regenerated
from the scenario's seed (``Scenario.inputs``) when a view asks for tile values.

:class:`RunStore` keeps recent runs in memory (bounded by bytes) and all of them on disk in a
directory every worker process can read, so any worker serves any request.
"""

from __future__ import annotations

import hashlib
import io
import json
import tempfile
import threading
import zipfile
from collections import OrderedDict
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from app.files import atomic_path
from engine.run_codec import FORMAT, run_from_doc, run_to_doc
from engine.runner import get_scenario, run_scenario
from engine.simulation import RunResult


@dataclass(frozen=True)
class RunSpec:
    """What determines a run: scenario, profile, parameters (validated values) and numerics."""

    scenario: str
    profile: str
    params: tuple  # sorted (name, value) pairs
    numerics: bool = True

    @classmethod
    def of(cls, scenario: str, profile: str, params: dict, numerics: bool = True) -> RunSpec:
        return cls(scenario, profile, tuple(sorted(params.items())), numerics)

    @property
    def key(self) -> str:
        text = json.dumps([FORMAT, self.scenario, self.profile, self.params, self.numerics], default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def inputs(self) -> dict | None:
        """The scenario's named input arrays for these parameters (None if it has none)."""
        scenario = get_scenario(self.scenario)
        return scenario.inputs(dict(self.params)) if scenario.inputs else None


# -- encoding ------------------------------------------------------------------------------------------
def encode(result: RunResult, spec: RunSpec) -> bytes:
    """The run as bytes: an npz archive of its arrays and its JSON document (with the spec)."""
    doc, arrays = run_to_doc(result)
    doc["spec"] = asdict(spec)
    arrays = {"meta": np.frombuffer(json.dumps(doc).encode(), dtype=np.uint8), **arrays}
    buf = io.BytesIO()
    # what np.savez_compressed writes, at deflate level 1: the 8192^3 run (150 MB of columns) is stored in
    # 0.8 s as 28 MB instead of 3.5 s as 23 MB (measured)
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        for name, array in arrays.items():
            with z.open(f"{name}.npy", "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, np.asanyarray(array), allow_pickle=False)
    return buf.getvalue()


def decode(data: bytes) -> tuple[RunResult, RunSpec]:
    with np.load(io.BytesIO(data)) as z:  # allow_pickle stays False: nothing in the file is executed
        doc = json.loads(bytes(z["meta"]).decode())
        arrays = {k: z[k] for k in z.files if k != "meta"}
    spec = doc.pop("spec")
    return run_from_doc(doc, arrays), RunSpec(
        spec["scenario"], spec["profile"], _tuples(spec["params"]), spec["numerics"]
    )


def _tuples(value):
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def result_bytes(result: RunResult) -> int:
    """An estimate of a run's memory: its columns, task table and tables."""
    t = result.trace
    return t.nbytes + 200 * (len(t.details) + len(result.tasks)) + 100 * (len(t.names) + len(t.srcs))


# -- the cache -----------------------------------------------------------------------------------------
class RunStore:
    """Runs by :class:`RunSpec`: recent ones in memory (at most ``max_bytes``), all on disk under ``directory``."""

    def __init__(self, directory: str | Path | None = None, max_bytes: int = 512 * 2**20) -> None:
        self.directory = Path(directory or Path(tempfile.gettempdir()) / "ascendsim-runs")
        self.directory.mkdir(parents=True, exist_ok=True)
        self.max_bytes = max_bytes
        self._memory: OrderedDict[str, tuple[RunResult, int]] = OrderedDict()
        self._used = 0
        self._lock = threading.Lock()

    def path(self, spec: RunSpec) -> Path:
        return self.directory / f"{spec.key}.npz"

    def get(self, spec: RunSpec) -> RunResult | None:
        key = spec.key
        with self._lock:
            found = self._memory.get(key)
            if found is not None:
                self._memory.move_to_end(key)
                return found[0]
        path = self.path(spec)
        if not path.is_file():
            return None
        result, _spec = decode(path.read_bytes())
        self._remember(key, result)
        return result

    def put(self, spec: RunSpec, result: RunResult) -> None:
        data = encode(result, spec)
        with atomic_path(self.path(spec)) as tmp:  # a reader sees the whole file or none
            tmp.write_bytes(data)
        self._remember(spec.key, result)

    def run(self, spec: RunSpec, **options) -> RunResult:
        """The run of ``spec``: from memory, from disk, or simulated now (and stored)."""
        found = self.get(spec)
        if found is not None:
            return found
        run = run_scenario(spec.scenario, spec.profile, numerics=spec.numerics, **dict(spec.params), **options)
        self.put(spec, run.result)
        return run.result

    def _remember(self, key: str, result: RunResult) -> None:
        size = result_bytes(result)
        with self._lock:
            if key in self._memory:
                return
            self._memory[key] = (result, size)
            self._used += size
            while self._used > self.max_bytes and len(self._memory) > 1:
                _key, (_old, old_size) = self._memory.popitem(last=False)
                self._used -= old_size
