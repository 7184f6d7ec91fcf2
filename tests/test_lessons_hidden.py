"""Hidden cases and predictions, as a trainee meets them in the check's report (text and JSON, both languages).

For lessons 1, 3, 6, 7, 8 and 11: the reference solution passes every hidden case; a submission right on the visible
cases but wrong on a hidden kind fails, and the report names that kind and never the case's values or the seed. A
prediction never changes the verdict or the score, and a check with no predictions reveals no answer and no
explanation. And the folding of hidden criteria itself (:func:`lessons.hidden.merge`), without grading.
"""

from __future__ import annotations

import contextlib
import io
import json
import re

import pytest
from lesson_submissions import edit, hidden_wrong, solution, write

from lessons import catalog
from lessons.checks import Criterion, bi
from lessons.grader import Entry, grade_many
from lessons.hidden import Case, draw, merge
from lessons.render import render_result

SEED = 918_273_645  # an instructor's --hidden-seed: the cases are known here, to look for their values


def _everything(lesson, result) -> str:
    """All a trainee can read of a result: the report in both languages and the command line's JSON."""
    shown = []
    for lang in ("en", "zh"):
        result.lang = lang
        shown.append(render_result(lesson, result, lang))
        doc = {
            **result.to_dict(),
            "criteria": [c.to_dict() for c in result.criteria_in.get(lang, result.criteria)],
            "predictions": [p.to_dict() for p in result.predictions],
            "hidden": [h.to_dict() for h in result.hidden],
            "figures": result.figures,
            "stdout": result.stdout,
        }
        shown.append(json.dumps(doc, ensure_ascii=False))
    result.lang = "en"
    return "\n".join(shown)


def _values(lesson) -> set[str]:
    """The drawn cases' values as a report could print them (those of at least three digits: smaller ones, a
    core count say, are everywhere in a report anyway), and the seed."""
    out = {str(SEED), f"{SEED:,}"}
    for case in draw(lesson, SEED):
        for v in case.params.values():
            if isinstance(v, int) and v >= 100:
                out |= {str(v), f"{v:,}"}
    return out


@pytest.mark.slow
@pytest.mark.parametrize("number", [1, 3, 6, 7, 8, 11])
def test_a_hidden_failure_names_its_kind_and_nothing_of_the_case(number, tmp_path):
    lesson = catalog.get(number)
    subs = {"reference": (solution(number), set()), **hidden_wrong(number)}
    entries = [Entry(name, path, path) for name, (src, _) in subs.items() for path in [write(tmp_path, name, src)]]
    results = {r.id: r for r in grade_many(lesson, entries, jobs=2, hidden_seed=SEED)}
    kinds = {k.id: k for k in lesson.hidden}

    ref = results["reference"]
    assert ref.verdict == "PASS", ref.messages
    assert {h.kind: h.passed for h in ref.hidden} == dict.fromkeys(kinds, True)

    values = _values(lesson)
    for name, (_, must_fail) in hidden_wrong(number).items():
        result = results[name]
        assert result.verdict in ("FAIL", "RUNTIME_ERROR"), (name, result.verdict, result.messages)
        failed = {h.kind for h in result.hidden if h.passed is False}
        assert must_fail & failed and failed <= must_fail, (name, failed)
        for lang in ("en", "zh"):
            if result.verdict == "FAIL":  # a criterion says which kind it failed on
                said = " ".join(str(c.yours) for c in result.criteria_in[lang] if not c.passed)
            else:  # the exception is reported by the kind it escaped from (the report's language: en)
                said = "\n".join(result.messages) if lang == "en" else ""
            if said:
                assert any(kinds[k].name[lang] in said for k in failed), (name, lang, said)
            if result.verdict == "FAIL":  # the hint is the kind's, not the criterion's
                hints = {c.hint for c in result.criteria_in[lang] if not c.passed}
                assert hints <= {kinds[k].hint[lang] for k in failed if kinds[k].hint}, (name, lang, hints)
            assert {h.name for h in result.hidden_in[lang] if h.passed is False} == {
                kinds[k].name[lang] for k in failed
            }
        shown = _everything(lesson, result)
        leaked = sorted(v for v in values if re.search(rf"(?<![\d,.]){re.escape(v)}(?![\d,])", shown))
        assert not leaked, (name, leaked)
        assert "[FAIL]" in render_result(lesson, result, "en")


