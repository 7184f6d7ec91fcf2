"""A lesson's Exercise panel: the editor, Run & check (a job: the grader's sandbox and trusted replay), the
verdict with each criterion, the error's line marked in the editor, and the trainee's own run in the views.

The page decides, the browser draws: the verdict arrives as plain data (``ex-result``: the grade in both
languages), rendered here for the page's language, so a language switch re-renders it without running
again. Element ids are the README's automation contract: ``ex-editor``, ``ex-run``, ``ex-reset``,
``ex-download``, ``ex-cancel``, ``ex-status`` (``queued``, ``running``, ``judging``, ``done`` or ``cancelled``),
``ex-verdict`` (``PASS`` or ``FAIL`` and the score), ``ex-criteria`` (one element per criterion) and, while
a line is marked, ``ex-error-line`` with its number in ``data-line``. The server's callbacks are the methods
of :class:`Callbacks` (a test calls them as functions, with what a page would send); :func:`register` wires
them and the browser's to the page's ids.
"""

from __future__ import annotations

import json
import time

from dash import ALL, Input, Output, State, dcc, html, no_update
from dash.exceptions import PreventUpdate

from app.present.messages import known_lang
from app.present.messages import t as msg
from app.server.jobs import Busy
from lessons.catalog import Lesson, get
from lessons.grader import VERDICTS, GradeResult

from . import diagnosis
from .editor import editor, editor_buttons
from .errors import job_failed
from .exercise_diff import comparison, diff_view
from .exercise_text import TEXT, text
from .playground import JOB_POLL_MS, session_id
from .runs import RunRequestError, Runs
from .trigger import FROM_DASH, triggered


def panel(lesson: Lesson, lang: str, code_runs: tuple[str, str]) -> html.Div:
    """The Exercise panel of ``lesson``: its text, the editor on the stub (or the trainee's draft), the
    buttons, and the places the verdict goes. ``code_runs``: (policy, why) from :attr:`Runs.code_runs`."""
    policy, why = code_runs
    banner = []
    if policy == "off":
        banner = [html.Div(text("off", lang, why=why), id="ex-off", className="error")]
    elif policy == "unsandboxed":
        banner = [html.Div(text("unsandboxed", lang), id="ex-unsandboxed", className="warning")]
    stub = lesson.exercise_file.read_text(encoding="utf-8")
    return html.Div(
        [
            *banner,
            html.Div(
                [
                    html.B(f"{text('objective', lang)}: "),
                    html.Span(lesson.objective.text[lang]),
                    html.Span(f" ({text('level', lang)}: {lesson.level_name(lang)})", className="hint"),
                ],
                id="ex-objective",
                className="objective",
            ),
            html.Div(lesson.exercise_text[lang], className="exercise"),
            *_hidden_kinds(lesson, lang),
            editor(lesson.number, stub, lang, lesson.exercise_file.name),
            html.Div(
                [
                    html.Button(
                        text("run", lang), id="ex-run", className="btn primary", n_clicks=0, disabled=policy == "off"
                    ),
                    html.Button(text("cancel", lang), id="ex-cancel", className="btn", style={"display": "none"}),
                    *editor_buttons(lang),
                    html.Span("", id="ex-status", className="status"),
                ],
                className="row",
            ),
            html.Div(id="ex-verdict", className="verdict"),
            diagnosis.section(lang),
            html.Div(id="ex-criteria", className="criteria"),
            html.Div(id="ex-output"),
            html.Div(
                [
                    html.Button(text("mine", lang), id="ex-show-mine", className="btn small", n_clicks=0),
                    html.Button(text("reference", lang), id="ex-show-ref", className="btn small", n_clicks=0),
                ],
                id="ex-run-buttons",
                className="row",
                style={"display": "none"},
            ),
            dcc.Store(id="ex-line"),
            dcc.Store(id="ex-number", data=lesson.number),
        ],
        id="ex-panel",
        className="expanel",
    )


