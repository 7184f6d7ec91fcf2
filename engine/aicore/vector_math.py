"""What each vector instruction computes, on numpy arrays.

The one definition of the Vector unit's arithmetic: the kernel model calls it when an instruction
runs with numerics, and the replay calls it to show what a UB slot held at any step. ``params`` is
the instruction's recorded parameters (``(scalar,)`` for ``muls``, ``adds``, ``duplicate``).
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np

# name -> (numpy function of the source arrays (and params), number of sources, slow: exp/ln/sqrt/div class)
_BINARY = MappingProxyType(
    {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "max": np.maximum, "min": np.minimum}
)
_UNARY = MappingProxyType({"exp": np.exp, "ln": np.log, "sqrt": np.sqrt, "abs": np.abs})
SLOW = frozenset(("div", "exp", "ln", "sqrt"))
OPS = frozenset((*_BINARY, *_UNARY, "relu", "muls", "adds", "maxs", "mins", "duplicate", "cast", "reduce_sum"))


def evaluate(op: str, srcs: list[np.ndarray], params: tuple, out_dtype, count: int) -> np.ndarray:
    """The ``count`` result elements of vector instruction ``op`` (``reduce_sum``: one element)."""
    with np.errstate(all="ignore"):
        if op in _BINARY:
            out = _BINARY[op](srcs[0], srcs[1])
        elif op in _UNARY:
            out = _UNARY[op](srcs[0])
        elif op == "relu":
            out = np.maximum(srcs[0], 0)
        elif op == "muls":
            out = srcs[0] * np.asarray(params[0], dtype=srcs[0].dtype)
        elif op == "adds":
            out = srcs[0] + np.asarray(params[0], dtype=srcs[0].dtype)
        elif op == "maxs":
            out = np.maximum(srcs[0], np.asarray(params[0], dtype=srcs[0].dtype))
        elif op == "mins":
            out = np.minimum(srcs[0], np.asarray(params[0], dtype=srcs[0].dtype))
        elif op == "duplicate":
            out = np.full(count, params[0], dtype=out_dtype)
        elif op == "cast":
            out = srcs[0]
        elif op == "reduce_sum":
            out = np.array([srcs[0].astype(np.float32).sum()])
        else:
            raise ValueError(f"unknown vector op {op!r}")
        return np.asarray(out).astype(out_dtype, copy=False)
