"""``gert::Shape``: the shape an operator's InferShape and tiling functions read and write.

CANN's host-side operator code sees a tensor's shape as a ``gert::Shape``: ``GetDimNum``, ``GetDim(i)``,
``SetDimNum``, ``SetDim(i, v)`` and ``GetShapeSize`` (the product of the dims), at most ``kMaxDimNum`` = 8
dims (the metadef header exe_graph/runtime/shape.h). Here the same calls, snake_case; ``copy_from`` is
C++'s assignment ``*output_shape = *input_shape`` (the AddCustom sample's InferShape). A bad dim or index
raises :class:`ShapeError` naming the field, the limit and the value, in both languages.
"""

from __future__ import annotations

import numpy as np

MAX_DIM_NUM = 8  # gert::Shape::kMaxDimNum (metadef exe_graph/runtime/shape.h)
MAX_DIM = (1 << 31) - 1  # the simulator's limit on one dim (ASSUMPTION: int64_t in CANN; kept to int32 here)


class ShapeError(ValueError):
    """A shape, dim or index is not allowed: ``field``, ``limit`` and ``value``; ``message_zh`` in Chinese."""

    def __init__(self, field: str, limit: str, value, limit_zh: str) -> None:
        super().__init__(f"{field} {limit}, got {value!r}")
        self.field, self.limit, self.value = field, limit, value
        self.message_zh = f"{field} {limit_zh}，实际为 {value!r}"


def _int(field: str, value, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or not low <= value <= high:
        raise ShapeError(field, f"is an integer {low}..{high}", value, f"必须是 {low}..{high} 的整数")
    return int(value)


def check_dims(field: str, dims) -> tuple[int, ...]:
    """``dims`` as a tuple of 1 to MAX_DIM_NUM dims, each 0..MAX_DIM, or ShapeError."""
    if not isinstance(dims, tuple | list) or not 1 <= len(dims) <= MAX_DIM_NUM:
        shown = len(dims) if isinstance(dims, tuple | list) else type(dims).__name__
        raise ShapeError(field, f"has 1..{MAX_DIM_NUM} dims", shown, f"必须有 1..{MAX_DIM_NUM} 个维度")
    return tuple(_int(f"{field}[{i}]", d, 0, MAX_DIM) for i, d in enumerate(dims))


class Shape:
    """``gert::Shape``: up to 8 dims."""

    def __init__(self, dims=()) -> None:
        self._dims = list(check_dims("Shape", dims)) if len(dims) else []

    def get_dim_num(self) -> int:
        return len(self._dims)

    def get_dim(self, index: int) -> int:
        return self._dims[_int("GetDim index", index, 0, len(self._dims) - 1)]

    def set_dim_num(self, num: int) -> None:
        num = _int("SetDimNum num", num, 0, MAX_DIM_NUM)
        self._dims = (self._dims + [0] * num)[:num]

    def set_dim(self, index: int, value: int) -> None:
        self._dims[_int("SetDim index", index, 0, len(self._dims) - 1)] = _int("SetDim value", value, 0, MAX_DIM)

    def get_shape_size(self) -> int:
        """The number of elements: the product of the dims (1 for no dims, as CANN's scalar shape)."""
        return int(np.prod(self._dims, dtype=np.int64)) if self._dims else 1

    def copy_from(self, other: Shape) -> None:
        """``*this = other``: the same dims."""
        if not isinstance(other, Shape):
            raise ShapeError("copy_from", "takes a Shape", type(other).__name__, "的参数必须是 Shape")
        self._dims = list(other._dims)

    def dims(self) -> tuple[int, ...]:
        return tuple(self._dims)

    def __eq__(self, other) -> bool:
        return isinstance(other, Shape) and self._dims == other._dims

    def __hash__(self) -> int:
        return hash(tuple(self._dims))

    def __repr__(self) -> str:
        return f"Shape{tuple(self._dims)}"
