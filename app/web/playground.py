"""The playground's callbacks: the form of the chosen scenario, runs started in the background with their
progress, and a recommendation's "try it" that re-runs with its change.

The form's values are sent as they are; :func:`app.web.runs.validate_request` checks them (the scenario's
own parameter checks and the server's budget) and a bad one is answered in ``pg-error``, naming the
field, the limit and the value.
"""

from __future__ import annotations

import json
import time

from dash import ALL, Input, Output, State, ctx, dcc, html, no_update
from dash.exceptions import PreventUpdate

from app.present.messages import known_lang, param_help, scenario_summary
from app.present.messages import t as msg
from engine.scenarios import registry

from . import panels
from .runs import RunRequestError, Runs

MNK = ("m", "n", "k")
WAIT_S = 2.0  # a run that finishes this quickly is shown without polling


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
            out.append(html.Div(field, className="param", title=param_help(scenario, p, lang)))
            continue
        if p.choices:
            field = dcc.Dropdown(id=ident, options=list(p.choices), value=p.default, clearable=False, className="dd")
        else:
            field = dcc.Input(id=ident, type="text", value="" if p.default is None else str(p.default))
        out.append(html.Label([p.name, field], className="param", title=param_help(scenario, p, lang)))
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


def register(app, runs: Runs) -> None:
    # -- playground ---------------------------------------------------------------------------------------------
    @app.callback(
        Output("pg-params", "children"),
        Output("pg-m-row", "style"),
        Output("pg-n-row", "style"),
        Output("pg-k-row", "style"),
        Input("pg-scenario", "value"),
        State("lang-page", "data"),
    )
    def scenario_fields(name, lang):
        """The fields of the chosen scenario (rebuilt only when the scenario changes: a language switch
        keeps what the user typed; their help follows the language they were built in)."""
        if name not in registry():
            raise PreventUpdate
        have = {p.name for p in registry()[name].params}
        styles = [{} if x in have else {"display": "none"} for x in MNK]
        return param_fields(name, known_lang(lang)), *styles

    @app.callback(Output("pg-summary", "children"), Input("pg-scenario", "value"), Input("lang-page", "data"))
    def scenario_line(name, lang):
        if name not in registry():
            raise PreventUpdate
        return f"{name}: {scenario_summary(registry()[name], known_lang(lang))}"

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
        lang = known_lang(lang)
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
        clean = plain(request)
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
        lang = known_lang(lang)
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


def _form_value(param, value):
    """A parameter's value as its form field holds it (a dropdown its choice, a checklist a list, text a string)."""
    if param is None or value is None:
        return no_update
    if param.type is bool:
        return ["on"] if value else []
    if param.choices:
        return value
    return str(value)


def plain(request: dict) -> dict:
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


__all__ = ("param_fields", "plain", "progress", "register", "request_of")
