"""The curriculum: every lesson is complete in both languages and every step points into its own run."""

import ast
import shutil

import pytest

from app.present.replay import Replay
from app.present.walkthrough import lesson_stops, run_lesson
from engine import Simulation
from lessons import catalog
from lessons.catalog import LANGS, LessonError, load
from lessons.selectors import resolve

LESSONS = catalog.lessons()


def test_the_lessons_and_nothing_else():
    numbers = [ls.number for ls in LESSONS]
    assert numbers[:11] == list(range(1, 12)) and numbers == sorted(set(numbers)) and 13 in numbers
    with pytest.raises(LessonError, match=rf"lesson must be one of {', '.join(map(str, numbers))}, got 99"):
        catalog.get(99)


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda ls: ls.slug)
def test_text_exists_in_both_languages(lesson):
    for text in (lesson.title, lesson.summary, lesson.exercise_text):
        assert all(text[lang] for lang in LANGS)
    assert lesson.steps and all(step.text["en"] and step.text["zh"] for step in lesson.steps)
    assert all(q.text["zh"] and q.explain["zh"] for q in lesson.questions)
    assert all(c.title["zh"] and c.hint["zh"] for c in lesson.criteria.values())
    assert any(c.correctness for c in lesson.criteria.values())
    assert any(c.integrity for c in lesson.criteria.values())  # every check demands device evidence


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda ls: ls.slug)
def test_every_selector_resolves_in_the_scenario_run(lesson):
    sim = Simulation()
    outcome = lesson.module("scenario").scenario(sim)
    assert outcome["correct"] is (lesson.number != 10)  # lesson 10 shows a broken program on purpose
    trace = sim.finish().trace
    rows = [resolve(trace, step.selector) for step in lesson.steps]
    assert len(set(rows)) == len(rows), "two steps point at the same event"


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda ls: ls.slug)
def test_lesson_steps_point_at_events_in_order(lesson):
    """The narration never runs backwards while the event moves forward: each step's anchor is at or after the
    one before (a step out of order would load as a problem, with no anchor)."""
    stops = lesson_stops(Replay(run_lesson(lesson), inputs=lesson.scenario_inputs()), lesson)
    assert [(s.index + 1, s.problem) for s in stops if s.problem] == []
    anchors = [s.step for s in stops]
    assert anchors == sorted(anchors)


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda ls: ls.slug)
def test_questions_are_answered_by_the_simulator(lesson):
    scenario = lesson.module("scenario")
    for q in lesson.questions:
        assert getattr(scenario, f"truth_{q.id}")() in q.choices


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda ls: ls.slug)
def test_stub_marks_the_work_and_solution_answers_the_questions(lesson):
    stub = lesson.exercise_file.read_text(encoding="utf-8")
    solution = lesson.solution_file.read_text(encoding="utf-8")
    assert "# TODO" in stub and "# TODO" not in solution
    ast.parse(stub)
    tree = ast.parse(solution)
    predictions = next(
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "PREDICTIONS"
    )
    answered = ast.literal_eval(predictions)
    assert set(answered) == {q.id for q in lesson.questions}
    assert all(answered[q.id] in q.choices for q in lesson.questions)
    for q in lesson.questions:  # the choices read in Chinese: a word is translated, a pipe's name stays
        assert len(q.labels["zh"]) == len(q.choices)
        for en, zh in zip(q.choices, q.labels["zh"], strict=True):
            assert zh != en or en.isupper() or en.isdigit(), (q.id, en)


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda ls: ls.slug)
def test_every_lesson_has_a_level_an_objective_and_drawable_hidden_cases(lesson):
    """The path (beginner, intermediate, expert), the objective in both languages with figures the cost table
    knows, and for each hidden kind a scenario that draws it, a check that judges it and cases that are plain
    JSON data; drawn twice from one seed they are the same, from two seeds (usually) not."""
    import json

    from lessons.costs import FIGURES
    from lessons.hidden import draw, encode, runs

    assert lesson.level in catalog.LEVELS and all(lesson.level_name(lang) for lang in LANGS)
    assert all(lesson.objective.text[lang] for lang in LANGS)
    assert set(lesson.objective.figures) <= set(FIGURES) and lesson.objective.figures
    if not lesson.hidden:
        return
    assert callable(getattr(lesson.module("check"), "judge_hidden", None))
    cases = draw(lesson, 1)
    assert [c.kind for c in cases] == [k.id for k in lesson.hidden for _ in range(k.count)]
    assert encode(draw(lesson, 1)) == encode(cases) == json.loads(json.dumps(encode(cases)))
    assert encode(draw(lesson, 2)) != encode(cases)
    assert set(runs(lesson.module("drive"), cases)) == set(lesson.module("drive").RUNS) | {c.run for c in cases}


