"""Interval arithmetic on numpy arrays: merging, covered length, intersections."""

from __future__ import annotations

import numpy as np


def merged(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint, sorted intervals covering exactly what ``[starts, ends)`` cover."""
    if len(starts) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    order = np.argsort(starts, kind="stable")
    s = np.asarray(starts)[order]
    e = np.maximum.accumulate(np.asarray(ends)[order])
    new_run = np.empty(len(s), dtype=bool)
    new_run[0] = True
    new_run[1:] = s[1:] > e[:-1]
    run = np.cumsum(new_run) - 1
    run_start = s[new_run]
    run_end = np.zeros(run[-1] + 1, dtype=np.int64)
    np.maximum.at(run_end, run, e)
    return run_start, run_end


def covered(starts: np.ndarray, ends: np.ndarray) -> int:
    s, e = merged(starts, ends)
    return int((e - s).sum())


def intersection(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> int:
    """Length covered by both of two sets of disjoint sorted intervals."""
    a_s, a_e = a
    b_s, b_e = b
    if not len(a_s) or not len(b_s):
        return 0
    # sweep: +1 at every start, -1 at every end; each set is disjoint, so depth 2 means "both"
    times = np.concatenate([a_s, a_e, b_s, b_e])
    delta = np.concatenate([np.ones(len(a_s)), -np.ones(len(a_e)), np.ones(len(b_s)), -np.ones(len(b_e))])
    order = np.argsort(times, kind="stable")
    depth = np.cumsum(delta[order])
    span = np.diff(times[order])
    return int(span[depth[:-1] == 2].sum())


def gaps(starts: np.ndarray, ends: np.ndarray, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """The parts of ``[lo, hi)`` that ``[starts, ends)`` leave uncovered."""
    s, e = merged(starts, ends)
    g_s = np.concatenate([[lo], e])
    g_e = np.concatenate([s, [hi]])
    g_s = np.maximum(g_s, lo)
    g_e = np.minimum(g_e, hi)
    keep = g_e > g_s
    return g_s[keep], g_e[keep]