def _hidden_kinds(lesson: Lesson, lang: str) -> list:
    """What the check also runs: the kinds of its hidden cases (their values are never shown)."""
    if not lesson.hidden:
        return []
    kinds = [html.Li(kind.name[lang]) for kind in lesson.hidden]
    return [html.Div([html.Div(text("hidden_kinds", lang)), html.Ul(kinds)], id="ex-hidden-kinds", className="hint")]


def grade_doc(result: GradeResult, run: dict | None, runs: Runs) -> dict:
    """What the page keeps of a grade (plain JSON): the verdict, the criteria in both languages, the messages,
    the costs, the error line and the trainee's run with its size beside the lesson's."""
    doc = {
        "verdict": result.verdict,
        "score": result.score,
        "lesson": result.lesson,
        "time_s": round(result.time_s, 2),
        "messages": result.messages,
        "stdout": result.stdout,
        "costs": result.costs,
        "line": result.line,
        "criteria": {lang: [c.to_dict() for c in items] for lang, items in result.criteria_in.items()},
        "predictions": {lang: [x.to_dict() for x in items] for lang, items in result.predictions_in.items()},
        "hidden": {lang: [x.to_dict() for x in items] for lang, items in result.hidden_in.items()},
        "figures": result.figures,
        "run": run,
    }
    if run is not None:  # the comparison with the reference solution's run is made here, in the job
        reference = runs.reference(get(result.lesson)) or {"lesson": result.lesson}
        doc.update(comparison(runs.load(run), runs.load(reference)))
    return doc


def verdict_view(doc: dict, lang: str) -> tuple:
    """``ex-verdict``, ``ex-criteria`` and ``ex-output`` for a grade kept by :func:`grade_doc`."""
    verdict = doc["verdict"]
    en, zh = VERDICTS.get(verdict, (verdict, verdict))
    head = html.Div(
        [
            html.B(verdict),
            html.Span(f" {text('score', lang, score=doc['score'])} — {en if lang == 'en' else zh}"),
        ],
        className=f"verdict-line {'pass' if verdict == 'PASS' else 'fail'}",
        **{"data-n": str(doc.get("n", 0))},  # which click of Run & check this answers
    )
    criteria = [_criterion(c, lang) for c in doc["criteria"].get(lang) or doc["criteria"]["en"]]
    output = []
    hidden = (doc.get("hidden") or {}).get(lang) or []
    if hidden:
        output.append(_hidden(hidden, lang))
    if doc.get("figures"):
        output.append(figures_view(doc["figures"], lang))
    predictions = (doc.get("predictions") or {}).get(lang) or []
    if predictions:
        output.append(_predictions(predictions, lang))
    if verdict not in ("PASS", "FAIL", "NOT_ON_DEVICE") and doc["messages"]:
        output.append(html.Pre("\n".join(doc["messages"]), id="ex-traceback", className="traceback"))
    if doc.get("costs"):
        output.append(_costs(doc["costs"], lang))
    if doc.get("stdout", "").strip():
        output.append(html.Details([html.Summary(text("printed", lang)), html.Pre(doc["stdout"])]))
    if doc.get("run"):
        us = f"{doc['us']:,.3f}"
        output.append(
            html.Div(
                text("your_run", lang, events=f"{doc['events']:,}", us=us, ref_events=f"{doc['ref_events']:,}"),
                id="ex-run-note",
                className="note",
            )
        )
    elif verdict != "NO_SUBMISSION":
        output.append(html.Div(text("no_run", lang), id="ex-run-note", className="note"))
    return head, criteria, output


