"""The playground's callbacks: the form of the chosen scenario, runs started in the background with their
progress, and a recommendation's "try it" that re-runs with its change.

The form's values are sent as they are; :func:`app.web.runs.validate_request` checks them (the scenario's
own parameter checks and the server's budget) and a bad one is answered in ``pg-error``, naming the
field, the limit and the value. The server's callbacks are the methods of :class:`Callbacks` (a test calls
them as functions, with what a page would send); :func:`register` wires them to the page's ids.
"""

from __future__ import annotations

import json
import uuid

from dash import ALL, Input, Output, State, dcc, html, no_update
from dash.exceptions import PreventUpdate

from app.present.messages import known_lang, param_help, scenario_summary
from app.present.messages import t as msg
from app.server.jobs import Busy
from engine.profiles.profile import DEFAULT_PROFILE, load_profile
from engine.scenarios import registry

from . import panels
from .errors import job_failed
from .render import note_text
from .runs import RunRequestError, Runs
from .trigger import FROM_DASH, triggered

MNK = ("m", "n", "k")
JOB_POLL_MS = 100  # how often a page asks how far its job is, at least (one request in flight: Dash waits for each
# answer; player.js spaces a long job's polls out further)


def auto_text(param, lang: str, profile: str = DEFAULT_PROFILE) -> str:
    """What an empty field means, in words (``auto: 24 cores``), from the parameter's ``auto`` and the profile."""
    if not param.auto:
        return msg("web.auto", lang)
    chip = load_profile(profile).chip
    return msg(f"web.auto.{param.auto}", lang, aic=chip.aic_cores, aiv=chip.aiv_cores)


def param_fields(scenario_name: str, lang: str, kept: dict | None = None) -> list:
    """Inputs for the scenario's parameters other than m, n and k (ids ``{"type": "pg-param", "name": ...}``),
    each holding its default or, when ``kept`` has its name, what the form held (a language switch)."""
    scenario = registry()[scenario_name]
    kept = kept or {}
    out = []
    for p in scenario.params:
        if p.name in MNK:
            continue
        ident = {"type": "pg-param", "name": p.name}
        held = kept.get(p.name)
        if p.type is bool:
            value = held if isinstance(held, list) else (["on"] if p.default else [])
            field = dcc.Checklist(id=ident, options=[{"label": p.name, "value": "on"}], value=value)
            out.append(html.Div(field, className="param", title=param_help(p, lang)))
            continue
        if p.choices:
            value = held if held in p.choices else p.default
            field = dcc.Dropdown(id=ident, options=list(p.choices), value=value, clearable=False, className="dd")
        else:
            typed = held if isinstance(held, str) else None
            field = dcc.Input(
                id=ident,
                type="text",
                value=typed if typed is not None else ("" if p.default is None else str(p.default)),
                placeholder=auto_text(p, lang) if p.default is None else None,
            )
        out.append(html.Label([p.name, field], className="param", title=param_help(p, lang)))
    return out


def request_of(scenario: str, profile: str, m, n, k, ids: list, values: list, numerics) -> dict:
    """The playground's inputs as a run request (validated later by :func:`runs.validate_request`)."""
    known = isinstance(scenario, str) and scenario in registry()  # a name the page sent (a list is not one)
    names = {p.name: p for p in registry()[scenario].params} if known else {}
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


class Callbacks:
    """The playground's server-side callbacks over the runs of ``runs``: each method takes what its inputs and
    states send, in order (and ``trigger``, the id of the input that fired, where that matters)."""

    def __init__(self, runs: Runs) -> None:
        self.runs = runs

    # -- playground ---------------------------------------------------------------------------------------------
    def scenario_fields(self, name, lang, values=None, ids=None, *, trigger=FROM_DASH):
        """The fields of the chosen scenario in the page's language. Choosing a scenario starts from its
        defaults; a language switch rebuilds them with what the form held (their help and the words of an
        empty field then follow the language)."""
        if not isinstance(name, str) or name not in registry():
            raise PreventUpdate
        kept = {}
        if triggered(trigger) == "lang-page" and isinstance(ids, list) and isinstance(values, list):
            pairs = zip(ids, values, strict=False)  # what the page sent: anything that is not a field's id is dropped
            kept = {i["name"]: v for i, v in pairs if isinstance(i, dict) and isinstance(i.get("name"), str)}
        have = {p.name for p in registry()[name].params}
        styles = [{} if x in have else {"display": "none"} for x in MNK]
        return param_fields(name, known_lang(lang), kept), *styles

    def scenario_line(self, name, lang):
        if not isinstance(name, str) or name not in registry():
            raise PreventUpdate
        return f"{name}: {scenario_summary(registry()[name], known_lang(lang))}"

    def restore(self, _ts, last, run):
        if run or not last:
            raise PreventUpdate
        return last

    def run_clicked(
        self,
        set_progress,
        _clicks,
        tries,
        scenario,
        profile,
        m,
        n,
        k,
        ids,
        values,
        numerics,
        run,
        lang,
        session,
        *,
        trigger=FROM_DASH,
    ):
        """A job: the request validated (a bad field answered inline), then the run made stored (queued, shared
        with an identical request, simulated), its progress shown as it goes; the player then loads it."""
        lang = known_lang(lang)
        ids = ids if isinstance(ids, list) else []
        unchanged = [no_update] * 3 + [[no_update] * len(ids)]
        trigger = triggered(trigger)
        set_progress([msg("web.phase.starting", lang)])
        try:
            request, unchanged = _request(
                self.runs, trigger, tries, scenario, profile, (m, n, k), ids, values, numerics, run, unchanged
            )
            if request is None:
                return no_update, no_update, no_update, no_update, *unchanged
            note = self.runs.compute(
                request, session_id(session), lambda phase, v: set_progress([phase_line(phase, v, lang)]), lang
            )
        except RunRequestError as exc:
            return no_update, no_update, exc.text(lang), "", *unchanged
        except Busy as exc:
            return no_update, no_update, msg(exc.key, lang, **exc.values), "", *unchanged
        clean = plain(request)
        return clean, clean, "", note_text(note, lang), *unchanged


