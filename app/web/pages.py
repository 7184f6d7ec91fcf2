"""The pages' callbacks: routing, the language, the lesson player's text and questions, the playground's
form and runs (with progress), two runs compared, and the exports of the current run.

Everything a browser sends is validated here before use (the scenario's own checks and the server's
budget, :mod:`.runs`); a bad input is answered in the page, naming the field, the limit and the value.
"""

from __future__ import annotations

import json
import shlex
import tempfile
import time
from pathlib import Path

from dash import ALL, Input, Output, State, ctx, dcc, html, no_update
from dash.exceptions import PreventUpdate

from app.present.messages import t as msg
from engine.profile import DEFAULT_PROFILE, list_profiles
from engine.scenarios import registry
from lessons.catalog import LessonError, get

from . import figures, layout, panels, render
from .runs import RunRequestError, Runs, validate_request

MNK = ("m", "n", "k")
WAIT_S = 2.0  # a run that finishes this quickly is shown without polling


def _lang(lang) -> str:
    return lang if lang in ("en", "zh") else "en"


# -- the playground form ----------------------------------------------------------------------------------
def param_fields(scenario_name: str, lang: str) -> list:
    """Inputs for the scenario's parameters other than m, n and k (ids ``{"type": "pg-param", "name": ...}``)."""
    scenario = registry()[scenario_name]
    out = []
    for p in scenario.params:
        if p.name in MNK:
            continue
        ident = {"type": "pg-param", "name": p.name}
        if p.type is bool:
            field = dcc.Checklist(
                id=ident, options=[{"label": p.name, "value": "on"}], value=["on"] if p.default else []
            )
            out.append(html.Div(field, className="param", title=p.help))
            continue
        if p.choices:
            field = dcc.Dropdown(id=ident, options=list(p.choices), value=p.default, clearable=False, className="dd")
        else:
            field = dcc.Input(id=ident, type="text", value="" if p.default is None else str(p.default))
        out.append(html.Label([p.name, field], className="param", title=p.help))
    return out


def request_of(scenario: str, profile: str, m, n, k, ids: list, values: list, numerics) -> dict:
    """The playground's inputs as a run request (validated later by :func:`runs.validate_request`)."""
    names = {p.name: p for p in registry()[scenario].params} if scenario in registry() else {}
    params = {}
    for name, value in zip(MNK, (m, n, k), strict=True):
        if name in names:
            params[name] = value
    for ident, value in zip(ids, values, strict=True):
        p = names.get(ident["name"])
        if p is None:
            continue
        params[p.name] = bool(value) if p.type is bool else value
    return {"scenario": scenario, "profile": profile, "params": params, "numerics": bool(numerics)}


def progress(status: dict, lang: str):
    """The progress line of a running job (phase, elapsed, the estimate if there is one)."""
    phase = msg(f"web.phase.{status.get('phase', 'simulating')}", lang)
    elapsed = status.get("elapsed_s", 0.0)
    expected = status.get("expected_s")
    if expected:
        text = msg("web.running_of", lang, phase=phase, elapsed=f"{elapsed:.1f}", expected=f"{expected:.0f}")
        return [html.Div(text), panels.bar(min(0.95, elapsed / expected))]
    return msg("web.running", lang, phase=phase, elapsed=f"{elapsed:.1f}")


def parse_options(scenario: str, text: str) -> dict:
    """``--m 1024 --buffer-num 1 --pageable`` (the CLI's syntax) as parameter values; RunRequestError if malformed."""
    params = {p.flag: p for p in registry()[scenario].params}
    try:
        words = shlex.split(text or "")
    except ValueError as exc:
        raise RunRequestError(f"options: {exc}") from None
    out, i = {}, 0
    while i < len(words):
        word = words[i]
        p = params.get(word)
        if p is None:
            raise RunRequestError(f"options: {word!r} is not an option of {scenario} ({', '.join(params)})")
        if p.type is bool:
            out[p.name] = True
            i += 1
            continue
        if i + 1 >= len(words):
            raise RunRequestError(f"options: {word} needs a value")
        out[p.name] = words[i + 1]
        i += 2
    return out


