"""Lesson 11 (the mixed MatmulLeakyRelu kernel): each part of the cooperation is judged by the criterion that names it.

A Cube that overwrites a slot before the AIVs read it is a race; an AIV that never says it is done deadlocks the
group; a handshake (the Cube waiting for FREE right after its READY) is right but serialised and fails only the
overlap criterion.
"""

from __future__ import annotations

import pytest
from lesson_submissions import edit, solution, write

from lessons import catalog
from lessons.grader import Entry, grade_many

pytestmark = pytest.mark.slow

FREE_WAIT = (
    "        if i >= t.slots:  # the slot held block i - slots: both AIVs must have read it before the fixpipe "
    "overwrites it\n            asc.cross_core_wait_flag(FREE + slot)\n"
)
READY_SET = (
    "        asc.cross_core_set_flag(READY + slot, pipe=asc.PipeID.PIPE_FIX)  # once the fixpipe has written it\n"
)
DRAIN = (
    "    for i in range(max(0, len(blocks) - t.slots), len(blocks)):\n"
    "        asc.cross_core_wait_flag(FREE + i % t.slots)  # every set of the AIVs is taken before the kernel ends\n"
)
FREE_SET = "        asc.cross_core_set_flag(FREE + slot, pipe=asc.PipeID.PIPE_MTE2)"


def _submissions() -> dict[str, str]:
    good = solution(11)
    no_free_wait = edit(edit(good, FREE_WAIT, ""), DRAIN, "")
    handshake = edit(no_free_wait, READY_SET, READY_SET + "        asc.cross_core_wait_flag(FREE + slot)\n")
    one_aiv_sets = edit(good, FREE_SET, "        if asc.get_subblockidx() == 0:\n    " + FREE_SET)
    return {"no_free_wait": no_free_wait, "handshake": handshake, "one_aiv_sets": one_aiv_sets}


def test_each_broken_cooperation_fails_its_own_criterion(tmp_path):
    lesson = catalog.get(11)
    entries = [Entry(n, p, p) for n, src in _submissions().items() for p in [write(tmp_path, n, src)]]
    results = {r.id: r for r in grade_many(lesson, entries, jobs=2, hidden_seed=5)}
    failed = {name: {c.id for c in r.criteria if c.passed is False} for name, r in results.items()}

    assert failed["handshake"] == {"overlap"}  # right, no finding, but about 1.6x the reference's time
    assert {"numerics", "no_findings"} <= failed["no_free_wait"]
    shown = " ".join(str(c.yours) for c in results["no_free_wait"].criteria if c.id == "no_findings")
    assert "race" in shown
    assert "no_findings" in failed["one_aiv_sets"]
    shown = " ".join(str(c.yours) for c in results["one_aiv_sets"].criteria if c.id == "no_findings")
    assert "deadlock" in shown
