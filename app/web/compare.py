"""The compare page: two runs given as the CLI's options, simulated (with progress), and set side by side:
their metrics, what changed between them and why it matters, and both timelines over their kernels.

The server's callbacks are the methods of :class:`Callbacks` (a test calls them as functions, with what a
page would send); :func:`register` wires them to the page's ids.
"""

from __future__ import annotations

import shlex

from dash import Input, Output, State, dcc, html, no_update
from dash.exceptions import PreventUpdate

from app.present.messages import finding_kind, known_lang, metric_name
from app.present.messages import t as msg
from app.server.jobs import Busy
from engine.profiles.profile import DEFAULT_PROFILE
from engine.scenarios import registry

from . import figures, layout, render
from .errors import job_failed, shown
from .pages import describe
from .panels import fmt_value
from .playground import JOB_POLL_MS, phase_line, plain, session_id, ticked
from .runs import RunRequestError, Runs, validate_request


def parse_options(scenario: str, text: str) -> dict:
    """``--m 1024 --buffer-num 1 --pageable`` (the CLI's syntax) as parameter values; RunRequestError if malformed."""
    params = {p.flag: p for p in registry()[scenario].params}
    try:
        words = shlex.split(text or "")
    except ValueError:
        raise RunRequestError(
            f"options: a quote is not closed in {shown(text)}", f"选项：{shown(text)} 中有未闭合的引号"
        ) from None
    out, i = {}, 0
    while i < len(words):
        word = words[i]
        p = params.get(word)
        if p is None:
            flags = ", ".join(params)
            raise RunRequestError(
                f"options: {shown(word)} is not an option of {scenario} ({flags})",
                f"选项：{shown(word)} 不是 {scenario} 的选项（{flags}）",
            )
        if p.type is bool:
            out[p.name] = True
            i += 1
            continue
        if i + 1 >= len(words):
            raise RunRequestError(f"options: {word} needs a value", f"选项：{word} 后面需要一个值")
        out[p.name] = words[i + 1]
        i += 2
    return out


class Callbacks:
    """The compare page's server-side callbacks over the runs of ``runs``: each method takes what its inputs and
    states send, in order (a job's ``set_progress`` first)."""

    def __init__(self, runs: Runs) -> None:
        self.runs = runs

    # -- compare --------------------------------------------------------------------------------------------------
    def compare(self, set_progress, _run, sa, oa, sb, ob, numerics, lang, session):
        """A job: both requests validated (a bad one answered inline), both runs made stored, then compared."""
        lang = known_lang(lang)
        try:
            requests = [
                _request(label, scenario, options, numerics)
                for label, scenario, options in (("A", sa, oa), ("B", sb, ob))
            ]
            for label, req in zip("AB", requests, strict=True):
                try:
                    self.runs.compute(
                        req,
                        session_id(session),
                        lambda phase, v, label=label: set_progress(
                            [[f"{label}: ", *_items(phase_line(phase, v, lang))]]
                        ),
                    )
                except RunRequestError as exc:
                    raise _sided(label, exc) from None
        except RunRequestError as exc:
            return exc.text(lang), no_update, no_update
        except Busy as exc:
            return msg(exc.key, lang, **exc.values), no_update, no_update
        shown = [plain(r) for r in requests]
        return "", comparison(self.runs, shown, lang), shown

    def redraw(self, lang, shown):
        """The comparison on screen, in the language just chosen (both runs are stored: no simulation)."""
        if not isinstance(shown, list) or len(shown) != 2 or not all(isinstance(r, dict) for r in shown):
            raise PreventUpdate
        try:
            return comparison(self.runs, shown, known_lang(lang))
        except (RunRequestError, KeyError, ValueError, TypeError):
            raise PreventUpdate from None


