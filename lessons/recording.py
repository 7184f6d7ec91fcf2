"""A program recorded at the simulator's API boundary: the surface it may use and how its values are written.

A graded child records every call its code makes into the simulator (:mod:`lessons.tape`); the grader
re-executes the recording on a fresh simulation (:mod:`lessons.replay`). Both sides share this module:

* :data:`SURFACE` — per API class, the attributes a program may read and the methods it may call. It is
  the public pyACL / pyasc-shaped API and nothing else: no private name, no simulator internals (the
  trace, the findings, the runtime), so a recording can only do what an honest program could do.
* value kinds — how an argument or a result is written as plain JSON data. Scalars are themselves;
  containers are tagged (``{"l": [...]}``, ``{"t": [...]}``, ``{"d": [[k, v], ...]}``); an API object is a
  handle (``{"h": n, "k": "TQue"}``); enum members, dtypes and frozen value classes (``GlobalAddress``,
  ``MmadParams``, ``TCubeTiling``, ``TilingAddress`` ...) are written by value; a TilingData struct
  (``{"td": ...}``) and a raw tiling buffer (``{"rtd": ...}``) as their names, field types and values
  (:mod:`engine.host.tiling_record`), rebuilt and validated like a struct a program declares; a host
  numpy array is ``{"a": id, ...}`` (its identity: the bytes the device reads from host memory travel
  separately, as the copies read them);
  anything else is opaque (``{"o": type}``: it has no meaning to the simulator).

Decoding never imports a module named by the data: every class it may build is listed here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from enum import Enum
from types import MappingProxyType

import numpy as np

from engine import asc
from engine.aicore.cube_params import (
    CO2Layout,
    FixpipeConfig,
    FixpipeParamsV220,
    LoadData2DParams,
    LoadData3DParamsV2,
    MmadParams,
    Nd2NzParams,
    QuantModes,
)
from engine.aicore.launch import JitKernel, KernelType
from engine.aicore.matmul_tiling import TCubeTiling
from engine.aicore.pipes import HardEvent, Pipe, PipeID
from engine.aicore.tensor import DTYPES, DType, GlobalAddress, GlobalTensor, LocalTensor, Tile, TPosition
from engine.aicore.tiling_read import TilingAddress
from engine.aicore.tpipe import TBuf, TPipe, TQue
from engine.host.acl import Acl, Op, Rt, Util
from engine.host.tiling_data import Field, RawTilingData, StructField, TilingData, TilingDataError
from engine.host.tiling_record import raw_from_record, raw_record, struct_from_record, struct_record
from engine.profiles.profile import Profile
from engine.simulation import Simulation

MAX_DEPTH = 32  # nesting of one value
MAX_ITEMS = 1 << 16  # elements of one container


class RecordingError(ValueError):
    """A value or an operation a recording cannot hold, or a recording that does not decode."""


@dataclass(frozen=True)
class Members:
    get: frozenset = frozenset()
    call: frozenset = frozenset()


def api(get: str = "", call: str = "") -> Members:
    """Members from space-separated names: what may be read, what may be called."""
    return Members(frozenset(get.split()), frozenset(call.split()))


_m = api


# -- the API surface -------------------------------------------------------------------------------
SURFACE: MappingProxyType = MappingProxyType(
    {
        Simulation: _m("acl numerics profile", "name_tensor mark"),
        Acl: _m("rt util op", "init finalize"),
        Rt: _m(
            "",
            "set_device reset_device create_stream create_stream_with_config destroy_stream malloc free malloc_host "
            "free_host memset memcpy memcpy_async synchronize_stream synchronize_device create_event record_event "
            "stream_wait_event synchronize_event event_elapsed_time destroy_event launch_kernel",
        ),
        Util: _m("", "numpy_to_ptr ptr_to_numpy"),
        Op: _m("", "matmul"),
        GlobalTensor: _m("size dtype byte_offset", "set_global_buffer __getitem__ tile"),
        LocalTensor: _m("count dtype shape nbytes position offset", "__getitem__ reshape tile"),
        Tile: _m("rows cols start stride dtype nbytes tensor"),
        TPipe: _m("", "init_buffer init reset"),
        TQue: _m("position", "alloc_tensor enque deque free_tensor has_tensor_in_que"),
        TBuf: _m("position", "get"),
        JitKernel: _m("name kernel_type"),
    }
)
ENUMS: MappingProxyType = MappingProxyType(
    {c.__name__: c for c in (TPosition, HardEvent, PipeID, KernelType, Pipe, QuantModes, CO2Layout)}
)
VALUES: MappingProxyType = MappingProxyType(
    {
        c.__name__: c
        for c in (
            GlobalAddress,
            TCubeTiling,
            TilingAddress,
            Nd2NzParams,
            LoadData2DParams,
            LoadData3DParamsV2,
            MmadParams,
            FixpipeParamsV220,
            FixpipeConfig,
        )
    }
)
STRUCTS = (TilingData, Field, StructField)  # classes a program declares its TilingData with: it gets them as they are
DTYPE_NAMES: MappingProxyType = MappingProxyType({d.name: d for d in DTYPES})
# names of ``asc`` a program gets as themselves (values, enums, value classes) and those it calls through the tape
ASC_RAW = frozenset(
    name
    for name in asc.__all__
    if isinstance(getattr(asc, name), DType)
    or getattr(asc, name) in (DType, *ENUMS.values(), *VALUES.values(), *STRUCTS)
)
ASC_CALLS = frozenset(name for name in asc.__all__ if name not in ASC_RAW and name != "jit")
NP_DTYPES = frozenset(
    ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64")
)


def members(obj) -> Members | None:
    """What a program may do with ``obj``, or None if it is not an API object.

    An instance of an API class has its entry in :data:`SURFACE`; a lesson's own service (a class a drive
    lists in ``LIBRARY``, such as lesson 9's host tiler) declares ``__api__ = Members(...)`` on its class, and
    the class itself may be called (constructed).
    """
    found = SURFACE.get(type(obj))
    if found is not None:
        return found
    if isinstance(obj, type):
        return _CONSTRUCT if isinstance(obj.__dict__.get("__api__"), Members) else None
    api = getattr(type(obj), "__api__", None)
    return api if isinstance(api, Members) else None


_CONSTRUCT = Members(frozenset(), frozenset(("__call__",)))


def allowed(obj, op: str, name: str) -> bool:
    """May a program ``get`` attribute ``name`` of ``obj``, or ``call`` its method ``name``?"""
    if obj is asc:
        return op == "call" and name in ASC_CALLS
    found = members(obj)
    if found is None:
        return False
    return name in (found.get if op == "get" else found.call)


def service(obj) -> bool:
    """Is ``obj`` a lesson's own service (or its class), rather than the simulator's API?"""
    return obj is not asc and type(obj) not in SURFACE


def is_handle_type(value) -> bool:
    """Does ``value`` travel as a handle (an API object with state or identity)?"""
    return value is asc or members(value) is not None


# -- values as plain data ----------------------------------------------------------------------------
def plain(value) -> bool:
    return value is None or type(value) in (bool, int, float, str)


def by_value(value):
    """The plain-data form of an enum member, dtype, value object or profile, or None if ``value`` is none."""
    if isinstance(value, Enum) and type(value).__name__ in ENUMS and ENUMS[type(value).__name__] is type(value):
        return {"e": type(value).__name__, "n": value.name}
    if isinstance(value, DType) and DTYPE_NAMES.get(value.name) == value:
        return {"y": value.name}
    if type(value) in VALUES.values():
        return {"v": type(value).__name__, "f": field_values(value)}
    if isinstance(value, TilingData) and type(value) is not TilingData:
        return {"td": struct_record(value)}
    if type(value) is RawTilingData:
        return {"rtd": raw_record(value)}
    if type(value) is slice and all(plain(x) for x in (value.start, value.stop, value.step)):
        return {"sl": [value.start, value.stop, value.step]}
    if isinstance(value, Profile):
        return {"p": value.name}
    if isinstance(value, np.dtype) and value.name in NP_DTYPES:
        return {"npd": value.name}
    if isinstance(value, type) and issubclass(value, np.generic) and np.dtype(value).name in NP_DTYPES:
        return {"npt": np.dtype(value).name}
    return None


def np_scalar(value) -> dict:
    return {"s": value.dtype.name, "x": value.item()}


def from_value(doc: dict, profile: Profile | None = None):
    """Rebuild a by-value object (:func:`by_value`); RecordingError if it names anything not listed here."""
    try:
        if "e" in doc:
            return ENUMS[doc["e"]][doc["n"]]
        if "y" in doc:
            return DTYPE_NAMES[doc["y"]]
        if "v" in doc:
            cls = VALUES[doc["v"]]
            names = {f.name for f in fields(cls)}
            given = doc["f"]
            if not isinstance(given, dict) or set(given) != names:
                raise RecordingError(f"{doc['v']} needs the fields {sorted(names)}")
            args = {}
            for k, v in given.items():
                if isinstance(v, dict) and ("y" in v or "e" in v):
                    args[k] = from_value(v)
                elif isinstance(v, dict) and set(v) == {"tp"} and isinstance(v["tp"], list):
                    if not all(plain(x) for x in v["tp"]) or len(v["tp"]) > MAX_ITEMS:
                        raise RecordingError(f"{doc['v']}.{k} holds something other than plain values")
                    args[k] = tuple(v["tp"])
                elif plain(v):
                    args[k] = v
                else:
                    raise RecordingError(f"{doc['v']}.{k} is not a plain value")
            return cls(**args)
        if "td" in doc or "rtd" in doc:
            return struct_from_record(doc["td"]) if "td" in doc else raw_from_record(doc["rtd"])
        if "s" in doc:
            if doc["s"] not in NP_DTYPES:
                raise RecordingError(f"numpy scalar of dtype {doc['s']!r}")
            return np.dtype(doc["s"]).type(doc["x"])
        if "sl" in doc:
            start, stop, step = doc["sl"]
            if not all(plain(x) for x in (start, stop, step)):
                raise RecordingError("a slice of something other than numbers")
            return slice(start, stop, step)
        if "npd" in doc or "npt" in doc:
            name = doc.get("npd", doc.get("npt"))
            if name not in NP_DTYPES:
                raise RecordingError(f"numpy dtype {name!r}")
            return np.dtype(name) if "npd" in doc else np.dtype(name).type
    except TilingDataError as exc:
        raise RecordingError(f"a tiling value does not decode: {exc}") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise RecordingError(f"a value does not decode: {type(exc).__name__}: {exc}") from None
    raise RecordingError(f"unknown value kind {sorted(doc)[:3]}")


def field_values(value) -> dict:
    """A by-value object's fields as plain data (dtypes and enums inside written by value)."""
    out = {}
    for f in fields(value):
        v = getattr(value, f.name)
        if isinstance(v, tuple) and all(plain(x) for x in v):
            out[f.name] = {"tp": list(v)}
        else:
            out[f.name] = v if plain(v) else by_value(v)
    return out


def same(recorded, actual) -> bool:
    """Is ``actual`` (a plain value) what was recorded? Floats compare exactly, NaN equal to NaN."""
    if type(recorded) is not type(actual):
        return False
    if isinstance(actual, float) and math.isnan(actual):
        return math.isnan(recorded)
    return recorded == actual