def _criterion(c: dict, lang: str) -> html.Div:
    state = "notrun" if c["passed"] is None else ("pass" if c["passed"] else "fail")
    mark = {"pass": "✓", "fail": "✗", "notrun": "–"}[state]
    body = [html.Div([html.Span(mark, className="mark"), html.Span(c["title"])], className="title")]
    if c["passed"] is None:
        body.append(html.Div(text("not_run", lang), className="hint"))
    else:
        if c["yours"] or c["expected"]:
            body.append(html.Div(f"{text('yours', lang)}: {c['yours']}", className="yours"))
            body.append(html.Div(f"{text('expected', lang)}: {c['expected']}", className="expected"))
        if c["detail"]:
            body.append(html.Div(c["detail"], className="detail"))
        if not c["passed"] and c["hint"]:
            body.append(html.Div(f"{text('hint', lang)}: {c['hint']}", className="hint"))
    return html.Div(body, className=f"criterion {state}", **{"data-id": c["id"], "data-state": state})


def _hidden(hidden: list[dict], lang: str) -> html.Div:
    """How each kind of hidden case went (never a case's values)."""
    items = []
    for h in hidden:
        state = "notrun" if h["passed"] is None else ("pass" if h["passed"] else "fail")
        mark = {"pass": "✓", "fail": "✗", "notrun": "–"}[state]
        items.append(html.Li(f"{mark} {h['name']}", className=state, **{"data-kind": h["kind"], "data-state": state}))
    return html.Div([html.H5(text("hidden", lang)), html.Ul(items)], id="ex-hidden")


def figures_view(figures: dict, lang: str) -> html.Div:
    """The objective's figures: yours beside the reference solution's, on the check's main case."""
    from lessons.costs import FIGURES, figure_text

    at = 0 if lang == "en" else 1
    yours, ref = figures.get("yours") or {}, figures.get("reference") or {}
    head = html.Tr([html.Th(text(k, lang)) for k in ("figure", "mine_col", "ref_col")])
    rows = [
        html.Tr(
            [
                html.Td(FIGURES[k].label[at]),
                html.Td(figure_text(yours.get(k), FIGURES[k].unit)),
                html.Td(figure_text(ref.get(k), FIGURES[k].unit)),
            ],
            title=text(FIGURES[k].better, lang),
        )
        for k in yours
        if k in FIGURES
    ]
    return html.Div([html.H5(text("figures", lang)), html.Table([head, *rows], className="cmp")], id="ex-figures")


def _predictions(predictions: list[dict], lang: str) -> html.Div:
    items = []
    for p in predictions:
        if p["correct"] is None:
            said, state = text("unanswered", lang), "unanswered"
        else:
            state = "right" if p["correct"] else "wrong"
            said = f"{text('yours', lang)}: {p['yours']}; {text('simulator', lang)}: {p['answer']} — {p['explanation']}"
        items.append(html.Li([html.Div(p["question"]), html.Div(said, className="hint")], className=state))
    return html.Div([html.H5(text("predictions", lang)), html.Ul(items)], id="ex-predictions")


def _costs(costs: dict, lang: str) -> html.Details:
    rows = [html.Tr([html.Td(level), html.Td(f"{n:,} B")]) for level, n in costs["bytes"].items()]
    pipes = [
        html.Tr([html.Td(x) for x in (pipe, f"{p['busy_us']:,.3f} µs", f"{p['cores']}", f"{p['share']:.0%}")])
        for pipe, p in costs["pipes"].items()
    ]
    return html.Details(
        [
            html.Summary(text("costs", lang)),
            html.H5(text("bytes", lang)),
            html.Table(rows, className="cmp"),
            html.H5(text("pipes", lang)),
            html.Table(pipes, className="cmp"),
        ],
        id="ex-costs",
        open=True,
    )


_VIEWS = tuple(
    Output(name, prop, allow_duplicate=True)
    for name, prop in (
        ("ex-verdict", "children"),
        ("ex-criteria", "children"),
        ("ex-output", "children"),
        ("ex-run-buttons", "style"),
        ("ex-line", "data"),
    )
)
_UNCHANGED = (no_update,) * len(_VIEWS)


