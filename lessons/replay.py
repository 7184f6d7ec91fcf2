"""The trusted re-execution of a recorded program, in the grader (never in the child).

:func:`replay` takes what a child recorded (:mod:`lessons.tape`) and runs it again, call by call, on
simulations of its own built with the lesson's settings (``drive.RUNS``) and the grader's profile: host
calls in their order, each kernel block's calls when the engine runs that block, the host bytes each
copy reads put in place as the copy reads them. Every operation must be on :data:`~lessons.recording.SURFACE`
and every value it returns must come out as recorded; anything else is :class:`Tampered`. The runs it
produces, what the lesson's observers saw on them, and the outputs it could verify are all a check gets:
nothing the child computed, printed or patched reaches a verdict.

An output (``rec.output``) is accepted only if the bytes are exactly what a device-to-host copy of the
replay brought back, from device memory a kernel wrote last; otherwise it is :class:`NotFromDevice`.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from engine import asc
from engine.aicore.running import current
from engine.aicore.tiling_read import check_keys
from engine.device.copy_engine import D2H
from engine.host.tiling_data import TilingDataError
from engine.simulation import RunResult, Simulation

from .credit import Credit, NotFromDevice, Payload, from_kernel
from .recording import (
    MAX_DEPTH,
    MAX_ITEMS,
    NP_DTYPES,
    RecordingError,
    allowed,
    by_value,
    from_value,
    is_handle_type,
    plain,
    same,
    service,
)

MAX_ENTRIES = 20_000_000  # calls of one recording (a child within its CPU limit makes far fewer)
MAX_HOST_BYTES = 1 << 31  # host arrays a recording may ask the grader to hold
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]{0,99}$")


Progress = Callable[[int, int, int], None]  # host calls replayed, of how many, events recorded so far


class Tampered(Exception):
    """The recording does not replay: it is malformed, uses something outside the API, or its values differ."""


class _Mismatch(BaseException):
    """Raised inside the engine (a kernel block, a copy) and caught by :func:`replay`: never by the engine."""


@dataclass
class Replayed:
    runs: dict[str, RunResult] = field(default_factory=dict)
    observed: dict = field(default_factory=dict)  # what the lesson's observers saw (trusted)
    outputs: dict = field(default_factory=dict)  # key -> verified value or NotFromDevice
    launches: dict[str, list] = field(default_factory=dict)  # run -> [(kernel name, block_dim, args)]


class _Opaque:
    """Stands for a value of the program's own type: it means nothing to the simulator."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __repr__(self) -> str:
        return f"<{self.kind}>"


class _ReplayedError(Exception):
    """An exception that escaped kernel code in the child, raised again at the same point."""


def replay(
    doc: dict, drive, library: dict | None = None, progress: Progress | None = None, runs: dict | None = None
) -> Replayed:
    """Re-execute the recording ``doc`` under the lesson's ``drive`` (its observers, library) with the runs
    ``runs`` (their simulations' settings; default the drive's ``RUNS``: with hidden cases,
    :func:`lessons.hidden.runs`); ``progress(done, total, events)`` hears after each host call: calls replayed,
    of how many, and the events the replay's simulations have recorded so far."""
    try:
        return _Replayer(doc, drive, library or {}, progress, runs).run()
    except _Mismatch as exc:
        raise Tampered(str(exc)) from None
    except RecordingError as exc:
        raise Tampered(f"the recording does not decode: {exc}") from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise Tampered(f"the recording is malformed ({type(exc).__name__}: {exc})") from None


