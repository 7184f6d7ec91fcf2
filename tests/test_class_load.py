"""Twenty real browser users at once on ``gunicorn -w 2``: every one sees their own run (tests/class_load.py).

Each user opens the lessons page, steps 5 times, runs a matmul of its own (64 to 320 on a side, numerics on)
and waits until the player shows its run's event count (its own run: the shapes differ). This measures the
server's mechanism (jobs, polls, windows) within the suite's time; ``python -m tests.class_load`` measures the
class's full protocol (20 steps, 256 to 1024) and prints the table."""

from __future__ import annotations

import pytest

from tests.class_load import measure
from tests.web_browser import need_browser

pytestmark = pytest.mark.slow


def test_twenty_browser_users_on_two_workers_each_see_their_own_run():
    need_browser()
    load = measure(20, steps=5, small=True)
    print("\n| users | runs seen | p50 | p95 | errors | CPU | RSS | server CPU | browsers' CPU |\n" + load.row())
    assert not load.errors, load.errors[:5]
    assert len(load.run_to_views_s) == 20
