"""Every reference solution passes its check, every stub fails it, and partial answers fail the right criteria."""

import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from lesson_submissions import edit, solution, stub, write

from lessons import catalog
from lessons.grader import Entry, grade_file, grade_many

LESSONS = catalog.lessons()


def grade(number: int, text: str, folder, name: str = "sub"):
    lesson = catalog.get(number)
    return grade_file(lesson, write(folder, name, text), name, "en", lesson.limits.replace(wall_s=60))


def failed(result) -> set[str]:
    return {c.id for c in result.criteria if c.passed is False}


@pytest.mark.slow
def test_every_solution_passes_and_every_stub_fails(tmp_path):
    def both(lesson):
        entries = [
            Entry("solution", lesson.solution_file, write(tmp_path / lesson.slug, "solution", solution(lesson.number))),
            Entry("stub", lesson.exercise_file, write(tmp_path / lesson.slug, "stub", stub(lesson.number))),
        ]
        return lesson, grade_many(lesson, entries, jobs=2)

    with ThreadPoolExecutor(2) as pool:
        for lesson, (sol, stb) in pool.map(both, LESSONS):
            assert sol.verdict == "PASS", (lesson.slug, sol.messages)
            assert sol.score == 100 and all(c.passed for c in sol.criteria)
            assert {c.id for c in sol.criteria} == set(lesson.criteria)  # every criterion has its title and hint
            assert stb.verdict == "FAIL", (lesson.slug, stb.verdict, stb.messages)
            assert [p.state for p in sol.predictions] == ["RIGHT"] * len(lesson.questions)
            assert [p.state for p in stb.predictions] == ["UNANSWERED"] * len(lesson.questions)
            _reveals_no_answer(lesson, stb)


def _reveals_no_answer(lesson, result) -> None:
    """An unanswered question's answer and explanation appear nowhere: not in the report, not in its JSON."""
    from lessons.render import render_result

    for lang in ("en", "zh"):
        result.lang = lang
        shown = render_result(lesson, result, lang)
        doc = json.dumps({**result.to_dict(), "predictions": [p.to_dict() for p in result.predictions]})
        for q in lesson.questions:
            assert q.explain[lang] not in shown and q.explain[lang] not in doc, (lesson.slug, q.id)
        assert all(p.answer is None and p.explanation is None for p in result.predictions)
    result.lang = "en"


def test_a_wrong_prediction_is_said_beside_a_pass_and_a_right_one_is_explained(tmp_path):
    from lessons.render import render_result

    lesson = LESSONS[2]
    wrong = edit(solution(3), '{"load_pipe": "MTE2"}', '{"load_pipe": "MTE3"}')
    result = grade(3, wrong, tmp_path, "wrong")
    assert result.verdict == "PASS" and result.score == 100
    (p,) = result.predictions
    assert (p.state, p.yours, p.answer) == ("WRONG", "MTE3", "MTE2") and p.explanation == lesson.questions[0].explain[
        "en"
    ]
    assert "not quite" in render_result(lesson, result, "en") and result.to_dict()["predictions"] == {
        "load_pipe": "WRONG"
    }


def test_host_numpy_instead_of_the_device_is_not_on_device(tmp_path):
    cheat = edit(
        stub(1),
        "    return None, ACL_SUCCESS\n",
        "    acl.finalize()\n    return (x + y), ACL_SUCCESS  # numpy on the host\n",
    )
    cheat = edit(
        cheat,
        "        # TODO (1 line): no device was set, but the runtime is up: undo what exists, then return.\n",
        "        acl.finalize()\n",
    )
    result = grade(1, cheat, tmp_path)
    assert result.verdict == "NOT_ON_DEVICE"  # the numbers are right, but no device-to-host copy brought them back
    numbers = next(c for c in result.criteria if c.id == "result")
    assert "on_device" in failed(result) and "not computed by the device" in numbers.yours


def test_reading_before_synchronizing_fails_with_its_own_criterion(tmp_path):
    early = edit(
        solution(1),
        "    ret = acl.rt.synchronize_stream(stream)  # the copy back is complete only after this returns\n",
        "",
    )
    early = edit(
        early,
        "    z = acl.util.ptr_to_numpy(host[2], n, np.float16).copy()\n",
        "    z = acl.util.ptr_to_numpy(host[2], n, np.float16).copy()\n    acl.rt.synchronize_stream(stream)\n",
    )
    result = grade(1, early, tmp_path)
    assert result.verdict == "FAIL"
    assert {"synchronized", "result"} <= failed(result)


def test_an_exception_shows_only_the_trainees_frames(tmp_path):
    boom = edit(solution(1), "    n, nbytes = x.size, x.nbytes\n", "    n, nbytes = helper(x)\n")
    boom += "\n\ndef helper(x):\n    return x.size / 0, x.nbytes\n"
    result = grade(1, boom, tmp_path)
    assert result.verdict == "RUNTIME_ERROR"
    text = result.messages[0]
    assert 'File "exercise.py"' in text and "in vector_add" in text and "in helper" in text
    assert "ZeroDivisionError: division by zero" in text
    assert "lessons/" not in text and "engine/" not in text and "harness" not in text


