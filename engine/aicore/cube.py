"""The Cube unit's arithmetic: what ``mmad`` leaves in L0C and what ``fixpipe`` writes out.

The one definition, used by the instruction-level ``mmad`` and ``fixpipe``
(:mod:`engine.aicore.instructions`), by the matmul fast paths that compute a whole launch at once
(:mod:`engine.kernels.matmul_fast`) and by the replay that shows what a tile holds
(``app/present/tiles.py``). All three get the same bytes, whatever BLAS library or thread count
numpy runs with.

Hardware facts (ADK: the ``Mmad`` and ``Fixpipe`` API pages, ``附录/Cube指令理论性能汇总.md``; see docs/sources.md):

* the Cube multiplies fp16 operands from L0A and L0B and accumulates in fp32 in L0C, one
  16x16x16 fractal per cycle; an ``mmad`` either stores A[m, k] @ B[k, n] in L0C
  (``cmatrixInitVal``) or adds it to what L0C holds, so a base block's K loop accumulates mmad
  after mmad and L0C is rounded to fp32 at least once per ``mmad``;
* ``Fixpipe`` converts the fp32 in L0C to the destination's dtype on its way out;
* an fp16 x fp16 product is exact in fp32 (11-bit significands, a 22-bit product): every
  rounding comes from the accumulation.

The simulator's assumptions (the order of the additions inside the Cube is not published):

* within one ``mmad`` every entry's ``k`` products are summed exactly and the sum is rounded once
  to fp32, to nearest even (an adder tree wide enough not to round between fractals);
* L0C accumulates those fp32 partial sums in fp32, ``mmad`` after ``mmad`` in program order, to
  nearest even; an ``mmad`` that initialises L0C stores its partial sum plus +0 (never -0);
* the fixpipe rounds to the destination dtype to nearest even (overflow goes to infinity).

So C depends on A, B and how K is split into mmads (``baseK``), and on nothing else.

How it is computed: an exact sum has one value whatever the order of its additions, so the partial
sums come from numpy's float64 matmul (BLAS, in whatever order and on however many threads it
likes) wherever that is provably exact, and from an exact route of array arithmetic wherever it may
not be. Exact: every product a[i, t] * b[t, j] of fp16 (or fp32) operands is exact in fp64; all of
row i's nonzero operands are multiples of 2^lo_i (likewise column j's, 2^lo_j), so every partial
sum, in any order, is a multiple of 2^(lo_i + lo_j) no larger than sum_t |a[i, t] * b[t, j]|, which
is at most min(max_i * L1_j, L1_i * max_j) (the largest magnitude in the row times the column's sum
of magnitudes, or the other way round). That fits fp64's 53-bit significand when
``min(log2(max_i) + log2(L1_j), log2(L1_i) + log2(max_j)) - lo_i - lo_j < 53``. For operands in
[-1, 1] or of a standard normal that holds for all but a few entries in 10^5 (2048^3 in mmads of
k = 64); rows or columns of a wide dynamic range, inf or NaN take the exact route
(:func:`_split_sums`; :func:`math.fsum` for fp32 operands), which is slower. It assumes BLAS forms
each entry from the products a[i, t] * b[t, j] (no Strassen-like recombination), as OpenBLAS, MKL
and Accelerate do.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

_BOUND = 53 - 1e-6  # bits of an fp64 significand, less a margin for log2's rounding
_ROUND_UP = 1 + 2.0**-20  # on a float64 sum of magnitudes (k < 2^30 terms): at least the exact sum
_NONE = -float(1 << 20)  # bound of an all-zero row or column: exact with anything but inf or NaN
_NONFINITE = float(1 << 24)  # bound of a row or column holding inf or NaN: never summed by BLAS
_NAN = np.float32("nan")
_BATCH = 1 << 20  # products held at once by the exact route
_MAGNITUDES = 1 << 17  # magnitudes (fp64, 1 MiB) held at once while an operand's bounds are found
_SPLIT_MAX_K = 8192  # deepest mmad whose fp16 sums the array method makes exact
_TILE = 1 << 19  # partial sums (fp64, 4 MiB) per band of rows in matmul (2048^3, k 64: 0.32 s here, 0.41 s in one band)


def mmad(acc: np.ndarray, a: np.ndarray, b: np.ndarray, init: bool) -> None:
    """``Mmad``: ``acc`` (fp32, m x n, written in place) = or += ``a`` [m, k] @ ``b`` [k, n]."""
    _mmad(acc, _operand(a, 1, a.shape[1]), _operand(b, 0, b.shape[0]), init, None)


def matmul(a: np.ndarray, b: np.ndarray, k_step: int) -> np.ndarray:
    """A @ B (fp32) as a base block's K loop leaves it in L0C: one :func:`mmad` per ``k_step`` of K
    (the last one shorter), the first initialising. Any rows of A and columns of B give the same
    values as the whole matrix does."""
    m, n = a.shape[0], b.shape[1]
    acc = np.zeros((m, n), np.float32)
    whole_b = _operand(b, 0, k_step)
    rows = max(1, min(m, _TILE // max(1, n)))  # a band of rows at a time: its partial sums stay in cache
    scratch = np.empty((rows, n), np.float64)
    steps = list(enumerate(range(0, a.shape[1], k_step)))
    b_steps = [whole_b.step(i, k0, k_step) for i, k0 in steps]  # the same for every band
    for r0 in range(0, m, rows):
        band_a = _operand(a[r0 : r0 + rows], 1, k_step)  # A's rows are independent: prepared band by band
        band = acc[r0 : r0 + rows]
        out = scratch[: band.shape[0]]
        for (i, k0), b_step in zip(steps, b_steps, strict=True):
            _mmad(band, band_a.step(i, k0, k_step), b_step, k0 == 0, out)
    return acc


def matmul_bytes(m: int, n: int, k: int) -> int:
    """The memory :func:`matmul` holds for an m x k by k x n product, at most: fp64 copies of A and B, an fp64
    partial sum and the fp32 result (it holds a band of A's rows and of the partial sums at a time)."""
    return (m * k + k * n) * 8 + m * n * (8 + 4)


def fixpipe(values: np.ndarray, dtype) -> np.ndarray:
    """``Fixpipe``'s conversion of fp32 L0C values to the destination ``dtype`` (nearest even)."""
    with np.errstate(over="ignore"):
        return np.asarray(values).astype(dtype, copy=False)


@dataclass(frozen=True)
class _Operand:
    """An mmad operand in fp64 (exact), with the bounds (:func:`_bounds`) of each of its rows (A, ``axis``
    1) or columns (B, ``axis`` 0) over each step of K: prepared once for a whole K loop."""

    values: np.ndarray
    peak: np.ndarray
    mass: np.ndarray
    axis: int
    fp16: bool

    def step(self, i: int, k0: int, k_step: int) -> _Operand:
        """The operand of the loop's ``i``-th mmad: K from ``k0``, ``k_step`` deep."""
        if self.axis == 1:
            cut = (slice(None), slice(i, i + 1))
            return _Operand(self.values[:, k0 : k0 + k_step], self.peak[cut], self.mass[cut], 1, self.fp16)
        cut = (slice(i, i + 1), slice(None))
        return _Operand(self.values[k0 : k0 + k_step], self.peak[cut], self.mass[cut], 0, self.fp16)


def _operand(x: np.ndarray, axis: int, k_step: int) -> _Operand:
    if x.dtype.kind != "f":
        raise TypeError(f"the Cube multiplies floating-point operands, not {x.dtype}")
    values = x.astype(np.float64)
    if not x.shape[axis]:
        empty = np.full((1, 1), _NONE)
        return _Operand(values, empty, empty, axis, x.dtype == np.float16)
    peak, mass = _bounds(x, values, axis, k_step)
    return _Operand(values, peak, mass, axis, x.dtype == np.float16)


def _mmad(acc: np.ndarray, a: _Operand, b: _Operand, init: bool, out: np.ndarray | None) -> None:
    """One mmad on prepared operands: the exact partial sums (:func:`_partial_sums`), then L0C."""
    with np.errstate(invalid="ignore", over="ignore"):  # inf * 0 is NaN; fp32 operands may overflow fp32
        part = _partial_sums(a, b, out)
        if init:
            np.add(part, 0.0, out=acc, dtype=np.float32, casting="same_kind")
        else:
            np.add(acc, part, out=acc, dtype=np.float32, casting="same_kind")


def _partial_sums(a: _Operand, b: _Operand, out: np.ndarray | None) -> np.ndarray:
    """Each entry of a @ b summed exactly, as float64 values that are already fp32 numbers or that
    round to the right one (exact sums round once, when the caller converts to fp32)."""
    k = a.values.shape[1]
    shape = (a.values.shape[0], b.values.shape[1])
    if out is None or out.shape != shape:
        out = np.empty(shape, np.float64)
    if k == 0:
        out[...] = 0.0
        return out
    np.matmul(a.values, b.values, out=out)
    rows, cols = _inexact(a.peak[:, 0], a.mass[:, 0], b.peak[0], b.mass[0])
    if len(rows):
        out[rows, cols] = _exact_sums(a.values, b.values, rows, cols, a.fp16)
    return out


def _bounds(x: np.ndarray, values: np.ndarray, axis: int, k_step: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row (``axis`` 1) or column (0) of ``x`` and per ``k_step`` of K, with 2^lo the ulp of its smallest
    nonzero entry: ``peak`` = log2(largest magnitude) - lo and ``mass`` = log2(sum of magnitudes) - lo, the
    sum rounded up. An all-zero row gives :data:`_NONE`, one holding inf or NaN :data:`_NONFINITE`."""
    info = np.finfo(x.dtype)
    bits = x.view(f"u{x.dtype.itemsize}")
    top = (1 << info.nexp) - 1  # the field of inf and NaN
    small = np.uint8 if top < 255 else np.uint16
    field = ((bits >> info.nmant) & top).astype(small)
    np.maximum(field, 1, out=field)  # a subnormal's ulp is the smallest normal's
    nonzero = (bits & ((1 << (8 * x.dtype.itemsize - 1)) - 1)) != 0
    lo = _per_step(np.minimum, np.where(nonzero, field, small(top)), axis, k_step).astype(np.float64)
    lo -= info.maxexp - 1 + info.nmant  # the field's exponent, less the significand's bits: the ulp's
    largest, total = _magnitudes_per_step(values, axis, k_step)
    with np.errstate(divide="ignore", invalid="ignore"):
        peak = np.log2(largest) - lo
        mass = np.log2(total * _ROUND_UP) - lo
    zero = np.isneginf(peak)
    nonfinite = ~np.isfinite(mass) & ~zero
    for bound in (peak, mass):
        bound[zero] = _NONE
        bound[nonfinite] = _NONFINITE
    return peak, mass


def _magnitudes_per_step(values: np.ndarray, axis: int, k_step: int) -> tuple[np.ndarray, np.ndarray]:
    """The largest magnitude and the sum of magnitudes over each ``k_step`` of K (``axis``), per row or column:
    a band of rows at a time through one small buffer (no magnitudes array as large as ``values``, whose fresh
    pages cost a 2048^3 job up to 0.1 s of page faults). fp16 sums are exact, so the same as from the whole array;
    an fp32 sum may round otherwise, which :data:`_ROUND_UP` covers as it covers any order of summing."""
    rows, cols = values.shape
    out_shape = (rows, -(-cols // k_step)) if axis == 1 else (-(-rows // k_step), cols)
    largest, total = np.empty(out_shape), np.empty(out_shape)
    band = max(1, _MAGNITUDES // max(1, cols))
    if axis == 0:  # the bands cut K: whole steps of it
        band = max(k_step, band // k_step * k_step)
    buffer = np.empty(min(rows, band) * cols)
    for r0 in range(0, rows, band):
        part = values[r0 : r0 + band]
        magnitudes = np.abs(part, out=buffer[: part.size].reshape(part.shape))
        at = slice(r0, r0 + len(part)) if axis == 1 else slice(r0 // k_step, -(-(r0 + len(part)) // k_step))
        largest[at] = _per_step(np.maximum, magnitudes, axis, k_step)
        total[at] = _per_step(np.add, magnitudes, axis, k_step)
    return largest, total


def _per_step(ufunc: np.ufunc, x: np.ndarray, axis: int, k_step: int) -> np.ndarray:
    """``ufunc`` reduced over each ``k_step`` of K (``axis``), the K axis kept (one entry per step)."""
    k = x.shape[axis]
    if k % k_step:
        return ufunc.reduceat(x, np.arange(0, k, k_step), axis=axis)
    if axis == 1:
        return ufunc.reduce(x.reshape(x.shape[0], k // k_step, k_step), axis=2)
    return ufunc.reduce(x.reshape(k // k_step, k_step, x.shape[1]), axis=1)


def _inexact(
    peak_a: np.ndarray, mass_a: np.ndarray, peak_b: np.ndarray, mass_b: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) of the entries whose fp64 matmul is not certainly exact: both of the sum's bounds,
    max_i * L1_j and L1_i * max_j, reach 2^53 ulps."""
    rows = np.flatnonzero((peak_a + mass_b.max() >= _BOUND) & (mass_a + peak_b.max() >= _BOUND))
    if not len(rows):
        return rows, rows
    cols = np.flatnonzero((peak_b + mass_a.max() >= _BOUND) & (mass_b + peak_a.max() >= _BOUND))
    pa, ma = peak_a[rows, None], mass_a[rows, None]
    r, c = np.nonzero((pa + mass_b[None, cols] >= _BOUND) & (ma + peak_b[None, cols] >= _BOUND))
    return rows[r], cols[c]


def _exact_sums(a64: np.ndarray, b64: np.ndarray, rows: np.ndarray, cols: np.ndarray, fp16: bool) -> np.ndarray:
    """Entries (rows[i], cols[i]) of a @ b, each summed exactly and rounded once to fp32 (as float64)."""
    k = a64.shape[1]
    out = np.empty(len(rows), np.float64)
    step = max(1, _BATCH // k)
    for s in range(0, len(rows), step):
        products = a64[rows[s : s + step]] * b64[:, cols[s : s + step]].T  # exact in fp64
        split = fp16 and k <= _SPLIT_MAX_K
        out[s : s + step] = _split_sums(products) if split else _fsums(products)
    return out


def _split_sums(products: np.ndarray) -> np.ndarray:
    """Row sums of fp16 products, exact, rounded once to fp32, with array arithmetic only.

    An fp16 product is a multiple of 2^-48 below 2^32 in magnitude. Cut each at 2^c, c = 5 - ceil(log2 k):
    the parts above are multiples of 2^c below 2^32, the parts below are multiples of 2^-48 in [0, 2^c);
    k of either sum exactly in fp64, in any order, for k <= 8192. The two exact sums' total is then
    ``s + e`` exactly (Knuth's two-sum), ``s`` its fp64 rounding.
    """
    k = products.shape[1]
    cut = 2.0 ** (5 - math.ceil(math.log2(k)))
    finite = np.isfinite(products).all(axis=1)
    high = np.floor(products / cut) * cut
    high_sum = high.sum(axis=1)
    low_sum = (products - high).sum(axis=1)
    s = high_sum + low_sum
    back = s - high_sum
    e = (high_sum - (s - back)) + (low_sum - back)
    out = _round32(s, lambda ties: e[ties])
    if not finite.all():  # inf and NaN: as the fp64 sum has them (inf - inf is NaN)
        out[~finite] = _round32(products[~finite].sum(axis=1), lambda ties: np.zeros(len(ties)))
    return out


def _fsums(products: np.ndarray) -> np.ndarray:
    """Row sums of exact fp64 values, exact, rounded once to fp32: :func:`math.fsum`, row by row (for fp32
    operands, or an mmad deeper than the array method allows)."""
    listed = products.tolist()
    sums = np.array([_fsum(row) for row in listed], np.float64)
    return _round32(sums, lambda ties: np.array([_fsum([*listed[i], -sums[i]]) for i in ties.tolist()]))


def _round32(sums: np.ndarray, rest: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """fp32 (as float64) of exact values given as ``sums`` (each rounded to fp64) and ``rest(i)`` (the exact
    value minus ``sums[i]``, or anything of its sign), asked only for the entries ``i`` where ``sums`` sits
    exactly halfway between two fp32 numbers: only there would rounding the fp64 value to fp32 err."""
    out = sums.astype(np.float32)
    near = out.astype(np.float64)
    other = np.nextafter(out, np.where(sums > near, np.float32(np.inf), np.float32(-np.inf)))
    ties = np.flatnonzero((sums != near) & (sums == (near + other.astype(np.float64)) / 2))
    if len(ties):
        rest_sign = np.sign(rest(ties))
        away = (rest_sign != 0) & ((rest_sign > 0) == (other[ties] > out[ties]))
        out[ties[away]] = other[ties[away]]
    out[np.isnan(out)] = _NAN
    return out.astype(np.float64)


def _fsum(values: list[float]) -> float:
    try:
        return math.fsum(values)
    except ValueError:  # inf - inf
        return math.nan