@pytest.mark.slow
@pytest.mark.parametrize("number", [1, 3, 8])
def test_predictions_never_change_the_verdict_and_an_unanswered_question_reveals_nothing(number, tmp_path):
    lesson = catalog.get(number)
    good = solution(number)
    answers = re.search(r"^PREDICTIONS = .*$", good, re.M).group(0)
    wrong = {q.id: next(c for c in q.choices if c != ctx_truth(lesson, q.id)) for q in lesson.questions}
    subs = {
        "right": good,
        "wrong": edit(good, answers, f"PREDICTIONS = {wrong!r}"),
        "none": edit(good, answers, "PREDICTIONS = {}"),
    }
    entries = [Entry(name, path, path) for name, src in subs.items() for path in [write(tmp_path, name, src)]]
    results = {r.id: r for r in grade_many(lesson, entries, jobs=2, hidden_seed=SEED)}
    states = {name: (r.verdict, r.score, r.to_dict()["criteria"], r.to_dict()["hidden"]) for name, r in results.items()}
    assert states["right"] == states["wrong"] == states["none"] and states["right"][:2] == ("PASS", 100)
    assert {p.state for p in results["wrong"].predictions} == {"WRONG"}

    silent = results["none"]
    assert [p.state for p in silent.predictions] == ["UNANSWERED"] * len(lesson.questions)
    shown = _everything(lesson, silent)
    for q in lesson.questions:
        for lang in ("en", "zh"):
            assert q.explain[lang] not in shown, (q.id, lang)
    for lang in ("en", "zh"):
        assert all(p.answer is None and p.explanation is None for p in silent.predictions_in[lang])
    _web_reveals_nothing(lesson, silent)


def ctx_truth(lesson, question: str) -> str:
    from lessons.judge import references

    return str(references(lesson)[f"truth_{question}"])


def _web_reveals_nothing(lesson, result) -> None:
    """The browser's verdict panel, drawn from what the page keeps of the grade, in both languages."""
    from app.web.exercise import grade_doc, verdict_view

    doc = grade_doc(result, None, None)
    kept = json.dumps(doc, ensure_ascii=False)
    for lang in ("en", "zh"):
        drawn = json.dumps([c.to_plotly_json() for c in verdict_view(doc, lang)[2]], default=str, ensure_ascii=False)
        for q in lesson.questions:
            assert q.explain[lang] not in drawn and q.explain[lang] not in kept, (q.id, lang)
            said = [p for p in doc["predictions"][lang] if p["id"] == q.id]
            assert said and said[0]["answer"] is None and said[0]["explanation"] is None


@pytest.mark.slow
def test_the_hidden_seed_is_an_instructors_option_and_reproduces_the_cases(tmp_path):
    from app.cli import main

    path = write(tmp_path, "sub", hidden_wrong(3)["data_copy_only"][0])

    def check(*extra) -> tuple[int, str]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(["lesson", "check", "3", "--file", str(path), "--json", *extra])
        return code, out.getvalue()

    first, second = check("--hidden-seed", str(SEED)), check("--hidden-seed", str(SEED))
    assert first[0] == second[0] == 1
    docs = [json.loads(x[1]) for x in (first, second)]
    assert docs[0]["hidden"] == docs[1]["hidden"] and docs[0]["criteria"] == docs[1]["criteria"]
    assert str(SEED) not in first[1]
    helps = {}
    for command in (["lesson", "check", "--help"], ["grade", "--help"]):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            main(command)
        helps[command[0]] = out.getvalue()
    assert "--hidden-seed" not in helps["lesson"] and "--hidden-seed" in helps["grade"]


# -- the folding, without grading -----------------------------------------------------------------------------------
class _Lesson:
    hidden = catalog.get(3).hidden


def test_a_criterion_right_on_the_visible_cases_but_wrong_on_a_hidden_one_fails_by_kind_only():
    visible = [Criterion("numerics", True, "max |error| 0", "12288 values"), Criterion("no_findings", False, "race")]
    case = Case("hidden_1", "unaligned", {"total": 4099})
    hidden = [
        Criterion("numerics", False, "3 of 4099 values wrong; the first at [4098]", "4099 values", "case hidden_1"),
        Criterion("no_findings", True),
    ]
    merged, kinds = merge(_Lesson, visible, [(case, hidden)])
    numerics, findings = merged
    assert not numerics.passed and "4099" not in json.dumps(numerics.__dict__, ensure_ascii=False)
    assert numerics.yours == bi(
        f"wrong on a hidden case: {_Lesson.hidden[0].name['en']}", f"在隐藏用例上出错：{_Lesson.hidden[0].name['zh']}"
    )
    assert findings is visible[1]  # a visible failure keeps its own words
    assert kinds == [{"kind": "unaligned", "passed": False}]
    again, kinds = merge(_Lesson, visible, [(case, [Criterion("numerics", True)])])
    assert again == visible and kinds == [{"kind": "unaligned", "passed": True}]


@pytest.mark.parametrize("lesson", catalog.lessons(), ids=lambda x: x.slug)
def test_every_hidden_kind_says_what_to_think_of_in_both_languages(lesson):
    for kind in lesson.hidden:
        assert kind.hint and kind.hint["en"].strip() and kind.hint["zh"].strip(), (lesson.slug, kind.id)
        assert any("\u4e00" <= ch <= "\u9fff" for ch in kind.hint["zh"]), (lesson.slug, kind.id)
        assert kind.hint["en"] != kind.hint["zh"]
