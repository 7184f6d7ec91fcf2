"""Recording a program at the simulator's API boundary, in the graded child (:mod:`lessons.recording`).

The harness swaps ``engine.asc`` for a recording stand-in before the lesson's code and the trainee's
are imported, and a lesson's drive gets its simulations from :meth:`Recorder.simulation`. From then on
every call the program makes into the simulator goes through a :class:`Live` handle: the tape writes
the call (its target, arguments and the line that made it), runs it on the real object, and writes what
came back. Kernel code is recorded the same way, block by block (each block's calls under the key of the
core that ran it), by the body :meth:`Tape.jit` wraps around the trainee's function. The bytes the
device reads from host memory are recorded as each copy reads them (``Simulation.copy_probe``).

Nothing here is a defence: the child is the submission's process, and all of this is within its reach.
What the tape writes is only data; :mod:`lessons.replay` re-executes it on a simulation of its own.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from engine import asc as real_asc
from engine.aicore.launch import JitKernel
from engine.aicore.running import RUNNING
from engine.device.copy_engine import D2H
from engine.simulation import Simulation
from engine.trace.source_files import INTERNAL_FILES

from .recording import (
    ASC_CALLS,
    ASC_RAW,
    MAX_DEPTH,
    MAX_ITEMS,
    RecordingError,
    allowed,
    by_value,
    is_handle_type,
    np_scalar,
    plain,
)

_SKIP = frozenset((*INTERNAL_FILES, str(Path(__file__).resolve()), __file__))
_MODULE_ATTRS = frozenset(("__all__", "__name__", "__doc__", "__spec__", "__loader__", "__package__", "__file__"))
MAX_MESSAGE = 2000  # characters of an exception message kept in a block's record


MAX_PARAMS = 64  # kernel parameter names recorded


class Tape:
    """Everything one child records: host calls in order, kernel calls per block, host bytes per copy."""

    def __init__(self) -> None:
        self.host: list[list] = []
        self.blocks: dict[str, list[list]] = {}
        self.reads: dict[int, list] = {}  # sim handle -> [seq, bytes] per copy that read host memory
        self.files: list[str] = []
        self.objs: list = []  # handle -> object (kept alive: ids stay unique)
        self._ids: dict[int, int] = {}
        self._proxies: dict[int, Live] = {}
        self._arrays: dict[int, tuple[np.ndarray, int]] = {}
        self._file_ids: dict[str, int] = {}
        self._launches: dict[int, tuple[object, int]] = {}  # id(KernelLaunch) -> (launch, ordinal in its sim)
        self._per_sim: dict[int, int] = {}
        self._ctx_key: tuple = (None, "")
        self.asc = self.proxy(self.register(real_asc))
        self.host.append(["r", self._ids[id(real_asc)], "asc"])

    # -- handles ------------------------------------------------------------------------------------
    def register(self, obj) -> int:
        h = self._ids.get(id(obj))
        if h is None:
            h = self._ids[id(obj)] = len(self.objs)
            self.objs.append(obj)
        return h

    def proxy(self, h: int) -> Live:
        p = self._proxies.get(h)
        if p is None:
            p = self._proxies[h] = Live(self, h)
        return p

    # -- where calls come from -----------------------------------------------------------------------
    def _src(self) -> tuple[int, int]:
        frame = sys._getframe(2)
        while frame is not None and frame.f_code.co_filename in _SKIP:
            frame = frame.f_back
        if frame is None:
            return -1, 0
        return self._file(frame.f_code.co_filename), frame.f_lineno

    def _file(self, name: str) -> int:
        ident = self._file_ids.get(name)
        if ident is None:
            ident = self._file_ids[name] = len(self.files)
            self.files.append(name)
        return ident

    def _log(self, entry: list) -> None:
        ctx = RUNNING.get()
        if ctx is None:
            self.host.append(entry)
        else:
            self.blocks[self.block_key(ctx)].append(entry)

    def block_key(self, ctx) -> str:
        """``sim/launch/block/role`` of the block ``ctx`` runs (launches numbered as their first block runs)."""
        cached, key = self._ctx_key
        if cached is ctx:
            return key
        launch = ctx.launch
        found = self._launches.get(id(launch))
        if found is None:
            sim = self._ids[id(ctx.sim)]
            found = self._launches[id(launch)] = (launch, self._per_sim.get(sim, 0))
            self._per_sim[sim] = found[1] + 1
        key = f"{self._ids[id(ctx.sim)]}/{found[1]}/{ctx.block_idx}/{ctx.role}"
        self._ctx_key = (ctx, key)
        return key

    # -- values ---------------------------------------------------------------------------------------
    def enc(self, v, depth: int = 0, result: bool = False):
        """``v`` as plain data (see :mod:`lessons.recording`); results register new API objects as handles."""
        if plain(v):
            return v
        if depth > MAX_DEPTH:
            raise RecordingError(f"a value nested deeper than {MAX_DEPTH} levels")
        if type(v) is Live:
            return {"h": v._h}
        h = self._ids.get(id(v))
        if h is not None and self.objs[h] is v:
            return {"h": h, "k": type(v).__name__} if result else {"h": h}
        if type(v) in (list, tuple):
            if len(v) > MAX_ITEMS:
                raise RecordingError(f"a sequence of {len(v)} items (the limit is {MAX_ITEMS})")
            return {"l" if type(v) is list else "t": [self.enc(x, depth + 1, result) for x in v]}
        if type(v) is dict:
            if len(v) > MAX_ITEMS:
                raise RecordingError(f"a dict of {len(v)} items (the limit is {MAX_ITEMS})")
            return {"d": [[self.enc(k, depth + 1), self.enc(x, depth + 1, result)] for k, x in v.items()]}
        if isinstance(v, np.ndarray):
            if result:
                return {"nd": [list(v.shape), v.dtype.str]}
            return self._array(v)
        if isinstance(v, np.generic):
            return np_scalar(v)
        known = by_value(v)
        if known is not None:
            return known
        if result and is_handle_type(v):
            return {"h": self.register(v), "k": type(v).__name__}
        if isinstance(v, JitKernel):
            module = getattr(v.fn, "__module__", "") or ""
            return {"r": f"{module}:{getattr(v.fn, '__qualname__', v.name)}"}
        return {"o": type(v).__qualname__[:200]}

    def _array(self, arr: np.ndarray) -> dict:
        found = self._arrays.get(id(arr))
        if found is None or found[0] is not arr:
            found = self._arrays[id(arr)] = (arr, len(self._arrays))
        return {"a": found[1], "dt": arr.dtype.str, "sh": list(arr.shape), "c": bool(arr.flags.c_contiguous)}

    def real(self, v):
        """``v`` with every handle replaced by its object (what the real call receives)."""
        if type(v) is Live:
            return self.objs[v._h]
        if type(v) in (list, tuple):
            return type(v)(self.real(x) for x in v)
        if type(v) is dict:
            return {k: self.real(x) for k, x in v.items()}
        return v

    def wrap(self, v):
        """A result as the program sees it: API objects behind handles, everything else itself."""
        if is_handle_type(v):
            return self.proxy(self.register(v))
        if type(v) in (list, tuple):
            return type(v)(self.wrap(x) for x in v)
        return v

    def _known(self, v):
        """A kernel argument as kernel code sees it: objects the program got as handles stay handles."""
        h = self._ids.get(id(v))
        if h is not None and self.objs[h] is v:
            return self.proxy(h)
        return v

    # -- operations -------------------------------------------------------------------------------------
    def call(self, h: int, name: str, args: tuple, kwargs: dict):
        obj = self.objs[h]
        if not (name in ASC_CALLS if obj is real_asc else allowed(obj, "call", name)):
            raise AttributeError(f"{type(obj).__name__}.{name} is not part of the simulator's API")
        entry = ["c", h, name, [self.enc(a) for a in args], {k: self.enc(v) for k, v in kwargs.items()}, None]
        entry.extend(self._src())
        self._log(entry)
        fn = getattr(obj, name)
        try:
            result = fn(*self.real(args), **self.real(kwargs))
        except BaseException as exc:
            entry[5] = {"x": type(exc).__name__}
            raise
        entry[5] = self.enc(result, result=True)
        return self.wrap(result)

    def get(self, h: int, name: str):
        obj = self.objs[h]
        if obj is real_asc:
            if name in ASC_RAW or name in _MODULE_ATTRS:
                return getattr(real_asc, name)
            if name == "jit":
                return self.jit
            if name in ASC_CALLS:
                return _Method(self, h, name)
            raise AttributeError(f"module 'asc' has no attribute {name!r}")
        if allowed(obj, "call", name):
            return _Method(self, h, name)
        if not allowed(obj, "get", name):
            raise AttributeError(f"{type(obj).__name__}.{name} is not part of the simulator's API")
        entry = ["g", h, name, None, None, None]
        entry.extend(self._src())
        self._log(entry)
        try:
            result = getattr(obj, name)
        except BaseException as exc:
            entry[5] = {"x": type(exc).__name__}
            raise
        entry[5] = self.enc(result, result=True)
        return self.wrap(result)

    def jit(self, fn=None, **options):
        """``asc.jit``: the trainee's kernel, wrapped so every block's calls are recorded under its key."""
        if fn is None:
            return lambda f: self.jit(f, **options)
        tape = self

        def body(*args):
            ctx = RUNNING.get()
            key = tape.block_key(ctx)
            if key in tape.blocks:
                raise RecordingError(f"kernel block {key} ran twice")
            log = tape.blocks[key] = []
            try:
                return fn(*[tape._known(a) for a in args])
            except BaseException as exc:
                file, line = tape._origin(exc)
                log.append(["x", type(exc).__name__, str(exc)[:MAX_MESSAGE], file, line])
                raise

        body.__name__ = getattr(fn, "__name__", "kernel")
        body.__qualname__ = getattr(fn, "__qualname__", body.__name__)
        body.__doc__ = getattr(fn, "__doc__", None)
        params = _param_names(fn)
        body.__signature__ = inspect.Signature(
            [inspect.Parameter(p, inspect.Parameter.POSITIONAL_ONLY) for p in params]
        )
        kernel = real_asc.jit(body, **options)
        h = self.register(kernel)
        opts = {k: self.enc(v) for k, v in options.items()}
        entry = ["j", h, body.__name__, params, opts, {"h": h, "k": "JitKernel"}]
        entry.extend(self._src())
        self.host.append(entry)
        return self.proxy(h)

    def _origin(self, exc: BaseException) -> tuple[int, int]:
        """The program's line an exception escaping kernel code is blamed on (the engine's rule, tape skipped)."""
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename not in _SKIP]
        return (self._file(frames[-1].filename), frames[-1].lineno or 0) if frames else (-1, 0)

    # -- host bytes the device reads -----------------------------------------------------------------
    def watch_copies(self, sim: Simulation, h: int) -> None:
        reads = self.reads[h] = []

        def probe(seq: int, plan, when: str) -> None:
            if when == "before" and plan.direction != D2H and plan.source[1].where != "device":
                reads.append([seq, plan.source_bytes().copy()])

        sim.copy_probe = probe


class Live:
    """A handle on an API object: what the program holds instead of the object itself."""

    __slots__ = ("_h", "_t")

    def __init__(self, tape: Tape, h: int) -> None:
        object.__setattr__(self, "_t", tape)
        object.__setattr__(self, "_h", h)

    def __getattr__(self, name: str):
        if name in Live.__slots__:  # a Live made with __new__, not by an API call: no object behind it
            raise RecordingError(
                "an API object the program made itself (not one an API call returned) / "
                "程序自己构造的 API 对象（不是 API 调用返回的）"
            )
        if name.startswith("__") and name not in _MODULE_ATTRS:
            raise AttributeError(name)
        return self._t.get(self._h, name)

    def __setattr__(self, name: str, value) -> None:
        raise AttributeError(f"{type(self._t.objs[self._h]).__name__}.{name} cannot be set")

    def __getitem__(self, key):
        return self._t.call(self._h, "__getitem__", (key,), {})

    def __call__(self, *args, **kwargs):
        return self._t.call(self._h, "__call__", args, kwargs)

    def __repr__(self) -> str:
        return repr(self._t.objs[self._h])


class _Method:
    __slots__ = ("_h", "_name", "_t")

    def __init__(self, tape: Tape, h: int, name: str) -> None:
        self._t, self._h, self._name = tape, h, name

    def __call__(self, *args, **kwargs):
        if self._name == "__getitem__" or self._name.startswith("_"):
            raise AttributeError(self._name)
        return self._t.call(self._h, self._name, args, kwargs)

    def __repr__(self) -> str:
        return f"<API call {self._name}>"


class Recorder:
    """What a lesson's ``drive.collect`` uses in the child: simulations to record, values, outputs."""

    def __init__(self, tape: Tape, runs: dict, library: dict | None = None, hidden: tuple = ()) -> None:
        self.tape = tape
        self._runs = runs
        self._library = library or {}
        self.hidden = tuple(hidden)  # the hidden cases to run too (lessons.hidden.Case), drawn by the grader
        self.case = None  # the hidden case running now (or the one an exception escaped from)
        self.run_handles: dict[str, int] = {}
        self.values: dict[str, object] = {}
        self.outputs: dict[str, object] = {}

    @contextlib.contextmanager
    def hidden_case(self, case) -> Iterator[None]:
        """Around the drive's run of a hidden case: what the code prints goes nowhere, and an exception that
        escapes leaves ``case`` set, so the harness reports it by the case's kind, without its text."""
        from .hidden import quiet

        self.case = case
        with quiet():
            yield
        self.case = None

    def simulation(self, name: str) -> Live:
        """A recorded simulation for run ``name`` (its settings are the lesson's: ``drive.RUNS[name]``)."""
        if name in self.run_handles:
            raise RecordingError(f"run {name!r} was recorded twice")
        sim = Simulation(**self._runs[name])
        h = self.tape.register(sim)
        self.run_handles[name] = h
        self.tape.host.append(["s", h, name])
        self.tape.watch_copies(sim, h)
        return self.tape.proxy(h)

    def run(self, name: str, sim: Live) -> None:
        """The end of run ``name``: the grader finishes it (in its own simulation)."""
        self.tape.host.append(["e", sim._h, name])
        self.tape.objs[sim._h].finish()

    def library(self, name: str) -> Live:
        """One of the lesson's own services (``drive.LIBRARY[name]``), recorded like the simulator's API."""
        obj = self._library[name]
        known = self.tape._ids.get(id(obj))
        h = self.tape.register(obj)
        if known is None:
            self.tape.host.append(["L", h, name])
        return self.tape.proxy(h)

    def value(self, key: str, value) -> None:
        """An answer of the trainee's code (a plain value, judged as it is)."""
        self.values[key] = value

    def output(self, key: str, value) -> None:
        """A result the device computed (an array, a list of arrays, or None): the grader accepts it only
        if a copy from device memory a kernel wrote brought exactly these bytes back to the host."""
        self.outputs[key] = value


def install(tape: Tape) -> None:
    """Make ``engine.asc`` (and ``from engine import asc``) the recording stand-in for code imported from now."""
    import engine

    sys.modules["engine.asc"] = tape.asc
    engine.asc = tape.asc


def _param_names(fn) -> list[str]:
    """The kernel's positional parameter names (the views name GM buffers by them; nothing judges them)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in params if p.kind in kinds][:MAX_PARAMS]
