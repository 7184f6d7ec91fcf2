"""The Cube's data layouts: ND, the fractal formats NZ / ZZ / ZN, and how each instruction rearranges data.

One definition, used by the engine's instructions (:mod:`engine.aicore.cube_ops`) on the real buffers and by
the replay (``app/present/tiles.py``) to rebuild what a buffer slot holds: the same bytes in the same order.

Facts (the ADK "矩阵计算分形介绍" pages, the ``Mmad``, ``DataCopy`` ND2NZ, ``LoadData`` and ``Fixpipe`` API
pages; see docs/sources.md):

* a *fractal* is 16 rows x C0 columns, C0 = 32 B / element size (16 for fp16, 8 for fp32): 512 bytes;
  in L0C the fractal is 16 x 16 whatever the type (1024 bytes of fp32);
* **ND** is row-major (GM, UB); **NZ** (CANN's Nz, "大N小z") cuts a matrix into fractals, stores them column of
  fractals by column of fractals (大N), each fractal row-major (小z): L1 and L0C;
  **ZZ** (Zz, "大Z小z") stores the fractals row by row, each row-major: L0A, the Mmad's left matrix;
  **ZN** (Zn, "大Z小n") stores the fractals row by row, each column-major: L0B, the Mmad's right matrix;
* ``DataCopy`` with ``Nd2NzParams`` turns ND in GM into NZ in L1, padding each row with zeros to 32 bytes;
* ``LoadData`` (2-D) moves whole 512-byte fractals L1 -> L0A / L0B, optionally transposing each one:
  NZ -> ZZ by walking each row of fractals, NZ -> ZN by transposing; ``LoadData`` (3-D, the
  ``LoadData3DParamsV2`` matmul use) does NZ -> ZZ (L0A) or NZ -> ZN (L0B, always transposed) in one go;
* ``Mmad`` reads ZZ from L0A and ZN from L0B and writes NZ to L0C; ``Fixpipe`` reads NZ from L0C and
  writes ND (NZ2ND, ``CFG_ROW_MAJOR``) or NZ (``CFG_NZ``).

The simulator's assumptions: the rows a copy adds to complete its last fractal (a tile of 40 rows fills
48) are written as zeros, where the hardware leaves whatever L1 held; the Cube multiplies exactly ``k``
of K and writes whole fractals of C.

Values are handled as the rows of a :class:`~engine.trace.detail.Rect` (an instruction's footprint),
so an instruction's source and destination footprints map to each other by reshaping. *Tags* say where
each fractal came from: per fractal ``(source, r1, c1, transposed)``, the source being a copy that
brought a tile from GM (``ND`` / ``EMPTY`` codes otherwise), ``(r1, c1)`` the fractal's place in that
tile, ``transposed`` whether it is stored column-major. They travel with the data, and
:func:`classify` reads a format from them.
"""

from __future__ import annotations

from enum import Enum
from types import MappingProxyType

import numpy as np

FRACTAL_ROWS = 16
DATA_BLOCK = 32  # bytes: C0_SIZE, one row of a fractal
UNIT = 512  # bytes of one L1 / L0A / L0B fractal
L0C_UNIT = 1024  # bytes of one L0C fractal (16 x 16 fp32)
L0C_C0 = 16  # elements per row of an L0C fractal

EMPTY = -1  # tag source: no instruction wrote this fractal
ND = -2  # tag source: a plain (row-major) copy wrote it
SRC, R1, C1, T = 0, 1, 2, 3  # columns of a tag array


class Format(Enum):
    """What a region of a buffer holds; ``value`` is its short name."""

    ND = "ND"  # row-major
    NZ = "NZ"  # fractals column by column, each row-major (大N小z)
    ZZ = "ZZ"  # fractals row by row, each row-major (大Z小z)
    ZN = "ZN"  # fractals row by row, each column-major (大Z小n)
    NN = "NN"  # fractals column by column, each column-major (大N小n)
    MIXED = "MIXED"  # fractals, but in no single one of the layouts above
    EMPTY = "EMPTY"  # nothing written there


# each format in words, English and Chinese (errors name the expected and the given format with these)
DESCRIBED = MappingProxyType(
    {
        Format.ND: ("ND (row-major rows)", "ND（按行连续存放）"),
        Format.NZ: (
            "NZ (CANN's Nz: columns of fractals, each fractal row-major)",
            "NZ（大N小z：分形按列排列，分形内行优先）",
        ),
        Format.ZZ: (
            "ZZ (CANN's Zz: rows of fractals, each fractal row-major)",
            "ZZ（大Z小z：分形按行排列，分形内行优先）",
        ),
        Format.ZN: (
            "ZN (CANN's Zn: rows of fractals, each fractal column-major)",
            "ZN（大Z小n：分形按行排列，分形内列优先）",
        ),
        Format.NN: (
            "NN (columns of fractals, each fractal column-major)",
            "NN（大N小n：分形按列排列，分形内列优先）",
        ),
        Format.MIXED: ("fractals in no single layout", "不属于任何一种排布的分形"),
        Format.EMPTY: ("nothing (no instruction wrote it)", "空（没有指令写过）"),
    }
)


