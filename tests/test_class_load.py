"""Twenty real browser users at once on ``gunicorn -w 2``: every one sees their own run (tests/class_load.py).

Each user opens the playground, runs a matmul of its own (64 to 320 on a side, numerics on) and waits until the
player shows its run's event count (its own run: the shapes differ). This tests the server's mechanism (jobs,
polls, windows, two workers) under twenty pages at once within the suite's time; the lessons page and its steps
are left to the benchmark (``python -m tests.class_load``: the class's full protocol, 20 steps, 256 to 1024, and
the table): on a 2-core machine twenty Chromiums drawing the player's charts are slower than the server."""

from __future__ import annotations

import pytest

from tests.class_load import measure
from tests.web_browser import need_browser

pytestmark = [pytest.mark.slow, pytest.mark.alone]  # they measure speed


def test_twenty_browser_users_on_two_workers_each_see_their_own_run():
    need_browser()
    load = measure(20, steps=0, small=True)
    print("\n| users | runs seen | p50 | p95 | errors | CPU | RSS | server CPU | browsers' CPU |\n" + load.row())
    assert not load.errors, load.errors[:5]
    assert len(load.run_to_views_s) == 20