def register(app, runs: Runs, default_lang: str) -> None:
    scenario_names = list(registry())
    profiles = list_profiles()

    # -- routing and the language ---------------------------------------------------------------------------
    @app.callback(Output("page", "children"), Input("url", "pathname"), State("lang-switch", "value"))
    def route(path, lang):
        lang = _lang(lang or default_lang)
        path = (path or "/").rstrip("/") or "/"
        if path in ("/", "/lessons"):
            return layout.lessons_page(lang, runs.lessons())
        if path == "/playground":
            return layout.playground_page(lang, scenario_names, profiles, "matmul", DEFAULT_PROFILE)
        if path == "/compare":
            return layout.compare_page(lang, scenario_names)
        if path == "/export":
            return layout.export_page(lang)
        return layout.not_found(lang)

    @app.callback(Output("lang-page", "data"), Input("lang-switch", "value"), State("lang-page", "data"))
    def mirror_lang(lang, current):
        lang = _lang(lang)
        if lang == current:
            raise PreventUpdate
        return lang

    @app.callback(
        Output({"type": "t", "key": ALL, "n": ALL}, "children"),
        Input("lang-page", "data"),
        State({"type": "t", "key": ALL, "n": ALL}, "id"),
    )
    def translate(lang, ids):
        lang = _lang(lang)
        return [msg(i["key"], lang) for i in ids]

    @app.callback(Output("last-run", "data"), Input("run", "data"), prevent_initial_call=True)
    def remember(run):
        if not run:
            raise PreventUpdate
        return run

    # -- lessons ----------------------------------------------------------------------------------------------
    @app.callback(
        Output("run", "data"),
        Output("lesson-head", "children"),
        Output("lesson-steps", "children"),
        Output("lesson-questions", "children"),
        Output("lesson-exercise", "children"),
        Input("lesson-select", "value"),
        Input("lang-page", "data"),
        State("run", "data"),
    )
    def lesson(number, lang, run):
        lang = _lang(lang)
        try:
            les = get(int(number or 1))
        except (LessonError, ValueError, TypeError) as exc:
            return no_update, html.Div(str(exc), className="error"), [], [], []
        head = html.Div(
            [
                html.H2(msg("web.lesson_n", lang, n=les.number, title=les.title[lang])),
                html.Details([html.Summary(msg("web.about", lang)), html.Div(les.summary[lang])]),
            ],
            className="lessonhead",
        )
        steps = []
        for i, step in enumerate(les.steps):
            first = step.text[lang].split("\n", 1)[0]
            steps.append(html.Button(f"{i + 1}. {first[:70]}", id={"type": "lesson-step", "i": i}, className="lstep"))
        questions = []
        if les.questions:
            questions.append(html.H4(msg("web.questions", lang)))
        for q in les.questions:
            questions.append(
                html.Div(
                    [
                        html.Div(q.text[lang]),
                        dcc.RadioItems(id={"type": "q-answer", "q": q.id}, options=list(q.choices), inline=True),
                        html.Button(msg("web.check", lang), id={"type": "q-check", "q": q.id}, className="btn small"),
                        html.Div(id={"type": "q-result", "q": q.id}, className="answer"),
                    ],
                    className="question",
                )
            )
        exercise = html.Details(
            [
                html.Summary(msg("web.exercise", lang)),
                html.Div(les.exercise_text[lang], className="exercise"),
                html.Div(msg("web.start_with", lang, n=les.number), className="hint"),
            ],
        )
        wanted = {"lesson": les.number}
        return (no_update if run == wanted else wanted), head, steps, questions, exercise

    @app.callback(
        Output({"type": "q-result", "q": ALL}, "children"),
        Output({"type": "q-result", "q": ALL}, "className"),
        Input({"type": "q-check", "q": ALL}, "n_clicks"),
        State({"type": "q-answer", "q": ALL}, "value"),
        State({"type": "q-check", "q": ALL}, "id"),
        State("lesson-select", "value"),
        State("lang-page", "data"),
        prevent_initial_call=True,
    )
    def answer(clicks, answers, ids, number, lang):
        lang = _lang(lang)
        trigger = ctx.triggered_id
        if not isinstance(trigger, dict) or not any(clicks):
            raise PreventUpdate
        les = get(int(number))
        texts, classes = [], []
        for ident, yours, n in zip(ids, answers, clicks, strict=True):
            if ident != trigger or not n:
                texts.append(no_update)
                classes.append(no_update)
                continue
            question = next(q for q in les.questions if q.id == ident["q"])
            if yours is None:
                texts.append(msg("web.choose_first", lang))
                classes.append("answer")
                continue
            truth = runs.truth(les, question.id)
            right = yours == truth
            key = "web.right" if right else "web.wrong"
            texts.append([html.Div(msg(key, lang, answer=truth, yours=yours)), html.Div(question.explain[lang])])
            classes.append("answer right" if right else "answer wrong")
        return texts, classes

    # -- playground ---------------------------------------------------------------------------------------------
    @app.callback(
        Output("pg-params", "children"),
        Output("pg-m-row", "style"),
        Output("pg-n-row", "style"),
        Output("pg-k-row", "style"),
        Output("pg-summary", "children"),
        Input("pg-scenario", "value"),
        State("lang-page", "data"),
    )
    def scenario_fields(name, lang):
        if name not in registry():
            raise PreventUpdate
        scenario = registry()[name]
        have = {p.name for p in scenario.params}
        styles = [{} if x in have else {"display": "none"} for x in MNK]
        return param_fields(name, _lang(lang)), *styles, f"{name}: {scenario.summary}"

    @app.callback(
        Output("run", "data", allow_duplicate=True),
        Input("pg-last", "modified_timestamp"),
        State("pg-last", "data"),
        State("run", "data"),
        prevent_initial_call="initial_duplicate",
    )
    def restore(_ts, last, run):
        if run or not last:
            raise PreventUpdate
        return last

    @app.callback(
        Output("pg-error", "children"),
        Output("pg-progress", "children"),
        Output("pg-job", "data"),
        Output("pg-poll", "disabled"),
        Output("run", "data", allow_duplicate=True),
        Output("pg-last", "data", allow_duplicate=True),
        Output("pg-m", "value"),
        Output("pg-n", "value"),
        Output("pg-k", "value"),
        Output({"type": "pg-param", "name": ALL}, "value"),
        Input("pg-run", "n_clicks"),
        Input({"type": "try-rec", "i": ALL}, "n_clicks"),
        State("pg-scenario", "value"),
        State("pg-profile", "value"),
        State("pg-m", "value"),
        State("pg-n", "value"),
        State("pg-k", "value"),
        State({"type": "pg-param", "name": ALL}, "id"),
        State({"type": "pg-param", "name": ALL}, "value"),
        State("pg-numerics", "value"),
        State("run", "data"),
        State("lang-page", "data"),
        prevent_initial_call=True,
    )
    def run_clicked(_clicks, tries, scenario, profile, m, n, k, ids, values, numerics, run, lang):
        lang = _lang(lang)
        unchanged = [no_update] * 3 + [[no_update] * len(ids)]
        trigger = ctx.triggered_id
        if isinstance(trigger, dict):
            if not any(tries) or not run:
                raise PreventUpdate
            rec = _recommendation(runs, run, trigger["i"])
            if rec is None or not rec.get("change"):
                raise PreventUpdate
            request = dict(run)
            request["params"] = {**run.get("params", {}), **rec["change"]}
            form = [request["params"].get(x, no_update) for x in MNK]
            form = [str(v) if v is not no_update else v for v in form]
            named = {p.name: p for p in registry()[request["scenario"]].params}
            params = [_form_value(named.get(i["name"]), request["params"].get(i["name"])) for i in ids]
            unchanged = [*form, params]
        else:
            request = request_of(scenario, profile, m, n, k, ids, values, "on" in (numerics or []))
        try:
            status = runs.start({**request, "lang": lang})
        except RunRequestError as exc:
            return str(exc), "", None, True, no_update, no_update, *unchanged
        deadline = time.monotonic() + WAIT_S
        spec = runs.spec(request)
        while status["state"] == "running" and time.monotonic() < deadline:
            time.sleep(0.05)
            status = {**runs.status(spec), "key": spec.key}
        clean = _clean(request)
        if status["state"] == "done":
            return "", "", None, True, clean, clean, *unchanged
        if status["state"] == "error":
            return (
                msg("web.failed", lang, message=status.get("message", "")),
                "",
                None,
                True,
                no_update,
                no_update,
                *unchanged,
            )
        return "", progress(status, lang), {"request": clean, "key": spec.key}, False, no_update, no_update, *unchanged

    @app.callback(
        Output("pg-progress", "children", allow_duplicate=True),
        Output("pg-error", "children", allow_duplicate=True),
        Output("pg-poll", "disabled", allow_duplicate=True),
        Output("run", "data", allow_duplicate=True),
        Output("pg-last", "data", allow_duplicate=True),
        Input("pg-poll", "n_intervals"),
        State("pg-job", "data"),
        State("lang-page", "data"),
        prevent_initial_call=True,
    )
    def poll(_n, job, lang):
        lang = _lang(lang)
        if not job:
            return no_update, no_update, True, no_update, no_update
        try:
            spec = runs.spec(job["request"])
        except RunRequestError as exc:
            return "", str(exc), True, no_update, no_update
        status = runs.status(spec)
        if status["state"] == "done":  # the player says what it loaded
            return "", "", True, job["request"], job["request"]
        if status["state"] == "error":
            return "", msg("web.failed", lang, message=status.get("message", "")), True, no_update, no_update
        if status["state"] == "none":  # its worker died: start it again
            status = runs.start(job["request"])
        return progress(status, lang), no_update, False, no_update, no_update

    # -- compare --------------------------------------------------------------------------------------------------
    @app.callback(
        Output("cmp-error", "children"),
        Output("cmp-progress", "children"),
        Output("cmp-job", "data"),
        Output("cmp-poll", "disabled"),
        Output("cmp-result", "children"),
        Input("cmp-run", "n_clicks"),
        Input("cmp-poll", "n_intervals"),
        State("cmp-a-scenario", "value"),
        State("cmp-a-options", "value"),
        State("cmp-b-scenario", "value"),
        State("cmp-b-options", "value"),
        State("cmp-numerics", "value"),
        State("cmp-job", "data"),
        State("lang-page", "data"),
        prevent_initial_call=True,
    )
    def compare(_run, _poll, sa, oa, sb, ob, numerics, job, lang):
        lang = _lang(lang)
        if ctx.triggered_id == "cmp-run":
            requests = []
            try:
                for label, scenario, options in (("A", sa, oa), ("B", sb, ob)):
                    if scenario not in registry():
                        raise RunRequestError(
                            f"{label}: scenario must be one of {', '.join(registry())}, got {scenario!r}"
                        )
                    params = parse_options(scenario, options)
                    req = {
                        "scenario": scenario,
                        "profile": params.pop("profile", DEFAULT_PROFILE),
                        "params": params,
                        "numerics": "on" in (numerics or []),
                    }
                    try:
                        validate_request(req)
                    except RunRequestError as exc:
                        raise RunRequestError(f"{label}: {exc}") from None
                    requests.append(req)
                for req in requests:
                    runs.start(req)
            except RunRequestError as exc:
                return str(exc), "", None, True, no_update
            job = {"requests": [_clean(r) for r in requests]}
        if not job:
            raise PreventUpdate
        states = [runs.status(runs.spec(r)) for r in job["requests"]]
        failed = [s for s in states if s["state"] == "error"]
        if failed:
            return msg("web.failed", lang, message=failed[0].get("message", "")), "", None, True, no_update
        pending = [s for s in states if s["state"] != "done"]
        if pending:
            for r, s in zip(job["requests"], states, strict=True):
                if s["state"] == "none":
                    runs.start(r)
            return "", progress(pending[0] if pending[0]["state"] == "running" else {}, lang), job, False, no_update
        return "", "", None, True, comparison(runs, job["requests"], lang)

    # -- export ------------------------------------------------------------------------------------------------------
    @app.callback(Output("ex-run", "children"), Input("last-run", "data"), Input("lang-page", "data"))
    def export_label(run, lang):
        lang = _lang(lang)
        if not run:
            return msg("web.export_none", lang)
        return msg("web.export_run", lang, name=describe(run))

    @app.callback(
        Output("ex-download", "data"),
        Output("ex-error", "children"),
        Input("ex-chrome", "n_clicks"),
        Input("ex-summary", "n_clicks"),
        Input("ex-csv", "n_clicks"),
        State("last-run", "data"),
        State("lang-page", "data"),
        prevent_initial_call=True,
    )
    def export(_c, _s, _v, run, lang):
        if not run:
            return no_update, msg("web.export_none", _lang(lang))
        try:
            loaded = runs.load(run)
        except RunRequestError as exc:
            return no_update, str(exc)
        name = describe(run).replace(" ", "_").replace("=", "").replace(",", "")[:80]
        which = ctx.triggered_id
        if which == "ex-chrome":
            from engine.analysis.export import chrome_document

            doc = chrome_document(loaded.replay.result, metadata={"run": describe(run)})
            return dcc.send_string(json.dumps(doc), f"{name}.trace.json"), ""
        report = loaded.replay.report()
        if which == "ex-summary":
            doc = {"run": run, "events": loaded.events, "simulated_us": loaded.outline["end_us"], **report.to_dict()}
            return dcc.send_string(json.dumps(doc, indent=1, default=str), f"{name}.summary.json"), ""
        from engine.analysis.export import write_pipe_csv

        with tempfile.TemporaryDirectory() as tmp:
            path = write_pipe_csv(Path(tmp) / "pipes.csv", report.metrics)
            text = path.read_text()
        return dcc.send_string(text, f"{name}.pipes.csv"), ""