def register(app, runs: Runs) -> None:
    """The playground's callbacks on ``app``: :class:`Callbacks` over ``runs``."""
    cb = Callbacks(runs)
    app.callback(
        Output("pg-params", "children"),
        Output("pg-m-row", "style"),
        Output("pg-n-row", "style"),
        Output("pg-k-row", "style"),
        Input("pg-scenario", "value"),
        Input("lang-page", "data"),
        State({"type": "pg-param", "name": ALL}, "value"),
        State({"type": "pg-param", "name": ALL}, "id"),
    )(cb.scenario_fields)
    app.callback(
        Output("pg-summary", "children"),
        Input("pg-scenario", "value"),
        Input("lang-page", "data"),
    )(cb.scenario_line)
    app.callback(
        Output("run", "data", allow_duplicate=True),
        Input("pg-last", "modified_timestamp"),
        State("pg-last", "data"),
        State("run", "data"),
        prevent_initial_call="initial_duplicate",
    )(cb.restore)
    app.callback(
        Output("run", "data", allow_duplicate=True),
        Output("pg-last", "data", allow_duplicate=True),
        Output("pg-error", "children"),
        Output("pg-note", "children"),
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
        State("session", "data"),
        background=True,
        progress=[Output("pg-progress", "children")],
        progress_default=[""],
        running=[
            (Output("pg-run", "disabled"), True, False),
            (Output("pg-cancel", "style"), {}, {"display": "none"}),
        ],
        cancel=[Input("pg-cancel", "n_clicks")],
        interval=JOB_POLL_MS,
        on_error=job_failed(8, 2),  # pg-error
        prevent_initial_call=True,
    )(cb.run_clicked)


def _request(runs: Runs, trigger, tries, scenario, profile, mnk, ids, values, numerics, run, unchanged):
    """The run request a click makes, and the form values it writes back (a recommendation's change)."""
    if isinstance(trigger, dict):
        if not any(t for t in (tries or []) if t) or not isinstance(run, dict):
            return None, unchanged
        rec = _recommendation(runs, run, trigger.get("i"))
        if rec is None or not rec.get("change"):
            return None, unchanged
        request = dict(run)
        request["params"] = {**run.get("params", {}), **rec["change"]}
        form = [request["params"].get(x, no_update) for x in MNK]
        form = [str(v) if v is not no_update else v for v in form]
        named = {p.name: p for p in registry()[request["scenario"]].params}
        params = [_form_value(named.get(i.get("name")), request["params"].get(i.get("name"))) for i in ids]
        return request, [*form, params]
    if not isinstance(values, list) or len(values) != len(ids):
        raise RunRequestError("params: the form's fields and values do not match", "参数：表单的字段与取值对不上")
    return request_of(scenario, profile, *mnk, ids, values, ticked(numerics)), unchanged


def ticked(checklist) -> bool:
    """Whether a one-box checklist a page sent (``["on"]`` or ``[]``) is ticked; anything else is not."""
    return isinstance(checklist, list) and "on" in checklist


def session_id(session) -> str:
    """The tab's id as the page keeps it; a request without one (its page has not made it yet) is a session of
    its own."""
    if isinstance(session, str) and 8 <= len(session) <= 64 and session.isalnum():
        return session
    return f"anonymous{uuid.uuid4().hex}"


def phase_line(phase: str, values: dict, lang: str):
    """A job's progress: what it is doing, with a bar when it knows how far it is."""
    line = msg(f"web.phase.{phase}", lang, **values)
    total, done = values.get("total"), values.get("events")
    if total and done is not None:
        return [html.Div(line), panels.bar(min(0.99, done / total))]
    return line


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


__all__ = (
    "Callbacks",
    "auto_text",
    "param_fields",
    "phase_line",
    "plain",
    "register",
    "request_of",
    "session_id",
    "ticked",
)
