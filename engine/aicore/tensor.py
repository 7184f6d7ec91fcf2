"""Data types, positions, and the tensors kernel code handles.

* :class:`GlobalAddress` — a device pointer with a dtype, what the host passes to a kernel.
* :class:`GlobalTensor` — a typed window on GM (``set_global_buffer(addr, n)``).
* :class:`LocalTensor` — a typed window on one on-chip buffer (UB, L1, L0A, L0B, L0C) of the core.
* :meth:`tile` on either gives a 2-D view ``(rows, cols)`` with a row stride, the form matrix
  copies take. Tiles are kept row-major (ND); the real hardware's fractal (Nz/Zz) layouts are
  not modelled, but the bytes moved and the 16x16x16 fractals computed are counted the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from .running import current

if TYPE_CHECKING:
    from .context import BlockContext


@dataclass(frozen=True)
class DType:
    name: str
    np: type
    size: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "size", np.dtype(self.np).itemsize)

    def sizeof(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"asc.{self.name}"


half = float16 = DType("float16", np.float16)
float32 = DType("float32", np.float32)
int32 = DType("int32", np.int32)
int16 = DType("int16", np.int16)
int8 = DType("int8", np.int8)
uint8 = DType("uint8", np.uint8)
uint16 = DType("uint16", np.uint16)
uint32 = DType("uint32", np.uint32)
int64 = DType("int64", np.int64)
uint64 = DType("uint64", np.uint64)
DTYPES = (float16, float32, int32, int16, int8, uint8, uint16, uint32, int64, uint64)


def as_dtype(value) -> DType:
    if isinstance(value, DType):
        return value
    want = np.dtype(value)
    for d in DTYPES:
        if np.dtype(d.np) == want:
            return d
    raise TypeError(f"unsupported dtype {value!r}; use one of {', '.join(d.name for d in DTYPES)}")


class Buffer(Enum):
    """On-chip buffers; the value is the trace's ``buf`` code."""

    GM = 0
    L1 = 1
    L0A = 2
    L0B = 3
    L0C = 4
    UB = 5
    BT = 6
    FB = 7


class TPosition(Enum):
    """Logical positions (Ascend C ``TPosition``); ``buffer`` is the on-chip buffer each lives in."""

    GM = "GM"
    VECIN = "VECIN"
    VECOUT = "VECOUT"
    VECCALC = "VECCALC"
    A1 = "A1"
    B1 = "B1"
    A2 = "A2"
    B2 = "B2"
    CO1 = "CO1"
    CO2 = "CO2"

    @property
    def buffer(self) -> Buffer:
        return _POSITION_BUFFER[self.value]


_POSITION_BUFFER = MappingProxyType(
    {
        "GM": Buffer.GM,
        "VECIN": Buffer.UB,
        "VECOUT": Buffer.UB,
        "VECCALC": Buffer.UB,
        "A1": Buffer.L1,
        "B1": Buffer.L1,
        "A2": Buffer.L0A,
        "B2": Buffer.L0B,
        "CO1": Buffer.L0C,
        "CO2": Buffer.UB,
    }
)


@dataclass(frozen=True)
class GlobalAddress:
    """A device pointer and the dtype of what it points to; ``+`` moves by elements."""

    ptr: int
    dtype: DType = float16

    def __add__(self, elements: int) -> GlobalAddress:
        return GlobalAddress(self.ptr + int(elements) * self.dtype.sizeof(), self.dtype)


