"""The order a call-by-call run appends trace rows in, for a fast run that appends some rows elsewhere.

Call by call, the host appends its rows as it calls, and the device appends its rows as the event core
processes its events, which it does only when the host needs it to (a wait, a synchronize, the end of a
run). So a row's place is fixed by two numbers: the device events the host had seen processed when it
appended it (a host row), or the event that appended it (a device row). In that order (event ``e``'s
rows come after every host row appended with fewer than ``e`` events seen, and before the others) a
call-by-call run appends its rows, by construction.

A fast run (the runtime's fast mode, a host call log) appends some rows later than that: rows of stamped
periods, host calls played in bulk. Each row therefore gets a key ``(major, sub)``: ``major`` is
``2 * e`` for a row of device event ``e`` and ``2 * seen + 1`` for a host row; ``sub`` orders rows with
the same ``major``. Rows appended where they belong take theirs from :meth:`RowOrder.live` (the major
from then on; ``sub`` is four times the row's number), the others are given theirs with
:meth:`RowOrder.place`. :meth:`RowOrder.keys` is every row's key: the trace sorts by start time and then
by key when it freezes, which puts the fast run's rows where the call-by-call run has them.
"""

from __future__ import annotations

import numpy as np

SUB_STEP = 4  # a live row's sub is 4 x its row number: rows placed among live rows use the 3 values between


class RowOrder:
    """The keys of a growing trace's rows (see the module); unused until something is placed."""

    __slots__ = ("_at", "_major", "_placed")

    def __init__(self) -> None:
        self._at: list[int] = [0]  # the row from which a major holds
        self._major: list[int] = [-1]
        self._placed: list[tuple[int, np.ndarray, np.ndarray]] = []  # (first row, majors, subs)

    def live(self, row: int, major: int) -> None:
        """Rows appended from ``row`` on take ``major`` (until the next call)."""
        if self._at[-1] == row:
            self._major[-1] = major
        else:
            self._at.append(row)
            self._major.append(major)

    def place(self, first: int, major: np.ndarray, sub: np.ndarray) -> None:
        """Rows ``first, first + 1, ...`` have the keys ``(major[i], sub[i])`` (not those of where they are)."""
        if len(major):
            self._placed.append((first, np.asarray(major, dtype=np.int64), np.asarray(sub, dtype=np.int64)))

    @property
    def needed(self) -> bool:
        """Were any rows appended out of the call-by-call order?"""
        return bool(self._placed)

    def keys(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """``(major, sub)`` of rows ``0 .. n - 1``."""
        at = np.minimum(np.asarray([*self._at, n], dtype=np.int64), n)
        major = np.repeat(np.asarray(self._major, dtype=np.int64), np.diff(at))  # each major over its rows
        sub = np.arange(0, n * SUB_STEP, SUB_STEP, dtype=np.int64)
        for first, m, s in self._placed:
            major[first : first + len(m)] = m
            sub[first : first + len(s)] = s
        return major, sub
