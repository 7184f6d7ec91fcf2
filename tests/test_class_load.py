"""Twenty real browser users at once on ``gunicorn -w 2``: every one sees their own run (tests/class_load.py)."""

from __future__ import annotations

import pytest

from tests.class_load import measure
from tests.web_browser import need_browser

pytestmark = pytest.mark.slow


def test_twenty_browser_users_on_two_workers_each_see_their_own_run():
    need_browser()
    load = measure(20)
    print("| users | runs seen | p50 | p95 | errors | CPU | RSS |\n" + load.row())
    assert not load.errors, load.errors[:5]
    assert len(load.run_to_views_s) == 20
