"""Runs a server can keep: a finished run serialised compactly, cached by its parameters, checked when read.

A run of a built-in scenario is deterministic: the same scenario, profile, parameters and numerics give
the same trace. So a run is stored under the hash of those (:class:`RunSpec`), as one ``.npz`` file: the
trace's numpy columns and task table, and a JSON document with the string tables, lanes, details,
findings, task records, GM tensor names and a CRC-32 of every array. Inputs are not stored: they are
regenerated from the scenario's seed (``Scenario.inputs``) when a view asks for tile values.

:class:`RunStore` keeps recent runs in memory (bounded by bytes) and all of them on disk in a folder
every worker process can read, so any worker serves any request. The disk copy heals and stays bounded:

* every file is verified when read (its zip members' CRCs and the document's CRC of each array); a file
  that does not verify (truncated, emptied, zeroed, an older format) is moved aside, counted in
  :attr:`RunStore.notes` for the page to say so, and the run is computed again;
* a file is written whole and fsynced before its name points at it (:func:`app.files.atomic_path`);
  a write that fails (a full disk, a read-only folder) raises :class:`StoreError` naming the folder and
  the need, and nothing half-written stays behind: a failure is never stored as a result;
* the folder has a size cap (``disk_bytes``): after each write the least recently used runs are removed
  until it fits, lesson runs last of all (never while any other run could go: they are small, and
  computed again if lost), runs of older code (other folders beside this code's) first.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import os
import shutil
import tempfile
import threading
import time
import zipfile
import zlib
from collections import OrderedDict
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from app.files import atomic_path
from engine.scenarios.runner import get_scenario, run_scenario
from engine.simulation import RunResult
from engine.trace.codec import FORMAT, run_from_doc, run_to_doc

DISK_BYTES = 4 << 30  # the store's default cap on disk (ASCENDSIM_STORE_MB or ``--store-mb`` change it)
QUARANTINED_KEPT = 8  # files set aside for a look, per folder; older ones are removed
_FULL = (errno.ENOSPC, errno.EDQUOT)
_READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)


class StoreError(OSError):
    """A run could not be written: the message names the folder and what it needs (one line; ``zh``: the same in
    Chinese); ``reason`` is ``"full"``, ``"read-only"`` or ``"other"``, ``need_mb`` what the write needed."""

    def __init__(self, errno_: int | None, message: str, folder: Path, reason: str, need_mb: int, zh: str) -> None:
        super().__init__(errno_, message)
        self.folder, self.reason, self.need_mb, self.zh = folder, reason, need_mb, zh

    def __str__(self) -> str:
        return self.strerror

    def text(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.strerror


class CorruptRun(ValueError):
    """A stored file that does not verify."""


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

    @property
    def is_lesson(self) -> bool:
        return self.scenario.startswith("lesson:")

    @property
    def filename(self) -> str:
        return f"{'lesson' if self.is_lesson else 'run'}-{self.key}.npz"

    def inputs(self) -> dict | None:
        """The scenario's named input arrays for these parameters (None if it has none)."""
        scenario = get_scenario(self.scenario)
        return scenario.inputs(dict(self.params)) if scenario.inputs else None


# -- encoding ------------------------------------------------------------------------------------------
def _crc(array: np.ndarray) -> int:
    return zlib.crc32(np.ascontiguousarray(array).view(np.uint8).reshape(-1))


