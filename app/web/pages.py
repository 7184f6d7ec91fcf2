"""The pages' callbacks: routing, the language, the lesson player's text and questions, and the exports of
the current run (the playground and compare pages have modules of their own).

Everything a browser sends is validated before use; a bad input is answered in the page. The server's
callbacks are the methods of :class:`Callbacks` (a test calls them as functions, with what a page would
send); :func:`register` wires them and the browser's to the page's ids.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from dash import ALL, Input, Output, State, dcc, html, no_update
from dash.exceptions import PreventUpdate

from app.present.cpp.view import lesson_program
from app.present.messages import LANGS, known_lang
from app.present.messages import t as msg
from engine.profiles.profile import DEFAULT_PROFILE, list_profiles
from engine.scenarios import registry
from lessons.catalog import LessonError, get

from . import layout, tool_pages
from .errors import lesson_of
from .exercise import panel
from .panels import program_panel
from .runs import RunRequestError, Runs
from .trigger import FROM_DASH, outputs_of, triggered


class Callbacks:
    """The pages' server-side callbacks over the runs of ``runs``, in ``default_lang`` until a page says otherwise:
    each method takes what its inputs and states send, in order (and ``trigger``, the id of the input that
    fired, where that matters)."""

    def __init__(self, runs: Runs, default_lang: str) -> None:
        self.runs = runs
        self.default_lang = default_lang
        self.scenario_names = list(registry())
        self.profiles = list_profiles()

    # -- routing and the language ---------------------------------------------------------------------------
    def route(self, path, search, lang):
        lang = known_lang(lang or self.default_lang)
        path = (path if isinstance(path, str) else "/").rstrip("/") or "/"
        if path in ("/", "/lessons"):
            return layout.lessons_page(lang, self.runs.lessons(), _lesson_asked(search, self.runs))
        if path == "/playground":
            return layout.playground_page(lang, self.scenario_names, self.profiles, "matmul", DEFAULT_PROFILE)
        if path == "/compare":
            return tool_pages.compare_page(lang, self.scenario_names)
        if path == "/export":
            return tool_pages.export_page(lang)
        return tool_pages.not_found(lang)

    # from the switch itself (in the header, on every page): its first call, with the language the browser
    # kept, translates the header too (pages are built in that language already)
    def translate(self, lang, *, outputs=FROM_DASH):
        """Every ``{"type": "t", "key": ...}`` text on the page in ``lang`` (``outputs``: Dash's list of them)."""
        lang = known_lang(lang)
        return [msg(out["id"]["key"], lang) for out in outputs_of(outputs)]

    def remember(self, run):
        if not run:
            raise PreventUpdate
        return run

    # -- lessons ----------------------------------------------------------------------------------------------
    def lesson(self, number, lang, run):
        lang = known_lang(lang)
        try:
            les = lesson_of(1 if number is None else number)
        except RunRequestError as exc:
            return no_update, html.Div(exc.text(lang), className="error"), [], [], []
        head = html.Div(
            [
                html.H2(msg("web.lesson_n", lang, n=les.number, title=les.title[lang])),
                html.Details([html.Summary(msg("web.about", lang)), html.Div(les.summary[lang])]),
            ],
            className="lessonhead",
        )
        steps = []
        for i, step in enumerate(les.steps):
            first = _preview(step.text[lang].split("\n", 1)[0])
            steps.append(html.Button(f"{i + 1}. {first}", id={"type": "lesson-step", "i": i}, className="lstep"))
        questions = []
        if les.questions:
            questions.append(html.H4(msg("web.questions", lang)))
        for q in les.questions:
            questions.append(
                html.Div(
                    [
                        html.Div(q.text[lang]),
                        dcc.RadioItems(
                            id={"type": "q-answer", "q": q.id},
                            options=[{"label": q.label(c, lang), "value": c} for c in q.choices],
                            inline=True,
                        ),
                        html.Button(msg("web.check", lang), id={"type": "q-check", "q": q.id}, className="btn small"),
                        html.Div(id={"type": "q-result", "q": q.id}, className="answer"),
                    ],
                    className="question",
                )
            )
        exercise = panel(les, lang, self.runs.code_runs)
        wanted = {"lesson": les.number}
        mine = isinstance(run, dict) and run.get("exercise") == les.number  # the trainee's run stays on a switch
        return (no_update if run == wanted or mine else wanted), head, steps, questions, exercise

    def whole_program(self, clicks, number, lang):
        """The lesson's whole program in C++ (Ascend C), once its tab was opened (the lesson's run says which
        functions the program runs)."""
        if not clicks:
            raise PreventUpdate
        lang = known_lang(lang)
        try:
            les = get(int(number or 1))
            loaded = self.runs.load({"lesson": les.number})
        except (LessonError, ValueError, TypeError, RunRequestError) as exc:
            return html.Div(str(exc), className="error")
        program = lesson_program(les.number, les.solution_file, loaded.replay.trace, lang)
        return program_panel(program)

    def lesson_menu(self, lang):
        """The lesson menu in the language switched to (the page was built in the one it opened in)."""
        return layout.lesson_options(self.runs.lessons(), known_lang(lang))

    def answer(self, clicks, answers, ids, number, lang, *, trigger=FROM_DASH):
        lang = known_lang(lang)
        trigger = triggered(trigger)
        if not isinstance(trigger, dict) or not isinstance(clicks, list) or not any(clicks):
            raise PreventUpdate
        if not (isinstance(answers, list) and isinstance(ids, list) and len(answers) == len(ids) == len(clicks)):
            raise PreventUpdate
        try:
            les = get(int(number))
        except (LessonError, TypeError, ValueError):
            raise PreventUpdate from None
        texts, classes = [], []
        for ident, yours, n in zip(ids, answers, clicks, strict=True):
            if ident != trigger or not n:
                texts.append(no_update)
                classes.append(no_update)
                continue
            question = next((q for q in les.questions if q.id == ident.get("q")), None)
            if question is None:  # a question this lesson does not ask: nothing to check
                texts.append(no_update)
                classes.append(no_update)
                continue
            if yours is None:
                texts.append(msg("web.choose_first", lang))
                classes.append("answer")
                continue
            truth = self.runs.truth(les, question.id)
            right = yours == truth
            key = "web.right" if right else "web.wrong"
            said = msg(key, lang, answer=question.label(truth, lang), yours=question.label(str(yours), lang))
            texts.append([html.Div(said), html.Div(question.explain[lang])])
            classes.append("answer right" if right else "answer wrong")
        return texts, classes

    # -- export ------------------------------------------------------------------------------------------------------
    def export_label(self, run, lang):
        lang = known_lang(lang)
        if not run or not isinstance(run, dict):
            return msg("web.export_none", lang)
        return msg("web.export_run", lang, name=describe(run, lang))

    def export(self, _c, _s, _v, run, lang, *, trigger=FROM_DASH):
        if not run:
            return no_update, msg("web.export_none", known_lang(lang))
        try:
            loaded = self.runs.load(run)
        except RunRequestError as exc:
            return no_update, exc.text(known_lang(lang))
        name = export_name(run)
        which = triggered(trigger)
        if which == "exp-chrome":
            from engine.analysis.export import chrome_trace

            text, _count = chrome_trace(loaded.replay.result, metadata={"run": describe(run)})
            return dcc.send_string(text, f"{name}.trace.json"), ""
        report = loaded.replay.report()
        if which == "exp-summary":
            doc = {"run": run, "events": loaded.events, "simulated_us": loaded.outline["end_us"], **report.to_dict()}
            return dcc.send_string(json.dumps(doc, indent=1, default=str), f"{name}.summary.json"), ""
        from engine.analysis.export import write_pipe_csv

        with tempfile.TemporaryDirectory() as tmp:
            path = write_pipe_csv(Path(tmp) / "pipes.csv", report.metrics)
            text = path.read_text()
        return dcc.send_string(text, f"{name}.pipes.csv"), ""


def register(app, runs: Runs, default_lang: str) -> None:
    """The pages' callbacks on ``app``: :class:`Callbacks` over ``runs``, and the browser's."""
    cb = Callbacks(runs, default_lang)
    # -- routing and the language ---------------------------------------------------------------------------
    app.callback(
        Output("page", "children"), Input("url", "pathname"), State("url", "search"), State("lang-switch", "value")
    )(cb.route)
    app.clientside_callback(  # known_lang in the browser: no server round trip before a page's first callbacks
        f"""(lang, now) => {{ const l = {json.dumps(list(LANGS))}.indexOf(lang) >= 0 ? lang : {json.dumps(LANGS[0])};
            return l === now ? window.dash_clientside.no_update : l; }}""",
        Output("lang-page", "data"),
        Input("lang-switch", "value"),
        State("lang-page", "data"),
    )
    app.callback(
        Output({"type": "t", "key": ALL, "n": ALL}, "children"),
        Input("lang-switch", "value"),
    )(cb.translate)
    for local in ("lesson-lang", "player-lang"):  # see layout.page_stores; unchanged: nothing redrawn
        app.clientside_callback(
            "(lang, now) => lang === now ? window.dash_clientside.no_update : lang",
            Output(local, "data"),
            Input("lang-page", "data"),
            State(local, "data"),
        )
    app.clientside_callback(  # the tab's id, made once per browser session: its jobs are counted under it
        """(path, id) => id || (self.crypto && crypto.randomUUID ? crypto.randomUUID().replace(/-/g, "")
                                 : Math.random().toString(36).slice(2) + Date.now().toString(36))""",
        Output("session", "data"),
        Input("url", "pathname"),
        State("session", "data"),
    )
    app.callback(
        Output("last-run", "data"),
        Input("run", "data"),
        prevent_initial_call=True,
    )(cb.remember)

    # -- lessons ----------------------------------------------------------------------------------------------
    app.callback(
        Output("run", "data"),
        Output("lesson-head", "children"),
        Output("lesson-steps", "children"),
        Output("lesson-questions", "children"),
        Output("lesson-exercise", "children"),
        Input("lesson-select", "value"),
        Input("lesson-lang", "data"),
        State("run", "data"),
    )(cb.lesson)
    app.callback(
        Output("lesson-select", "options"),
        Input("lesson-lang", "data"),
        prevent_initial_call=True,
    )(cb.lesson_menu)
    app.clientside_callback(  # the lesson page's tabs: the views, the exercise, or the whole program in C++
        """(views, exercise, cpp, mine, ref, links) => {
            const c = window.dash_clientside.callback_context;
            if (!c.triggered.length || !c.triggered[0].value) { return window.dash_clientside.no_update; }
            // a panel rebuilt (a new language) is no click; showing a run (mine, ref, a diff's step) shows the views
            const which = {"tab-exercise": 1, "tab-cpp": 2}[c.triggered_id] || 0;
            const panels = [0, 1, 2].map(function (k) { return k === which ? "" : "hidden"; });
            return panels.concat([0, 1, 2].map(function (k) { return k === which ? "tab on" : "tab"; }));
        }""",
        Output("player-area", "className"),
        Output("lesson-exercise", "className"),
        Output("lesson-cpp", "className"),
        Output("tab-views", "className"),
        Output("tab-exercise", "className"),
        Output("tab-cpp", "className"),
        Input("tab-views", "n_clicks"),
        Input("tab-exercise", "n_clicks"),
        Input("tab-cpp", "n_clicks"),
        Input("ex-show-mine", "n_clicks"),
        Input("ex-show-ref", "n_clicks"),
        Input({"type": "diff-step", "i": ALL, "step": ALL}, "n_clicks"),
        prevent_initial_call=True,
    )
    app.callback(
        Output("lesson-cpp", "children"),
        Input("tab-cpp", "n_clicks"),
        Input("lesson-select", "value"),
        Input("lesson-lang", "data"),
    )(cb.whole_program)
    app.callback(
        Output({"type": "q-result", "q": ALL}, "children"),
        Output({"type": "q-result", "q": ALL}, "className"),
        Input({"type": "q-check", "q": ALL}, "n_clicks"),
        State({"type": "q-answer", "q": ALL}, "value"),
        State({"type": "q-check", "q": ALL}, "id"),
        State("lesson-select", "value"),
        State("lang-page", "data"),
        prevent_initial_call=True,
    )(cb.answer)

    # -- export ------------------------------------------------------------------------------------------------------
    app.callback(
        Output("exp-run", "children"),
        Input("last-run", "data"),
        Input("lang-page", "data"),
    )(cb.export_label)
    app.callback(
        Output("exp-download", "data"),
        Output("exp-error", "children"),
        Input("exp-chrome", "n_clicks"),
        Input("exp-summary", "n_clicks"),
        Input("exp-csv", "n_clicks"),
        State("last-run", "data"),
        State("lang-page", "data"),
        prevent_initial_call=True,
    )(cb.export)


def _lesson_asked(search, runs: Runs) -> int | None:
    """The lesson ``/?lesson=N`` names (None: none, or not a lesson; the page then opens its remembered one)."""
    from urllib.parse import parse_qs

    asked = parse_qs(search.lstrip("?")).get("lesson", [""])[0] if isinstance(search, str) else ""
    numbers = {x.number for x in runs.lessons()}
    return int(asked) if asked.isdigit() and int(asked) in numbers else None


def _given(run: dict) -> dict:
    """The parameters a run was asked with, those left empty (automatic) aside."""
    params = run.get("params")
    return {k: v for k, v in params.items() if v not in (None, "")} if isinstance(params, dict) else {}


def describe(run: dict, lang: str = "en") -> str:
    """A run in a few words, in ``lang`` (the scenario's own parameters as given)."""
    if "lesson" in run:
        return msg("web.run_lesson", lang, n=run["lesson"])
    if "exercise" in run:
        return msg("web.run_exercise", lang, n=run["exercise"])
    params = ", ".join(f"{k}={v}" for k, v in _given(run).items())
    said = msg("web.run_scenario", lang, scenario=run.get("scenario"), profile=run.get("profile"), params=params)
    return said if run.get("numerics", True) else f"{said} {msg('web.timing_only', lang)}"


def export_name(run: dict) -> str:
    """A file name for a run's exports: ``lesson-3``, ``exercise-3``, ``matmul-m1024-n1024-k1024``."""
    if "lesson" in run:
        return f"lesson-{run['lesson']}"
    if "exercise" in run:
        return f"exercise-{run['exercise']}"
    parts = [str(run.get("scenario"))] + [f"{k}{v}" for k, v in _given(run).items()]
    if run.get("numerics") is False:
        parts.append("timing")
    name = "-".join(parts)
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:80]


__all__ = ("Callbacks", "describe", "export_name", "register")


def _preview(line: str, width: int = 70) -> str:
    """A step's first line cut to ``width`` characters, never inside a word of Latin letters (an identifier such
    as DataCopyPad is kept whole or left out), with an ellipsis when cut."""
    if len(line) <= width:
        return line

    def latin(ch: str) -> bool:
        return ch.isascii() and (ch.isalnum() or ch == "_")

    cut = width
    while cut > 0 and latin(line[cut - 1]) and latin(line[cut]):
        cut -= 1
    return line[:cut].rstrip() + "…"
