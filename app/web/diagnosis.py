"""A lesson's hidden diagnoses in the web app (lesson 10): the steps narrate symptoms; what each symptom means is
shown in the Exercise panel only after the trainee's first check of that lesson, or when they ask for it.

Which lessons are revealed is kept by the browser (``ex-revealed``, local storage, which outlives the panel a
language switch rebuilds: one trainee's browser, nothing shared between trainees; the command line and the
terminal app keep the same fact beside the exercise, :mod:`lessons.progress`). Python decides what the section
shows (``app.web.exercise.Callbacks.reveal`` with :func:`reveal` and :func:`view`), and a diagnosis's text
reaches the page only once it is revealed: it is never hidden in the page for a script to find.
"""

from __future__ import annotations

from dash import dcc, html

from lessons import catalog

TEXT = {  # key -> (English, Chinese)
    "title": ("Diagnoses", "诊断"),
    "button": ("Show the diagnoses now", "现在显示诊断"),
    "hidden": (
        "Each step of this lesson shows a symptom. What each symptom means appears here after your first check "
        "(Run & check), or now with the button.",
        "本课每个步骤展示一个症状。每个症状的诊断会在你第一次检查（运行并检查）之后显示在这里，或点击按钮立即显示。",
    ),
    "step": ("Step {i}", "步骤 {i}"),
}


def _t(key: str, lang: str, **values) -> str:
    entry = TEXT[key][0 if lang == "en" else 1]
    return entry.format(**values) if values else entry


def section(lang: str) -> html.Div:
    """The panel's place for the diagnoses (empty until the panel's callback fills it), its button, and the
    browser's store of the lessons revealed."""
    hidden = {"display": "none"}
    return html.Div(
        [
            html.Div(id="ex-diagnosis"),
            html.Button(_t("button", lang), id="ex-reveal", className="btn small", n_clicks=0, style=hidden),
            dcc.Store(id="ex-revealed", storage_type="local"),  # {lesson: "check" | "request"}
        ],
        className="diagnoses",
    )


def view(lesson, lang: str, revealed: bool) -> tuple[list, dict]:
    """(the section's children, the button's style) for ``lesson``: nothing for a lesson without diagnoses."""
    steps = [(i, s.diagnosis) for i, s in enumerate(lesson.steps, 1) if s.diagnosis]
    if not steps:
        return [], {"display": "none"}
    head = html.H4(_t("title", lang))
    if not revealed:
        return [head, html.Div(_t("hidden", lang), className="note")], {}
    items = [
        html.Div([html.B(_t("step", lang, i=i)), html.Div(d[lang], className="ntext")], className="diagnosis")
        for i, d in steps
    ]
    return [head, *items], {"display": "none"}


def reveal(clicks, result, number, revealed, fired) -> tuple[dict | None, object]:
    """The lessons revealed once ``fired`` ("ex-result": a grade arrived, "ex-reveal": the button) is taken into
    account: (the store's new value, or None if unchanged; the lesson, or None if ``number`` names none)."""
    try:
        lesson = catalog.get(int(number))
    except (TypeError, ValueError, catalog.LessonError):
        return None, None
    kept = dict(revealed) if isinstance(revealed, dict) else {}
    key = str(lesson.number)
    if key not in kept:
        if fired == "ex-result" and isinstance(result, dict) and result.get("lesson") == lesson.number:
            kept[key] = "check"
        elif fired == "ex-reveal" and clicks:
            kept[key] = "request"
        else:
            return None, lesson
        return kept, lesson
    return None, lesson


__all__ = ("TEXT", "reveal", "section", "view")