def _form_value(param, value):
    """A parameter's value as its form field holds it (a dropdown its choice, a checklist a list, text a string)."""
    if param is None or value is None:
        return no_update
    if param.type is bool:
        return ["on"] if value else []
    if param.choices:
        return value
    return str(value)


def _clean(request: dict) -> dict:
    """A request as the browser keeps it (plain JSON values)."""
    return json.loads(json.dumps(request, default=str))


def _recommendation(runs: Runs, run: dict, i: int) -> dict | None:
    from app.present import views

    try:
        loaded = runs.load(run)
    except RunRequestError:
        return None
    recs = views.metrics_view(loaded.replay, "en")["recommendations"]
    return recs[i] if 0 <= i < len(recs) else None


def describe(run: dict) -> str:
    if "lesson" in run:
        return f"lesson {run['lesson']}"
    params = ", ".join(f"{k}={v}" for k, v in (run.get("params") or {}).items() if v is not None)
    numerics = "" if run.get("numerics", True) else " (timing only)"
    return f"{run.get('scenario')} on {run.get('profile')}: {params}{numerics}"


_SHARES = ("percent_of_peak", "cube_utilization", "mte2_compute_overlap", "copy_compute_overlap")
_SHARES += ("parallelism_utilization",)


def _pct(key: str, value):
    """A share as a percentage (percent_of_peak already is one)."""
    if not isinstance(value, (int, float)):
        return None
    return value if key == "percent_of_peak" else round(100 * value, 2)


