"""The channel from a graded child process to the grader: framed, typed data, never code.

A frame is ``MAGIC``, an 8-byte header length, a JSON header and raw array bytes. Arrays travel as
(dtype, shape, byte range) entries of the header, so the grader rebuilds them with ``np.frombuffer``
from a whitelist of plain numeric dtypes: nothing the child sends is unpickled or executed.

A child sends two frames: a small one with how it ended (read by the grader itself, size-capped), then,
if it got that far, the recording (decoded only by the trusted worker that replays it).
"""

from __future__ import annotations

import json
import struct
from typing import Any

import numpy as np

MAGIC = b"ASIMLSN1"
MAX_FRAME_BYTES = 512 << 20
_DTYPES = frozenset(
    ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64")
)


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


def _header(data: bytes, at: int) -> tuple[dict, int]:
    """The JSON header of the frame starting at ``at`` and where its array bytes begin."""
    if data[at : at + len(MAGIC)] != MAGIC or len(data) < at + len(MAGIC) + 8:
        raise WireError("not a result frame")
    (size,) = struct.unpack("<Q", data[at + len(MAGIC) : at + len(MAGIC) + 8])
    start = at + len(MAGIC) + 8
    try:
        header = json.loads(data[start : start + size])
    except ValueError as exc:
        raise WireError(f"frame header is not JSON: {exc}") from None
    return header, start + size


def split(data: bytes) -> list[bytes]:
    """Cut a channel's bytes into frames (each carries its own length); WireError if they do not parse."""
    frames = []
    at = 0
    while at < len(data):
        if data[at : at + len(MAGIC)] != MAGIC or len(data) < at + len(MAGIC) + 8:
            raise WireError("the result channel carried bytes that are not a frame")
        try:
            header, body_at = _header(data, at)
            end = body_at + sum(int(spec[3]) for spec in header.get("arrays", []))
        except (WireError, TypeError, IndexError, AttributeError, ValueError):
            raise WireError("a frame header does not parse") from None
        if end > len(data):
            raise WireError("the last frame is cut short")
        frames.append(data[at:end])
        at = end
    return frames


def decode(frame: bytes) -> Any:
    """The document of one frame; :class:`WireError` if it is not exactly one well-formed frame."""
    if len(frame) > MAX_FRAME_BYTES:
        raise WireError(f"frame of {len(frame)} B exceeds the limit of {MAX_FRAME_BYTES} B")
    header, body_at = _header(frame, 0)
    body = memoryview(frame)[body_at:]
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


def read_first(path, limit: int = 1 << 16) -> tuple[Any, int]:
    """The document of the first frame in file ``path`` (a small one, at most ``limit`` bytes, with no arrays)
    and where the next frame starts; WireError if there is none."""
    with open(path, "rb") as f:
        head = f.read(len(MAGIC) + 8)
        if len(head) < len(MAGIC) + 8 or head[: len(MAGIC)] != MAGIC:
            raise WireError("not a result frame")
        (size,) = struct.unpack("<Q", head[len(MAGIC) :])
        if size > limit:
            raise WireError(f"the first frame's header is {size} B, more than the {limit} B a status may take")
        frame = head + f.read(size)
    doc = decode(frame)
    return doc, len(frame)