def _views(doc, lang: str, number) -> tuple:
    """What :data:`_VIEWS` show of a kept grade: the verdict, the criteria, the output (with the comparison),
    the run buttons and the line to mark; nothing for no grade or another lesson's."""
    if not isinstance(doc, dict) or doc.get("lesson") != number:
        return [], [], [], {"display": "none"}, None
    head, criteria, output = verdict_view(doc, lang)
    if doc.get("diff"):
        output = [*output, diff_view(doc, lang)]
    return head, criteria, output, ({} if doc.get("run") else {"display": "none"}), doc.get("line")


class Callbacks:
    """The Exercise panel's server-side callbacks over the runs of ``runs``: each method takes what its inputs and
    states send, in order (a job's ``set_progress`` first; ``trigger``, the id of the input that fired, last)."""

    def __init__(self, runs: Runs) -> None:
        self.runs = runs

    def check(self, set_progress, submit, lang, session):
        """A job: the code graded as ``ascendsim lesson check`` grades it; the trainee's run then plays."""
        lang = known_lang(lang)
        if not isinstance(submit, dict):
            raise PreventUpdate
        policy, why = self.runs.code_runs
        if policy == "off":
            return no_update, no_update, text("off", lang, why=why), no_update, *_UNCHANGED
        set_progress([text("queued", lang, ahead=0)])

        def report(phase: str, values: dict) -> None:
            set_progress([text(phase, lang, **values) if phase in TEXT else msg(f"web.phase.{phase}", lang, **values)])

        try:
            result, run = self.runs.check(
                submit.get("lesson"), submit.get("code"), lang, session_id(session), report, policy == "sandbox"
            )
        except RunRequestError as exc:
            return no_update, no_update, f"{text('failed', lang)}: {exc.text(lang)}", no_update, *_UNCHANGED
        except Busy as exc:
            return (
                no_update,
                no_update,
                f"{text('failed', lang)}: {msg(exc.key, lang, **exc.values)}",
                no_update,
                *_UNCHANGED,
            )
        doc = {**grade_doc(result, run, self.runs), "n": submit.get("n")}
        done = text("done", lang, s=f"{result.time_s:.1f}")
        return doc, run, done, (run or no_update), *_views(doc, lang, doc["lesson"])

    def show(self, lang, number, doc):
        """The kept grade, drawn again whenever the panel is (a language switch rebuilds it; ``ex-result`` lives
        outside it, so the verdict, the diff and the marked line stay); nothing for another lesson's grade."""
        return _views(doc, known_lang(lang), number)

    def go(self, clicks, mine, run, *, trigger=FROM_DASH):
        """A statement's link: the trainee's run in the views, at the step where it shows."""
        trigger = triggered(trigger)
        if (
            not isinstance(trigger, dict)
            or not isinstance(clicks, list)
            or not any(clicks)
            or not isinstance(mine, dict)
        ):
            raise PreventUpdate
        step = trigger.get("step")
        if type(step) is not int or step < 0:
            raise PreventUpdate
        target = {"step": step, "at": time.time()}
        return (no_update if run == mine else mine), target

    def reveal(self, clicks, result, lang, number, revealed, *, trigger=FROM_DASH):
        """A lesson's hidden diagnoses (:mod:`.diagnosis`): revealed by a grade of it arriving or by the button
        (kept in the browser's ``ex-revealed``); the section drawn for the state it is in."""
        kept, lesson = diagnosis.reveal(clicks, result, number, revealed, triggered(trigger))
        if lesson is None:
            return no_update, [], {"display": "none"}
        shown = kept if kept is not None else (revealed if isinstance(revealed, dict) else {})
        children, style = diagnosis.view(lesson, known_lang(lang), str(lesson.number) in shown)
        return (kept if kept is not None else no_update), children, style

    def switch(self, _mine, _ref, mine, number, *, trigger=FROM_DASH):
        trigger = triggered(trigger)
        if trigger == "ex-show-mine" and isinstance(mine, dict):
            return mine
        if trigger == "ex-show-ref" and number:
            return {"lesson": number}
        raise PreventUpdate


