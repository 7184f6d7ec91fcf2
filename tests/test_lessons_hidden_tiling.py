"""Hidden cases of lessons 2, 4, 5, 9, 10, 12 and 13, as a trainee meets them: the reference solution passes every
hidden case, and a submission right on every visible case but wrong on a kind of hidden case (a tiling that holds only
for the cases the lesson shows) fails, the report naming that kind and never the case's values or the seed.

The same test as lessons 1, 3 and 8's (:mod:`tests.test_lessons_hidden`), on the submissions of
``lesson_submissions.TILING_OVERFITS``.
"""

from __future__ import annotations

import pytest
from test_lessons_hidden import test_a_hidden_failure_names_its_kind_and_nothing_of_the_case as _named

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("number", [2, 4, 5, 9, 10, 12, 13])
def test_an_overfitted_tiling_fails_a_hidden_case_named_by_its_kind(number, tmp_path):
    _named(number, tmp_path)