class GlobalTensor:
    """A typed window of GM. Bound to the running block's simulation when first used."""

    __slots__ = ("_alloc", "_ctx", "_offset", "dtype", "size")

    def __init__(self) -> None:
        self._alloc = None
        self._offset = 0
        self.dtype = float16
        self.size = 0
        self._ctx = None

    def set_global_buffer(self, addr: GlobalAddress, size: int | None = None) -> None:
        ctx = current()
        if not isinstance(addr, GlobalAddress):
            raise TypeError(f"set_global_buffer needs a GlobalAddress, got {type(addr).__name__}")
        alloc = ctx.gm_allocation(addr.ptr)
        offset = addr.ptr - alloc.ptr
        limit = (alloc.size - offset) // addr.dtype.sizeof()
        if size is None:
            size = limit
        self._ctx = ctx
        self._alloc = alloc
        self._offset = offset
        self.dtype = addr.dtype
        self.size = int(size)

    @property
    def alloc(self):
        if self._alloc is None:
            raise RuntimeError("GlobalTensor used before set_global_buffer")
        return self._alloc

    def __getitem__(self, key) -> GlobalTensor:
        """``gm[offset:]`` (elements): the same buffer starting further on."""
        if not isinstance(key, slice) or key.step not in (None, 1):
            raise TypeError("GlobalTensor supports gm[offset:] or gm[start:stop] slices")
        start = key.start or 0
        stop = self.size if key.stop is None else key.stop
        out = GlobalTensor()
        out._ctx = self._ctx
        out._alloc = self.alloc
        out._offset = self._offset + start * self.dtype.sizeof()
        out.dtype = self.dtype
        out.size = max(0, stop - start)
        return out

    def tile(self, row: int, col: int, rows: int, cols: int, row_stride: int) -> Tile:
        """The ``rows x cols`` block at ``(row, col)`` of a row-major matrix ``row_stride`` elements wide."""
        return Tile(self, row * row_stride + col, rows, cols, row_stride)

    @property
    def byte_offset(self) -> int:
        return self._offset

    def __repr__(self) -> str:
        return f"GlobalTensor({self.dtype!r}, {self.size} elements at +{self._offset} B)"


class LocalTensor:
    """A typed window of one on-chip buffer of the running core."""

    __slots__ = ("buffer", "count", "dtype", "offset", "owner", "position", "shape", "slot")

    def __init__(self, position: TPosition, offset: int, dtype: DType, count: int, slot: int = 255, owner=None):
        self.position = position
        self.buffer = position.buffer
        self.offset = offset  # bytes from the start of the buffer
        self.dtype = dtype
        self.count = count
        self.slot = slot
        self.owner = owner  # the TQue / TBuf it came from
        self.shape: tuple[int, int] | None = None

    @property
    def nbytes(self) -> int:
        return self.count * self.dtype.sizeof()

    def __getitem__(self, key) -> LocalTensor:
        if not isinstance(key, slice) or key.step not in (None, 1):
            raise TypeError("LocalTensor supports t[offset:] or t[start:stop] slices")
        start = key.start or 0
        stop = self.count if key.stop is None else key.stop
        out = LocalTensor(
            self.position,
            self.offset + start * self.dtype.sizeof(),
            self.dtype,
            max(0, stop - start),
            self.slot,
            self.owner,
        )
        return out

    def reshape(self, rows: int, cols: int) -> LocalTensor:
        """Give the tensor a 2-D shape (row-major), for matrix instructions."""
        if rows * cols > self.count:
            raise ValueError(f"reshape({rows}, {cols}) needs {rows * cols} elements, the tensor has {self.count}")
        out = LocalTensor(self.position, self.offset, self.dtype, rows * cols, self.slot, self.owner)
        out.shape = (rows, cols)
        return out

    def tile(self, row: int, col: int, rows: int, cols: int) -> Tile:
        if self.shape is None:
            raise ValueError("tile() needs a 2-D tensor: reshape(rows, cols) it first")
        return Tile(self, row * self.shape[1] + col, rows, cols, self.shape[1])

    def view(self, ctx: BlockContext) -> np.ndarray:
        return ctx.local_array(self)

    def __repr__(self) -> str:
        return f"LocalTensor({self.position.name}, {self.dtype!r}, {self.count} elements at +{self.offset} B)"


@dataclass(frozen=True)
class Tile:
    """A 2-D block of a tensor: ``rows x cols`` elements starting at element ``start``, ``stride`` apart."""

    tensor: GlobalTensor | LocalTensor
    start: int
    rows: int
    cols: int
    stride: int

    @property
    def dtype(self) -> DType:
        return self.tensor.dtype

    @property
    def nbytes(self) -> int:
        return self.rows * self.cols * self.dtype.sizeof()