def register(app, runs: Runs) -> None:
    """The Exercise panel's callbacks on ``app``: the browser's, and :class:`Callbacks` over ``runs``."""
    cb = Callbacks(runs)
    app.clientside_callback(  # the code in the editor, sent with the click (the mark is cleared meanwhile)
        """(n, lesson) => {
            const ed = window.AscendSimEditor;
            if (!n || !ed) { return window.dash_clientside.no_update; }
            ed.markLine("ex-editor", null);
            return {code: ed.getValue("ex-editor"), lesson: lesson, n: n};
        }""",
        Output("ex-submit", "data"),
        Input("ex-run", "n_clicks"),
        State("ex-number", "data"),
        prevent_initial_call=True,
    )
    app.clientside_callback(  # Cancel: the job is killed (Dash ends its process tree, the sandbox with it)
        f"(n, lang) => n ? (lang === 'zh' ? {json.dumps(text('cancelled', 'zh'))} : "
        f"{json.dumps(text('cancelled', 'en'))}) : window.dash_clientside.no_update",
        Output("ex-status", "children", allow_duplicate=True),
        Input("ex-cancel", "n_clicks"),
        State("lang-page", "data"),
        prevent_initial_call=True,
    )
    app.clientside_callback(  # the error's line marked in the editor (or cleared)
        """(line) => {
            const ed = window.AscendSimEditor;
            if (ed) { ed.markLine("ex-editor", line || null); }
            return window.dash_clientside.no_update;
        }""",
        Output("ex-line", "id"),
        Input("ex-line", "data"),
        prevent_initial_call=True,
    )
    app.callback(
        Output("ex-result", "data"),
        Output("ex-mine", "data"),
        Output("ex-status", "children"),
        Output("run", "data", allow_duplicate=True),
        *_VIEWS,  # drawn in the job: the verdict arrives with "done", not a round trip later
        Input("ex-submit", "data"),
        State("lang-page", "data"),
        State("session", "data"),
        background=True,
        progress=[Output("ex-status", "children", allow_duplicate=True)],
        running=[
            (Output("ex-run", "disabled"), True, False),
            (Output("ex-cancel", "style"), {}, {"display": "none"}),
        ],
        cancel=[Input("ex-cancel", "n_clicks")],
        interval=JOB_POLL_MS,
        on_error=job_failed(4 + len(_VIEWS), 2),  # ex-status
        prevent_initial_call=True,
    )(cb.check)
    app.callback(
        *_VIEWS,
        Input("lang-page", "data"),
        Input("ex-number", "data"),
        State("ex-result", "data"),
        prevent_initial_call="initial_duplicate",
    )(cb.show)
    app.callback(
        Output("run", "data", allow_duplicate=True),
        Output("jump-target", "data", allow_duplicate=True),
        Input({"type": "diff-step", "i": ALL, "step": ALL}, "n_clicks"),
        State("ex-mine", "data"),
        State("run", "data"),
        prevent_initial_call=True,
    )(cb.go)
    app.callback(
        Output("run", "data", allow_duplicate=True),
        Input("ex-show-mine", "n_clicks"),
        Input("ex-show-ref", "n_clicks"),
        State("ex-mine", "data"),
        State("ex-number", "data"),
        prevent_initial_call=True,
    )(cb.switch)
    app.callback(
        Output("ex-revealed", "data"),
        Output("ex-diagnosis", "children"),
        Output("ex-reveal", "style"),
        Input("ex-reveal", "n_clicks"),
        Input("ex-result", "data"),
        Input("lang-page", "data"),
        Input("ex-number", "data"),
        State("ex-revealed", "data"),
    )(cb.reveal)


__all__ = ("Callbacks", "grade_doc", "panel", "register", "text", "verdict_view")