def register(app, runs: Runs) -> None:
    """The compare page's callbacks on ``app``: :class:`Callbacks` over ``runs``."""
    cb = Callbacks(runs)
    app.callback(
        Output("cmp-error", "children"),
        Output("cmp-result", "children"),
        Output("cmp-shown", "data"),
        Input("cmp-run", "n_clicks"),
        State("cmp-a-scenario", "value"),
        State("cmp-a-options", "value"),
        State("cmp-b-scenario", "value"),
        State("cmp-b-options", "value"),
        State("cmp-numerics", "value"),
        State("lang-page", "data"),
        State("session", "data"),
        background=True,
        progress=[Output("cmp-progress", "children")],
        progress_default=[""],
        running=[(Output("cmp-run", "disabled"), True, False)],
        interval=JOB_POLL_MS,
        on_error=job_failed(3, 0),  # cmp-error
        prevent_initial_call=True,
    )(cb.compare)
    app.callback(
        Output("cmp-result", "children", allow_duplicate=True),
        Input("lang-page", "data"),
        State("cmp-shown", "data"),
        prevent_initial_call=True,
    )(cb.redraw)


def _items(line) -> list:
    """A progress line as children to put after a label: never a list inside the list (React renders a
    nested list's components as raw objects: error #31 whenever a job's progress had a bar)."""
    return line if isinstance(line, list) else [line]


def _request(label: str, scenario, options, numerics) -> dict:
    """One side's request, validated (RunRequestError naming the side and the field)."""
    if not isinstance(scenario, str) or scenario not in registry():
        choices = ", ".join(registry())
        raise RunRequestError(
            f"{label}: scenario must be one of {choices}, got {shown(scenario)}",
            f"{label}：场景必须是 {choices} 之一，收到 {shown(scenario)}",
        )
    if not isinstance(options, str | type(None)):
        raise RunRequestError(
            f"{label}: options must be text, got {shown(options)}", f"{label}：选项必须是文本，收到 {shown(options)}"
        )
    try:
        params = parse_options(scenario, options)
    except RunRequestError as exc:
        raise _sided(label, exc) from None
    req = {
        "scenario": scenario,
        "profile": params.pop("profile", DEFAULT_PROFILE),
        "params": params,
        "numerics": ticked(numerics),
    }
    try:
        validate_request(req)
    except RunRequestError as exc:
        raise _sided(label, exc) from None
    return req


def _sided(label: str, exc: RunRequestError) -> RunRequestError:
    """``exc`` said of run ``label`` (A or B), in both languages."""
    return RunRequestError(f"{label}: {exc}", f"{label}：{exc.zh}")


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
    for key, figure in diff.metrics.items():
        change = f"{figure.ratio:.3g}x" if figure.ratio else ""
        rows.append(
            html.Tr(
                [
                    html.Td(metric_name(key, lang, with_id=False), title=key, className="metric-id"),
                    html.Td(fmt_value(figure.a)),
                    html.Td(fmt_value(figure.b)),
                    html.Td(change),
                ]
            )
        )
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
    texts = {(f.kind, f.message): f.text(lang) for report in reports for f in report.findings}
    for label, items in (("A", diff.findings.only_a), ("B", diff.findings.only_b)):
        if items:
            said = "; ".join(f"{finding_kind(k, lang)}: {texts.get((k, m), m)}" for k, m in items)
            why.append(msg("web.only_in", lang, run=label, items=said))
    titles = {r.rule: (r.title_zh if lang == "zh" else r.title) for report in reports for r in report.recommendations}
    for label, items in (("A", diff.recommendations.only_a), ("B", diff.recommendations.only_b)):
        if items:
            why.append(msg("web.only_in", lang, run=label, items=", ".join(titles.get(x, x) for x in items)))
    bars = [
        (metric_name(k, lang, with_id=False), _pct(k, f.a), _pct(k, f.b))
        for k, f in diff.metrics.items()
        if k in _SHARES
    ]
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
                [html.H4(f"{label}: {describe(request, lang)}"), dcc.Graph(figure=view, config=layout.GRAPH_CONFIG)],
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


__all__ = ("Callbacks", "comparison", "parse_options", "register")