def test_an_element_partition_is_not_aligned(tmp_path):
    """The seed's granularity (elements, not 32-byte data blocks): ranges start off the 32-byte grid, and the
    kernel's plain data_copy of them is refused."""
    by_elements = edit(
        solution(2),
        "    align = BLOCK_BYTES // dtype_bytes  # elements per data block\n",
        "    align = 1  # the seed's partition: elements\n",
    )
    result = grade(2, by_elements, tmp_path)
    assert result.verdict == "FAIL"
    assert {"aligned", "tiling_key", "no_findings"} <= failed(result)
    aligned = next(c for c in result.criteria if c.id == "aligned")
    assert "N=10001, 2-byte elements, 7 cores: a block starts at element 1429 (2858 B)" in aligned.yours


def test_more_blocks_than_data_blocks_is_refused_by_the_block_dim_criterion(tmp_path):
    every_core = edit(
        solution(2),
        "    block_dim = max(1, min(core_num, blocks))  # never a core without a data block\n",
        "    block_dim = core_num\n",
    )
    result = grade(2, every_core, tmp_path)
    assert "block_dim" in failed(result)
    assert "N=5, 2-byte elements, 7 cores: block_dim 7" in next(c for c in result.criteria if c.id == "block_dim").yours


def test_single_buffered_is_right_but_not_fast(tmp_path):
    single = edit(
        solution(5),
        "BUFFER_NUM = 2  # two slots per queue: MTE2 fills one while V works on the other",
        "BUFFER_NUM = 1",
    )
    result = grade(5, single, tmp_path)
    assert failed(result) == {"overlap", "speedup", "tile_plan"}  # its tiles are planned for one slot per queue
    speed = next(c for c in result.criteria if c.id == "speedup")
    assert float(speed.yours.split(": ")[1].rstrip("x")) < 1.1


def test_an_invalid_tiling_names_the_field(tmp_path):
    bad = edit(solution(7), "BASE_M, BASE_N, BASE_K = 128, 256, 64", "BASE_M, BASE_N, BASE_K = 100, 256, 64")
    result = grade(7, bad, tmp_path)
    valid = next(c for c in result.criteria if c.id == "valid")
    assert not valid.passed and "baseM must be a multiple of 16, got 100" in valid.yours


def test_a_missing_event_is_a_cross_stream_race(tmp_path):
    racy = edit(
        solution(8),
        """        if i >= SLOTS:  # the slot's previous batch must have been read before it is overwritten
            check(acl.rt.stream_wait_event(copy_stream, consumed[i - SLOTS]), "stream_wait_event")
""",
        "",
    )
    result = grade(8, racy, tmp_path)
    race = next(c for c in result.criteria if c.id == "no_race")
    assert not race.passed and "cross-stream write-after-read race" in race.yours


def test_fixing_two_bugs_of_three_leaves_the_bottleneck(tmp_path):
    one_block = edit(solution(10), "CORES = 48  # fixed: every vector core of ascend910b1 (was 1)", "CORES = 1")
    result = grade(10, one_block, tmp_path)
    assert failed(result) == {"performance"}
    perf = next(c for c in result.criteria if c.id == "performance")
    assert "too_few_blocks" in perf.detail
    assert "seed profiler: FLAGGED: parallelism utilisation 0.02 (1 blocks, 48 cores" in perf.detail


def test_a_valid_tiling_without_deep_k_steps_misses_the_peak(tmp_path):
    shallow = edit(solution(7), "    while step < 8 and", "    while step < 1 and")  # stepKa = stepKb = 1: 66 %
    result = grade(7, shallow, tmp_path)
    assert failed(result) == {"peak"}
    peak = next(c for c in result.criteria if c.id == "peak")
    assert "% of the fp16 Cube peak" in peak.yours and float(peak.yours.split()[0]) < 70


L9_MISS = """    def _new_shape(self, shape):
        if self.history.stability(shape) > SEED_STABLE:"""


def test_a_cache_alone_does_not_cut_the_tiling_of_new_shapes(tmp_path):
    search = "    def _new_shape(self, shape):\n        return self.tiler.search(shape)\n\n"
    cache_only = edit(solution(9), L9_MISS, search + L9_MISS.replace("_new_shape", "_adaptive"))
    result = grade(9, cache_only, tmp_path)
    assert failed(result) == {"host_time"}
    host = next(c for c in result.criteria if c.id == "host_time")
    assert "stable 39.5 us (13 %)" in host.yours and "random 212.0 us (100 %)" in host.yours


def test_the_safe_block_everywhere_slows_the_cube_on_large_shapes(tmp_path):
    safe_only = edit(solution(9), L9_MISS, L9_MISS.replace("> SEED_STABLE", "> 1.0"))
    result = grade(9, safe_only, tmp_path)
    assert failed(result) == {"device_time"}
    assert "large:" in next(c for c in result.criteria if c.id == "device_time").yours


def test_a_tiling_found_behind_the_tilers_back_is_reported(tmp_path):
    bypass = edit(
        solution(9),
        "            tiling = self.cache[shape] = self._new_shape(shape)\n",
        "            from engine import load_profile\n"
        "            from engine.aicore.matmul_tiling import auto_tiling\n\n"
        "            tiling = self.cache[shape] = auto_tiling(load_profile('ascend910b1'), *shape, 24, 2)[0]\n",
    )
    result = grade(9, bypass, tmp_path)
    assert failed(result) == {"from_tiler"}
    assert "did not come from the tiler" in next(c for c in result.criteria if c.id == "from_tiler").yours