def c0(itemsize: int) -> int:
    """Elements in one 32-byte row of a fractal."""
    return DATA_BLOCK // itemsize


def up(x: int, multiple: int) -> int:
    return -(-x // multiple) * multiple


def count(x: int, size: int) -> int:
    """How many pieces of ``size`` cover ``x`` (a ceiling division)."""
    return -(-x // size)


# -- values -----------------------------------------------------------------------------------------------------
def nd2nz(src: np.ndarray, c0_: int, rows: int) -> np.ndarray:
    """``DataCopy`` ND2NZ: an ``n x d`` ND tile as the rows of its NZ footprint, one row per column of
    fractals: ``(ceil(d / c0), rows * c0)``. Columns pad with zeros to a whole 32 bytes (documented); rows
    ``n .. rows`` are zeros too (the simulator's assumption)."""
    n, d = src.shape
    cols = count(d, c0_)
    padded = np.zeros((rows, cols * c0_), dtype=src.dtype)
    padded[:n, :d] = src
    return np.ascontiguousarray(padded.reshape(rows, cols, c0_).transpose(1, 0, 2)).reshape(cols, rows * c0_)


def load2d(src: np.ndarray, repeat: int, shape: tuple[int, int], transpose: bool) -> np.ndarray:
    """``LoadData`` (2-D): ``repeat`` fractals of ``shape`` (rows, cols), each transposed when asked, in order.
    ``src`` holds them in order (any 2-D form of the footprint); the result is ``(repeat, fractal elements)``."""
    blocks = np.asarray(src).reshape(repeat, *shape)
    if transpose:
        blocks = blocks.transpose(0, 2, 1)
    return np.ascontiguousarray(blocks).reshape(repeat, shape[0] * shape[1])


def load3d(src: np.ndarray, rows: int, cols: int, c0_: int, order: str) -> np.ndarray:
    """``LoadData`` (3-D, the matmul use): a ``rows x cols`` window of an NZ matrix, given as its footprint's
    rows (one per column of fractals, ``(cols / c0, rows * c0)``), into one row of fractals: ``"ZZ"`` (L0A),
    ``"ZN"`` (L0B: every fractal transposed) or ``"ZZ_T"`` (L0A with ``en_transpose``: the window transposed,
    its fractals and their places)."""
    r1, k1 = rows // FRACTAL_ROWS, cols // c0_
    blocks = np.asarray(src).reshape(k1, r1, FRACTAL_ROWS, c0_)  # [j, i, r, c]
    if order == "ZZ":
        out = blocks.transpose(1, 0, 2, 3)
    elif order == "ZN":
        out = blocks.transpose(1, 0, 3, 2)
    else:
        out = blocks.transpose(0, 1, 3, 2)
    return np.ascontiguousarray(out).reshape(1, -1)


def zz_matrix(flat: np.ndarray, r1: int, c1: int, c0_: int) -> np.ndarray:
    """The ``(16 r1) x (c0 c1)`` matrix a ZZ region of ``r1 x c1`` fractals holds."""
    f = np.asarray(flat).reshape(-1)[: r1 * c1 * FRACTAL_ROWS * c0_]
    return f.reshape(r1, c1, FRACTAL_ROWS, c0_).transpose(0, 2, 1, 3).reshape(r1 * FRACTAL_ROWS, c1 * c0_)


def zn_matrix(flat: np.ndarray, k1: int, n1: int, c0_: int) -> np.ndarray:
    """The ``(c0 k1) x (16 n1)`` matrix a ZN region of ``k1 x n1`` fractals holds (each stored n-major)."""
    f = np.asarray(flat).reshape(-1)[: k1 * n1 * FRACTAL_ROWS * c0_]
    return f.reshape(k1, n1, FRACTAL_ROWS, c0_).transpose(0, 3, 1, 2).reshape(k1 * c0_, n1 * FRACTAL_ROWS)


def nz_matrix(rows_of: np.ndarray, m16: int, n1: int, c0_: int) -> np.ndarray:
    """The ``m16 x (c0 n1)`` matrix an NZ footprint holds, given as its rows (one per column of fractals)."""
    blocks = np.asarray(rows_of).reshape(n1, m16, c0_)
    return blocks.transpose(1, 0, 2).reshape(m16, n1 * c0_)


def nz_rows(matrix: np.ndarray, c0_: int) -> np.ndarray:
    """An ``m16 x (c0 n1)`` matrix as the rows of its contiguous NZ footprint: ``(n1, m16 * c0)``."""
    m16, n = matrix.shape
    n1 = n // c0_
    return np.ascontiguousarray(matrix.reshape(m16, n1, c0_).transpose(1, 0, 2)).reshape(n1, m16 * c0_)


# -- tags ---------------------------------------------------------------------------------------------------------
def tags(n: int, source: int = EMPTY) -> np.ndarray:
    out = np.zeros((n, 4), dtype=np.int64)
    out[:, SRC] = source
    return out


def nd2nz_tags(source: int, r1: int, c1: int) -> np.ndarray:
    """The tags of an ND2NZ copy's fractals in footprint order (column of fractals by column): ``(c1 * r1, 4)``."""
    out = tags(r1 * c1, source)
    out[:, R1] = np.tile(np.arange(r1), c1)
    out[:, C1] = np.repeat(np.arange(c1), r1)
    return out


def grid_tags(source: int, r1: int, c1: int, order: str) -> np.ndarray:
    """Tags of an ``r1 x c1`` grid of fractals stored in ``order`` (``"NZ"``: column by column; ``"ZZ"``: row
    by row), none transposed (an Mmad's result)."""
    out = tags(r1 * c1, source)
    i, j = np.divmod(np.arange(r1 * c1), c1) if order == "ZZ" else np.divmod(np.arange(r1 * c1), r1)[::-1]
    out[:, R1], out[:, C1] = i, j
    return out


def load3d_tags(src: np.ndarray, r1: int, k1: int, order: str) -> np.ndarray:
    """:func:`load3d` on tags: ``src`` in the window's footprint order (``k1`` columns of ``r1`` fractals)."""
    blocks = np.asarray(src).reshape(k1, r1, 4)
    out = blocks.transpose(1, 0, 2) if order in ("ZZ", "ZN") else blocks
    out = out.reshape(-1, 4).copy()
    if order != "ZZ":
        out[:, T] ^= 1
    return out


class TagStore:
    """One block's tags: per on-chip buffer, a row of :data:`SRC`, :data:`R1`, :data:`C1`, :data:`T` per
    fractal-sized unit (512 bytes; 1024 in L0C), and a counter naming the copies that brought tiles in."""

    def __init__(self) -> None:
        self._arrays: dict[int, np.ndarray] = {}
        self._sources = 0

    def of(self, buf: int, capacity: int, unit: int) -> np.ndarray:
        found = self._arrays.get(buf)
        if found is None:
            found = self._arrays[buf] = tags(max(1, capacity // unit))
        return found

    def new_source(self) -> int:
        self._sources += 1
        return self._sources


def readings(tag: np.ndarray, rows: int, cols: int) -> list[tuple[bool, Format]]:
    """The ways a region of ``rows x cols`` fractals can be read, from its tags in storage order: per way of
    reading its source that fits the grid (``False``: as stored; ``True``: transposed, so that an NZ copy
    of B^T is ZN of B), whether it is transposed and the format it gives. Empty when the tags are not one
    source's fractals or no way fits."""
    tag = np.asarray(tag).reshape(-1, 4)
    src = tag[:, SRC]
    if not len(tag) or (src < 0).any() or (src != src[0]).any():  # one source's fractals only
        return []
    p = np.arange(len(tag))
    found = []
    for transposed in (False, True):
        i, j, t = (tag[:, C1], tag[:, R1], 1 - tag[:, T]) if transposed else (tag[:, R1], tag[:, C1], tag[:, T])
        i, j = i - i.min(), j - j.min()
        if i.max() + 1 != rows or j.max() + 1 != cols:
            continue
        outer = "Z" if (p == i * cols + j).all() else ("N" if (p == j * rows + i).all() else "")
        inner = "Z" if (t == 0).all() else ("N" if (t == 1).all() else "")
        found.append((transposed, Format(outer + inner) if outer and inner else Format.MIXED))
    return found


def classify(tag: np.ndarray, rows: int, cols: int) -> tuple[Format, ...]:
    """The formats a region of ``rows x cols`` fractals holds (:func:`readings`); a single ``EMPTY``, ``ND`` or
    ``MIXED`` when it holds no single source's fractals in that grid."""
    src = np.asarray(tag).reshape(-1, 4)[:, SRC]
    if (src == EMPTY).any():
        return (Format.EMPTY,)
    if (src == ND).any():
        return (Format.ND,)
    return tuple(fmt for _t, fmt in readings(tag, rows, cols)) or (Format.MIXED,)


__all__ = (
    "DATA_BLOCK",
    "DESCRIBED",
    "EMPTY",
    "FRACTAL_ROWS",
    "L0C_C0",
    "L0C_UNIT",
    "ND",
    "UNIT",
    "Format",
    "TagStore",
    "c0",
    "classify",
    "count",
    "grid_tags",
    "load2d",
    "load3d",
    "load3d_tags",
    "nd2nz",
    "nd2nz_tags",
    "nz_matrix",
    "nz_rows",
    "readings",
    "tags",
    "up",
    "zn_matrix",
    "zz_matrix",
)