def encode(result: RunResult, spec: RunSpec) -> bytes:
    """The run as bytes: an npz archive of its arrays and its JSON document (with the spec and each array's CRC)."""
    doc, arrays = run_to_doc(result)
    doc["spec"] = asdict(spec)
    doc["crc32"] = {name: _crc(array) for name, array in arrays.items()}
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
    """A run and its spec from :func:`encode`'s bytes; :class:`CorruptRun` if anything does not verify."""
    try:
        with np.load(io.BytesIO(data)) as z:  # allow_pickle stays False: nothing in the file is executed
            doc = json.loads(bytes(z["meta"]).decode())
            arrays = {k: z[k] for k in z.files if k != "meta"}
        crcs = doc.pop("crc32")
        if set(crcs) != set(arrays) or any(_crc(arrays[k]) != crcs[k] for k in arrays):
            raise CorruptRun("an array does not match its CRC-32")
        spec = doc.pop("spec")
        result = run_from_doc(doc, arrays)
        return result, RunSpec(spec["scenario"], spec["profile"], _tuples(spec["params"]), spec["numerics"])
    except CorruptRun:
        raise
    except (zipfile.BadZipFile, EOFError, zlib.error, OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        raise CorruptRun(f"{type(exc).__name__}: {exc}") from None


def _tuples(value):
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def result_bytes(result: RunResult) -> int:
    """An estimate of a run's memory: its columns, task table and tables."""
    t = result.trace
    return t.nbytes + 200 * (len(t.details) + len(result.tasks)) + 100 * (len(t.names) + len(t.srcs))


def store_error(exc: OSError, folder: Path, need: int) -> StoreError:
    """One line for a write that failed: the folder, what it needs, and why."""
    mb = max(1, round(need / 2**20))
    if exc.errno in _FULL:
        reason, why, why_zh = "full", f"the disk is full: it needs {mb} MB more", f"磁盘已满：还需要 {mb} MB"
    elif exc.errno in _READ_ONLY:
        reason, why = "read-only", "it is read-only: the server needs to write there"
        why_zh = "它是只读的：服务器需要在那里写入"
    else:
        reason, why = "other", exc.strerror or str(exc)
        why_zh = f"写入失败（错误码 {exc.errno}）"
    return StoreError(
        exc.errno,
        f"cannot store runs in {folder}: {why}",
        folder,
        reason,
        mb,
        f"无法把运行结果保存到 {folder}：{why_zh}",
    )


# -- the cache -----------------------------------------------------------------------------------------
class RunStore:
    """Runs by :class:`RunSpec`: recent ones in memory (at most ``max_bytes``), all on disk under ``directory``
    (at most ``disk_bytes`` for the whole of ``directory.parent``: this code's runs and older code's)."""

    def __init__(
        self, directory: str | Path | None = None, max_bytes: int = 512 * 2**20, disk_bytes: int = DISK_BYTES
    ) -> None:
        self.directory = Path(directory or Path(tempfile.gettempdir()) / "ascendsim-runs")
        with contextlib.suppress(OSError):  # a folder that cannot be made: nothing is stored (put says why)
            self.directory.mkdir(parents=True, exist_ok=True)
        self.max_bytes = max_bytes
        self.disk_bytes = disk_bytes
        # run key -> what happened to its stored file, as a message of app.present.messages and its values
        self.notes: dict[str, tuple[str, dict]] = {}
        self._memory: OrderedDict[str, tuple[RunResult, int]] = OrderedDict()
        self._used = 0
        self._lock = threading.Lock()

    def path(self, spec: RunSpec) -> Path:
        return self.directory / spec.filename

    def get(self, spec: RunSpec) -> RunResult | None:
        """The stored run, or None (never stored, or its file did not verify: then it is set aside)."""
        key = spec.key
        with self._lock:
            found = self._memory.get(key)
            if found is not None:
                self._memory.move_to_end(key)
                return found[0]
        path = self.path(spec)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError:
            self.notes[key] = ("web.note.damaged", {})
            return None
        try:
            result, _spec = decode(data)
        except CorruptRun as exc:
            self._quarantine(path)
            self.notes[key] = ("web.note.damaged", {"why": str(exc)})
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: the last to be evicted
        self._remember(key, result)
        return result

    def put(self, spec: RunSpec, result: RunResult) -> None:
        """Store ``result`` (whole, fsynced); :class:`StoreError` if the folder cannot take it. The run stays
        in this process's memory either way."""
        self.remember(spec, result)
        self.write(spec, result)

    def remember(self, spec: RunSpec, result: RunResult) -> None:
        """Keep ``result`` in this process's memory (:meth:`get` finds it) without writing it."""
        self._remember(spec.key, result)

    def write(self, spec: RunSpec, result: RunResult) -> None:
        """Write ``result``'s file (whole, fsynced; :class:`StoreError` if the folder cannot take it). Most of it
        is deflating and checksumming, which let other threads run."""
        data = encode(result, spec)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)  # says why when its parent is read-only or full
            with atomic_path(self.path(spec)) as tmp:  # a reader sees the whole file or none
                tmp.write_bytes(data)
        except OSError as exc:
            raise store_error(exc, self.directory, len(data)) from None
        self.evict()

    def run(self, spec: RunSpec, **options) -> RunResult:
        """The run of ``spec``: from memory, from disk, or simulated now (and stored if the disk lets it)."""
        found = self.get(spec)
        if found is not None:
            return found
        run = run_scenario(spec.scenario, spec.profile, numerics=spec.numerics, **dict(spec.params), **options)
        try:
            self.put(spec, run.result)
        except StoreError as exc:
            self.notes[spec.key] = unstored(exc)
        return run.result

    def forget(self, spec: RunSpec) -> None:
        """Drop a run from this process's memory (its file stays)."""
        with self._lock:
            found = self._memory.pop(spec.key, None)
            if found is not None:
                self._used -= found[1]

    # -- keeping the folder bounded ---------------------------------------------------------------------
    def disk_use(self) -> int:
        return sum(size for _when, size, _path, _lesson in self._files())

    def evict(self) -> int:
        """Remove least recently used runs until the whole runs folder is under its cap; the bytes removed."""
        files = self._files()
        total = sum(size for _when, size, _path, _lesson in files)
        freed = 0
        # other code's folders first (they are never served), then runs, lessons last; each oldest first
        order = sorted(files, key=lambda f: (f[2].parent == self.directory, f[3], f[0]))
        for _when, size, path, _lesson in order:
            if total - freed <= self.disk_bytes:
                break
            with contextlib.suppress(OSError):
                path.unlink()
                freed += size
            for views in path.parent.glob(f"{path.stem}.*.*"):  # its prepared views (an exercise's code) go with it
                with contextlib.suppress(OSError):
                    views.unlink()
        for folder in self._others():
            if not any(folder.rglob("*.npz")):
                shutil.rmtree(folder, ignore_errors=True)
        return freed

    def _others(self) -> list[Path]:
        parent = self.directory.parent
        with contextlib.suppress(OSError):
            return [p for p in parent.iterdir() if p.is_dir() and p != self.directory and _is_code_folder(p.name)]
        return []

    def _files(self) -> list[tuple[float, int, Path, bool]]:
        out = []
        for folder in (self.directory, *self._others()):
            for p in folder.glob("*.npz") if folder.is_dir() else ():
                with contextlib.suppress(OSError):
                    st = p.stat()
                    out.append((st.st_mtime, st.st_size, p, p.name.startswith("lesson-")))
        return out

    def _quarantine(self, path: Path) -> None:
        with contextlib.suppress(OSError):
            path.rename(path.with_name(f"{path.name}.damaged-{time.time_ns()}"))
        damaged = sorted(self.directory.glob("*.damaged-*"), key=lambda p: p.name.rsplit("-", 1)[-1])
        for old in damaged[:-QUARANTINED_KEPT]:
            with contextlib.suppress(OSError):
                old.unlink()

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


def unstored(exc: StoreError) -> tuple[str, dict]:
    """The note of a run that is served but could not be stored (why, in each language)."""
    return "web.note.unstored", {"why": {"en": str(exc), "zh": exc.zh}}


def _is_code_folder(name: str) -> bool:
    """A folder named after a code fingerprint (16 hex digits): a store of some version of this code."""
    return len(name) == 16 and all(c in "0123456789abcdef" for c in name)


__all__ = ("DISK_BYTES", "CorruptRun", "RunSpec", "RunStore", "StoreError", "decode", "encode", "store_error")