def test_the_path_puts_each_lesson_at_its_level():
    levels = {ls.number: ls.level for ls in LESSONS}
    assert levels == {
        **dict.fromkeys((1, 2, 3, 4), "beginner"),
        **dict.fromkeys((5, 6, 7, 8), "intermediate"),
        **dict.fromkeys((n for n in levels if n >= 9), "expert"),
    }


def test_a_broken_lesson_is_refused_naming_the_field(tmp_path):
    source = LESSONS[2].path
    broken = tmp_path / source.name
    shutil.copytree(source, broken)
    toml = broken / "lesson.toml"
    text = toml.read_text(encoding="utf-8")
    toml.write_text(text.replace('zh = "存储层次与 CopyIn / Compute / CopyOut 范式"', ""), encoding="utf-8")
    with pytest.raises(LessonError, match=r"l03_copyin_compute_copyout\.title: zh is missing or empty"):
        load(broken)
    toml.write_text(text.replace('kind = "MOVE", name = "data_copy GM->UB"', 'kind = "MOVES"'), encoding="utf-8")
    with pytest.raises(LessonError, match=r"steps\[2\]\.selector: selector kind must be one of"):
        load(broken)
    toml.write_text(text.replace('choices_zh = ["MTE2", "MTE3", "VECTOR"]', 'choices_zh = ["MTE2"]'), encoding="utf-8")
    with pytest.raises(LessonError, match=r"questions\[0\]: choices_zh must translate each of the 3 choices, got 1"):
        load(broken)
    toml.write_text(text.replace('level = "beginner"', 'level = "guru"'), encoding="utf-8")
    with pytest.raises(LessonError, match=r"level must be one of beginner, intermediate, expert, got 'guru'"):
        load(broken)
    toml.write_text(text.replace('figures = ["kernel_us"', 'figures = ["speed"'), encoding="utf-8")
    with pytest.raises(LessonError, match=r"objective\.figures must list figures among .*got \['speed'"):
        load(broken)
    toml.write_text(text.replace("[hidden.few]", "[hidden.few]\ncount = 9"), encoding="utf-8")
    with pytest.raises(LessonError, match=r"hidden\.few\.count must be an integer from 1 to 4, got 9"):
        load(broken)
    (broken / "check.py").unlink()
    with pytest.raises(LessonError, match=r"check\.py is missing"):
        load(broken)


@pytest.mark.parametrize("number", [3, 4, 5, 6, 7])
def test_the_lessons_tensors_show_the_numbers_of_their_tiles(number):
    """Lessons that name their tensors give the views tile values: the first tile a core holds in an
    on-chip buffer is exactly the slice of the scenario's input it names."""
    import numpy as np

    from app.present import Replay

    lesson = catalog.get(number)
    sim = Simulation()
    lesson.module("scenario").scenario(sim)
    result = sim.finish()
    inputs = lesson.scenario_inputs()
    assert {t.name for t in result.gm.values()} >= set(inputs)
    replay = Replay(result, inputs=inputs)
    held = []
    for step in range(len(replay)):  # the first step at which a slot holds a tile
        state = replay.state_at(step)
        held = [(c, b, s) for c in state.cores for b in c.buffers for s in b.slots if s.writer >= 0 and s.tile]
        if held:
            break
    assert held, "no slot ever holds a named tile"
    core, buffer, slot = held[0]
    tile = slot.tile
    values = replay.tile_values(step, core.core, buffer.name, slot.queue, slot.slot)
    source = inputs[tile["tensor"]]
    if source.ndim == 1:
        expected = source[tile["col"] : tile["col"] + tile["cols"]]
        got = values.reshape(-1)[: tile["cols"]]
    else:
        expected = source[tile["row"] : tile["row"] + tile["rows"], tile["col"] : tile["col"] + tile["cols"]]
        got = values[: tile["rows"], : tile["cols"]]
    np.testing.assert_array_equal(got, expected)