_WHY = {"buffer_num", "cores", "base", "streams", "pageable", "sync_each", "tile_length", "profile"}


def comparison(runs: Runs, requests: list[dict], lang: str) -> html.Div:
    """Metrics side by side, what changed between the two requests and why it matters, both timelines."""
    from engine.analysis.compare import compare as diff_reports

    loaded = [runs.load(r) for r in requests]
    reports = [x.replay.report() for x in loaded]
    diff = diff_reports(*reports)
    names = (msg("web.compare_a", lang), msg("web.compare_b", lang))
    rows = [
        html.Tr(
            [html.Th(msg("web.metric", lang)), html.Th(names[0]), html.Th(names[1]), html.Th(msg("web.change", lang))]
        )
    ]
    for key, row in diff["metrics"].items():
        ratio = row.get("ratio")
        change = f"{ratio:.3g}x" if ratio else ""
        rows.append(html.Tr([html.Td(key), html.Td(_fmt(row["a"])), html.Td(_fmt(row["b"])), html.Td(change)]))
    changed = []
    a, b = requests
    pa, pb = dict(a.get("params", {})), dict(b.get("params", {}))
    if a["scenario"] != b["scenario"]:
        changed.append(("scenario", a["scenario"], b["scenario"]))
    if a.get("profile") != b.get("profile"):
        changed.append(("profile", a.get("profile"), b.get("profile")))
    for key in sorted(set(pa) | set(pb)):
        if str(pa.get(key)) != str(pb.get(key)):
            changed.append((key, pa.get(key), pb.get(key)))
    what = [html.Li(msg("web.param_changed", lang, name=k, a=x, b=y)) for k, x, y in changed] or [
        html.Li(msg("web.same_params", lang))
    ]
    why = []
    for key, _x, _y in changed:
        if key in ("m", "n", "k", "length", "batches"):
            why.append(msg("why.shape", lang))
        elif key in _WHY:
            why.append(msg(f"why.{key}", lang))
        else:
            why.append(msg("why.other", lang, name=key))
    for label, items in (("A", diff["findings"]["only_a"]), ("B", diff["findings"]["only_b"])):
        if items:
            why.append(msg("web.only_in", lang, run=label, items="; ".join(f"{k}: {m}" for k, m in items)))
    for label, items in (("A", diff["recommendations"]["only_a"]), ("B", diff["recommendations"]["only_b"])):
        if items:
            why.append(msg("web.only_in", lang, run=label, items=", ".join(items)))
    bars = [(k, _pct(k, r["a"]), _pct(k, r["b"])) for k, r in diff["metrics"].items() if k in _SHARES]
    bars = [b for b in bars if b[1] is not None and b[2] is not None]
    spans = [render.kernel_span(x) for x in loaded]
    width = max((b - a for a, b in spans if b > a), default=0.0)
    timelines = []
    for label, x, request, (k0, _k1) in zip(names, loaded, requests, spans, strict=True):
        span = (max(0.0, k0 - 0.05 * width), k0 + 1.05 * width) if width else None
        view = render.timeline(x, 0, lang, span, [])
        view["layout"]["shapes"] = []
        timelines.append(
            html.Div(
                [html.H4(f"{label}: {describe(request)}"), dcc.Graph(figure=view, config=layout.GRAPH_CONFIG)],
                className="view",
            )
        )
    return html.Div(
        [
            html.Div(
                [
                    html.Div([html.Table(rows, className="cmp")], className="view"),
                    html.Div(
                        [
                            html.H4(msg("web.what_changed", lang)),
                            html.Ul(what),
                            html.H4(msg("web.why", lang)),
                            html.Ul([html.Li(w) for w in why]),
                        ]
                        + (
                            [dcc.Graph(figure=figures.compare_bars_figure(bars, names), config=layout.GRAPH_CONFIG)]
                            if bars
                            else []
                        ),
                        className="view",
                    ),
                ],
                className="pair",
            ),
            html.Div(timelines, className="pair"),
        ],
        id="cmp-body",
    )


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:,.4g}"
    if isinstance(v, int):
        return f"{v:,}"
    return "-" if v is None else str(v)


__all__ = ("comparison", "describe", "param_fields", "parse_options", "register", "request_of")