class _Replayer:
    def __init__(
        self, doc: dict, drive, library: dict, progress: Progress | None = None, runs: dict | None = None
    ) -> None:
        if not isinstance(doc, dict):
            raise RecordingError("not a recording")
        self.progress = progress
        self.drive = drive
        self.runs = drive.RUNS if runs is None else runs
        self.library = library
        self.host = _list(doc.get("host"), "host")
        blocks = doc.get("blocks") or {}
        if not isinstance(blocks, dict):
            raise RecordingError("blocks is not a table")
        self.blocks = {str(k): _list(v, "block") for k, v in blocks.items()}
        self.files = [str(f)[:4096] for f in _list(doc.get("files") or [], "files")]
        reads = doc.get("reads") or {}
        if not isinstance(reads, dict):
            raise RecordingError("reads is not a table")
        self.reads = {int(k): list(_list(v, "reads")) for k, v in reads.items()}
        self.claimed = doc.get("outputs") or {}
        if not isinstance(self.claimed, dict):
            raise RecordingError("outputs is not a table")
        total = len(self.host) + sum(len(v) for v in self.blocks.values())
        if total > MAX_ENTRIES:
            raise RecordingError(f"{total} calls (the limit is {MAX_ENTRIES})")
        self.objs: dict[int, object] = {}
        self.sims: list[Simulation] = []
        self.sim_handle: dict[int, int] = {}
        self.sim_run: dict[int, str] = {}
        self.payloads: dict[int, list[Payload]] = {}
        self.arrays: dict[int, np.ndarray] = {}
        self.array_bytes = 0
        self.launch_ordinals: dict[int, tuple[object, int]] = {}
        self.per_sim: dict[int, int] = {}
        self.observers: dict[str, object] = {}
        self.rt_run: dict[int, str] = {}
        self.out = Replayed()

    # -- the host program ---------------------------------------------------------------------------
    def run(self) -> Replayed:
        for done, entry in enumerate(self.host, 1):
            self._step(entry)
            if self.progress is not None:
                self.progress(done, len(self.host), sum(len(sim.trace) for sim in self.sims))
        if self.blocks:
            raise _Mismatch(
                f"the recording has kernel blocks that never ran here: {', '.join(sorted(self.blocks)[:5])}"
            )
        left = [h for h, reads in self.reads.items() if reads]
        if left:
            raise _Mismatch("the recording has host data for copies that never ran here")
        for h, name in self.sim_run.items():
            if name not in self.out.runs:
                self._end(h)
        self._verify_outputs()
        return self.out

    def _step(self, entry) -> None:
        """One host call of the recording, replayed."""
        op = entry[0]
        if op == "r":
            if entry[2] != "asc":
                raise RecordingError(f"unknown root {entry[2]!r}")
            self._bind(entry[1], asc)
        elif op == "s":
            self._start(int(entry[1]), str(entry[2]))
        elif op == "e":
            self._end(int(entry[1]))
        elif op == "L":
            name = str(entry[2])
            if name not in self.library:
                raise _Mismatch(f"the program uses {name}, which this exercise does not provide")
            self._bind(entry[1], self.library[name])
        elif op == "j":
            self._jit(entry)
        elif op in ("c", "g"):
            self._execute(entry, None)
        else:
            raise RecordingError(f"unknown operation {op!r}")

    def _bind(self, h, obj) -> None:
        h = int(h)
        if h in self.objs:
            raise RecordingError(f"handle {h} is bound twice")
        self.objs[h] = obj

    def _start(self, h: int, name: str) -> None:
        runs = self.runs
        if name not in runs:
            raise _Mismatch(f"the recording has a run {name!r} this lesson does not have")
        if name in self.sim_run.values():
            raise _Mismatch(f"run {name!r} was recorded twice")
        sim = Simulation(**runs[name])
        self._bind(h, sim)
        self.sims.append(sim)
        self.sim_handle[id(sim)] = h
        self.sim_run[h] = name
        self.payloads[h] = []
        self.out.launches[name] = []
        self.rt_run[id(sim.acl.rt)] = name
        sim.copy_probe = self._probe(h)
        observer = getattr(self.drive, "observer", None)
        if observer is not None:
            self.observers[name] = observer(name, sim)

    def _end(self, h: int) -> None:
        sim = self.objs.get(h)
        name = self.sim_run.get(h)
        if not isinstance(sim, Simulation) or name is None or name in self.out.runs:
            raise _Mismatch(f"the end of a run that was not started (handle {h})")
        done = self.observers.get(name)
        if done is not None:
            self.out.observed.update(done())
        self.out.runs[name] = sim.finish()

    def _jit(self, entry: list) -> None:
        name = str(entry[2])
        if not _NAME.match(name):
            raise RecordingError(f"kernel name {name[:40]!r}")
        options = {str(k): self._decode(v) for k, v in (entry[4] or {}).items()}
        if set(options) - {"kernel_type", "tiling_keys"}:
            raise RecordingError(f"asc.jit options {sorted(options)}")
        if "tiling_keys" in options:
            try:
                options["tiling_keys"] = check_keys(options["tiling_keys"])
            except TilingDataError as exc:
                raise RecordingError(f"asc.jit tiling_keys: {exc}") from None
        params = entry[3] if isinstance(entry[3], list) else []  # names only label buffers in the views
        if len(params) > 64 or not all(isinstance(p, str) and _NAME.match(p) for p in params):
            raise RecordingError("kernel parameter names")
        body = _Body(self, name)
        body.__signature__ = inspect.Signature(
            [inspect.Parameter(p, inspect.Parameter.POSITIONAL_ONLY) for p in dict.fromkeys(params)]
        )
        kernel = asc.jit(body, **options)
        self._bind(entry[1], kernel)

    def _src(self, entry: list) -> tuple[str, int] | None:
        file = int(entry[6])
        if file < 0:
            return None
        return self.files[file], int(entry[7])

    def _execute(self, entry: list, ctx) -> BaseException | None:
        """Run one recorded call; the exception it raised when the recording says it raised one."""
        op, on, name = entry[0], int(entry[1]), str(entry[2])
        target = self.objs.get(on)
        if target is None:
            raise RecordingError(f"handle {on} is used before it exists")
        if not allowed(target, "call" if op == "c" else "get", name):
            what = "asc" if target is asc else type(target).__name__
            raise _Mismatch(f"{what}.{name} is not part of the simulator's API")
        src = self._src(entry)
        if op == "g":
            try:
                value = getattr(target, name)
            except Exception as exc:
                return self._raised(entry, name, exc)
            return self._match(entry[5], value)
        args = [self._decode(a) for a in _list(entry[3], "args")]
        kwargs = {str(k): self._decode(v) for k, v in (entry[4] or {}).items()}
        if name == "launch_kernel":
            self._launched(target, args)
        if not service(target):  # a lesson's service makes its own calls: its own lines are on the stack here too
            if ctx is not None:
                ctx.caller = src
            else:
                for sim in self.sims:
                    sim.caller = src
        try:
            result = getattr(target, name)(*args, **kwargs)
        except _Mismatch:
            raise
        except Exception as exc:
            return self._raised(entry, name, exc)
        finally:
            if ctx is not None:
                ctx.caller = None
            else:
                for sim in self.sims:
                    sim.caller = None
        return self._match(entry[5], result)

    @staticmethod
    def _raised(entry: list, name: str, exc: Exception) -> Exception:
        recorded = entry[5]
        if not (isinstance(recorded, dict) and recorded.get("x") == type(exc).__name__):
            raise _Mismatch(f"{name} raised {type(exc).__name__} here ({exc}), not in the recording") from None
        return exc

    def _launched(self, rt, args: list) -> None:
        run = self.rt_run.get(id(rt))
        if run is not None and len(args) >= 2:
            kernel = args[0]
            values = [by_value(a) if not plain(a) else a for a in args[3:]]
            self.out.launches[run].append((getattr(kernel, "name", "?"), args[1], values))

    # -- values ------------------------------------------------------------------------------------------
    def _decode(self, v, depth: int = 0):
        if plain(v):
            return v
        if depth > MAX_DEPTH:
            raise RecordingError(f"a value nested deeper than {MAX_DEPTH} levels")
        if not isinstance(v, dict) or len(v) == 0:
            raise RecordingError(f"a value of type {type(v).__name__}")
        if "h" in v:
            obj = self.objs.get(int(v["h"]))
            if obj is None:
                raise RecordingError(f"handle {v['h']} is used before it exists")
            return obj
        for tag, kind in (("l", list), ("t", tuple)):
            if tag in v:
                items = _list(v[tag], "sequence")
                return kind(self._decode(x, depth + 1) for x in items)
        if "d" in v:
            items = _list(v["d"], "dict")
            return {self._decode(k, depth + 1): self._decode(x, depth + 1) for k, x in items}
        if "a" in v:
            return self._array(v)
        if "r" in v:
            ref = str(v["r"])
            if ref not in self.library:
                raise _Mismatch(f"the program launches {ref}, which this exercise may not use")
            return self.library[ref]
        if "o" in v:
            return _Opaque(str(v["o"])[:200])
        return from_value(v)

    def _array(self, v: dict) -> np.ndarray:
        ident = int(v["a"])
        dtype = np.dtype(str(v["dt"]))
        shape = tuple(int(s) for s in _list(v["sh"], "shape"))
        if dtype.name not in NP_DTYPES or len(shape) > 8 or min(shape, default=1) < 0:
            raise RecordingError(f"host array of dtype {dtype.name} and shape {shape}")
        found = self.arrays.get(ident)
        if found is not None:
            if found.dtype != dtype or found.shape != shape:
                raise _Mismatch(f"host array {ident} changed its dtype or shape")
            return found
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        self.array_bytes += nbytes * (1 if v.get("c", True) else 2)
        if self.array_bytes > MAX_HOST_BYTES:
            raise RecordingError(f"host arrays of more than {MAX_HOST_BYTES} B")
        if v.get("c", True) or not shape:
            arr = np.zeros(shape, dtype)
        else:  # a strided view, as the program passed
            arr = np.zeros((*shape[:-1], 2 * shape[-1]), dtype)[..., ::2]
        self.arrays[ident] = arr
        return arr

    def _match(self, recorded, actual, depth: int = 0) -> None:
        """Does ``actual`` come out as ``recorded``? New handles are bound to what they name."""
        if depth > MAX_DEPTH:
            raise RecordingError("a result nested too deep")
        if plain(recorded):
            if not (plain(actual) and same(recorded, actual)):
                raise _Mismatch(f"a call returned {_short(actual)} here, {_short(recorded)} in the recording")
            return
        if not isinstance(recorded, dict):
            raise RecordingError(f"a result of type {type(recorded).__name__}")
        if "h" in recorded:
            h = int(recorded["h"])
            if not is_handle_type(actual) or type(actual).__name__ != recorded.get("k", type(actual).__name__):
                raise _Mismatch(f"a call returned {_short(actual)} here, a {recorded.get('k')} in the recording")
            known = self.objs.get(h)
            if known is None:
                self.objs[h] = actual
            elif known is not actual:
                raise _Mismatch(f"a call returned a different {type(actual).__name__} than in the recording")
            return
        for tag, kind in (("l", list), ("t", tuple)):
            if tag in recorded:
                items = _list(recorded[tag], "result")
                if type(actual) is not kind or len(actual) != len(items):
                    raise _Mismatch(f"a call returned {_short(actual)} here, a {kind.__name__} in the recording")
                for r, a in zip(items, actual, strict=True):
                    self._match(r, a, depth + 1)
                return
        if "d" in recorded:
            items = _list(recorded["d"], "result")
            if type(actual) is not dict or len(actual) != len(items):
                raise _Mismatch("a call returned a different dict than in the recording")
            for (k, r), (ak, a) in zip(items, actual.items(), strict=True):
                self._match(k, ak, depth + 1)
                self._match(r, a, depth + 1)
            return
        if "nd" in recorded:
            shape, dtype = recorded["nd"]
            if not isinstance(actual, np.ndarray) or list(actual.shape) != list(shape) or actual.dtype.str != dtype:
                raise _Mismatch(f"a call returned {_short(actual)} here, an array in the recording")
            return
        if "x" in recorded:
            raise _Mismatch(f"a call returned {_short(actual)} here; in the recording it raised {recorded['x']}")
        if "o" in recorded:
            if type(actual).__qualname__[:200] != recorded["o"]:
                raise _Mismatch(f"a call returned {_short(actual)} here, a {recorded['o']} in the recording")
            return
        if "s" in recorded:
            if not (isinstance(actual, np.generic) and actual.dtype.name == recorded["s"]) or not same(
                recorded["x"], actual.item()
            ):
                raise _Mismatch(f"a call returned {_short(actual)} here, {recorded['x']!r} in the recording")
            return
        if by_value(actual) != recorded:
            raise _Mismatch(f"a call returned {_short(actual)} here, something else in the recording")

    # -- kernels ---------------------------------------------------------------------------------------
    def block_key(self, ctx) -> str:
        sim = self.sim_handle[id(ctx.sim)]
        launch = ctx.launch
        found = self.launch_ordinals.get(id(launch))
        if found is None:
            found = self.launch_ordinals[id(launch)] = (launch, self.per_sim.get(sim, 0))
            self.per_sim[sim] = found[1] + 1
        return f"{sim}/{found[1]}/{ctx.block_idx}/{ctx.role}"

    def run_block(self) -> None:
        ctx = current()
        key = self.block_key(ctx)
        entries = self.blocks.pop(key, None)
        if entries is None:
            raise _Mismatch(f"kernel block {key} ran here but is not in the recording")
        pending = None
        for entry in entries:
            if entry[0] == "x":
                name, message, file, line = str(entry[1]), str(entry[2])[:2000], int(entry[3]), int(entry[4])
                if pending is not None and type(pending).__name__ == name:
                    raise pending
                if not _NAME.match(name):
                    raise RecordingError(f"exception name {name[:40]!r}")
                exc = type(name, (_ReplayedError,), {})(message)
                exc.source_line = (self.files[file], line) if file >= 0 else None
                raise exc
            if entry[0] not in ("c", "g"):
                raise RecordingError(f"operation {entry[0]!r} in kernel code")
            pending = self._execute(entry, ctx)

    # -- host bytes -----------------------------------------------------------------------------------
    def _probe(self, h: int):
        reads = self.reads.get(h, [])
        payloads = self.payloads[h]

        def probe(seq: int, plan, when: str) -> None:
            if when == "before" and plan.direction != D2H and plan.source[1].where != "device":
                if not reads:
                    raise _Mismatch("a copy read host memory here that the recording has no data for")
                rec_seq, data = reads.pop(0)
                data = np.asarray(data, dtype=np.uint8).reshape(-1)
                if int(rec_seq) != seq or data.size != plan.count:
                    raise _Mismatch(f"copy {seq} of {plan.count} B does not match the recorded host data")
                plan.source_bytes()[:] = data
            elif when == "after" and plan.direction == D2H:
                _, alloc, off = plan.target
                payloads.append(Payload(seq, (alloc.where, alloc.ident), off, plan.target_bytes().tobytes()))

        return probe

    # -- outputs -------------------------------------------------------------------------------------
    def _verify_outputs(self) -> None:
        credited: list[tuple[int, Payload, bool]] = []
        for h, payloads in self.payloads.items():
            run = self.out.runs[self.sim_run[h]]
            credited += [(h, p, from_kernel(run, p.seq)) for p in payloads]
        checker = Credit(credited)
        for key, value in self.claimed.items():
            self.out.outputs[str(key)] = checker.verify(value)


class _Body:
    """The body of a recorded kernel in the replay: each block replays the calls that block made."""

    def __init__(self, replayer: _Replayer, name: str) -> None:
        self._replayer = replayer
        self.__name__ = self.__qualname__ = name
        self.__doc__ = None

    def __call__(self, *args) -> None:
        self._replayer.run_block()


def _list(v, what: str) -> list:
    if not isinstance(v, list):
        raise RecordingError(f"{what} is not a list")
    if len(v) > MAX_ENTRIES:
        raise RecordingError(f"{what} has {len(v)} items")
    return v


def _short(v) -> str:
    text = repr(v)
    return text if len(text) <= 80 else text[:77] + "..."


__all__ = ("MAX_ITEMS", "NotFromDevice", "Replayed", "Tampered", "replay")
