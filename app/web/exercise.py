"""A lesson's Exercise panel: the editor, Run & check (a job: the grader's sandbox and trusted replay), the
verdict with each criterion, the error's line marked in the editor, and the trainee's own run in the views.

The page decides, the browser draws: the verdict arrives as plain data (``ex-result``: the grade in both
languages), rendered here for the page's language, so a language switch re-renders it without running
again. Element ids are the README's automation contract: ``ex-editor``, ``ex-run``, ``ex-reset``,
``ex-download``, ``ex-cancel``, ``ex-status`` (``queued``, ``running``, ``judging``, ``done`` or ``cancelled``),
``ex-verdict`` (``PASS`` or ``FAIL`` and the score), ``ex-criteria`` (one element per criterion) and, while
a line is marked, ``ex-error-line`` with its number in ``data-line``.
"""

from __future__ import annotations

import json
import time

from dash import ALL, Input, Output, State, dcc, html, no_update
from dash.exceptions import PreventUpdate

from app.present.messages import known_lang, metric_name
from app.present.messages import t as msg
from app.server.jobs import Busy
from lessons.catalog import Lesson, get
from lessons.grader import VERDICTS, GradeResult

from . import layout
from .editor import editor, editor_buttons
from .panels import fmt_value
from .playground import JOB_POLL_MS, session_id
from .runs import RunRequestError, Runs

_TEXT = {
    "run": ("Run & check", "运行并检查"),
    "cancel": ("Cancel", "取消"),
    "queued": ("queued: {ahead} ahead", "queued 排队中：前面还有 {ahead} 个"),
    "running": (
        "running your code in the sandbox: {s} s of at most {limit} s",
        "running 正在沙箱中运行你的代码：已 {s} 秒，最多 {limit} 秒",
    ),
    "judging": ("judging: replaying what your code recorded", "judging 评判中：重放你的代码记录的调用"),
    "replayed": (
        "judging: {done} of {total} host calls replayed, {events} events so far",
        "judging 评判中：已重放 {done}/{total} 个主机调用，已有 {events} 个事件",
    ),
    "done": ("done in {s} s", "done 完成，用时 {s} 秒"),
    "failed": ("done: not checked", "done 完成：未能检查"),
    "cancelled": (
        "cancelled: your code was stopped, nothing was checked",
        "cancelled 已取消：你的代码已停止，未作检查",
    ),
    "score": ("score {score}/100", "得分 {score}/100"),
    "yours": ("yours", "你的结果"),
    "expected": ("expected", "期望"),
    "hint": ("hint", "提示"),
    "not_run": ("not run: your code did not get that far", "未运行：你的代码没有执行到这里"),
    "printed": ("your program printed", "你的程序输出"),
    "predictions": ("Your predictions (they do not change the verdict)", "你的预测（不影响结论）"),
    "unanswered": (
        "not answered: write your prediction in PREDICTIONS, then check to see what the simulator says",
        "未作答：先在 PREDICTIONS 中写下预测，再检查，即可看到模拟器的结果",
    ),
    "simulator": ("the simulator", "模拟器"),
    "costs": ("Cost of your run", "本次运行的开销"),
    "bytes": ("bytes moved", "数据搬运量"),
    "pipes": ("busy time per pipe (summed over cores)", "各流水线忙碌时间（各核之和）"),
    "mine": ("Show my run in the views", "在视图中查看我的运行"),
    "reference": ("Show the lesson's run", "查看课程的运行"),
    "views": ("Views", "视图"),
    "exercise": ("Exercise", "练习"),
    "no_run": (
        "Your code did not get as far as a run: the views keep the lesson's run.",
        "你的代码没有执行到产生运行记录：视图仍显示课程的运行。",
    ),
    "your_run": (
        "The views show your run: {events} events, {us} µs simulated (the reference solution's: {ref_events}).",
        "视图显示的是你的运行：{events} 个事件，模拟 {us} µs（参考答案的运行：{ref_events} 个事件）。",
    ),
    "diff": ("Compare with the reference", "与参考运行对比"),
    "diff.overlap": (
        "Your run lost overlap: {metric} is {mine:.0%} (the reference: {ref:.0%}). Go to the longest wait.",
        "你的运行失去了重叠：{metric} 为 {mine:.0%}（参考：{ref:.0%}）。跳到最长的等待。",
    ),
    "diff.less_work": (
        "Your run does less than the reference: {mine:,} B moved and {mine_flops:,} flops computed, against "
        "{ref:,} B and {ref_flops:,} flops. Go to your kernel.",
        "你的运行做的工作比参考少：搬运 {mine:,} B、计算 {mine_flops:,} flops，参考为 {ref:,} B、{ref_flops:,} flops。"
        "跳到你的核函数。",
    ),
    "diff.bytes": (
        "Your run moved extra bytes: {mine:,} B against the reference's {ref:,} B. Go to the first extra copy.",
        "你的运行多搬运了数据：{mine:,} B，参考为 {ref:,} B。跳到第一次多出的搬运。",
    ),
    "diff.flag_wait": (
        "Your pipes waited longer on flags: {mine:,.3f} µs in all against {ref:,.3f} µs. Go to the longest wait.",
        "你的流水线等待标志的时间更长：共 {mine:,.3f} µs，参考为 {ref:,.3f} µs。跳到最长的等待。",
    ),
    "diff.idle_cores": (
        "Your run left cores idle: {mine} cores ran blocks, the reference used {ref}. Go to the first block.",
        "你的运行让部分核空闲：{mine} 个核运行了块，参考用了 {ref} 个。跳到第一个块。",
    ),
    "diff.faster": (
        "Your run ends earlier than the reference ({mine:,.3f} µs against {ref:,.3f} µs).",
        "你的运行比参考更早结束（{mine:,.3f} µs，参考为 {ref:,.3f} µs）。",
    ),
    "diff.same": (
        "Your run does what the reference does: no lost overlap, extra bytes, flag waits or idle cores.",
        "你的运行与参考一致：没有失去重叠、多余搬运、标志等待或空闲核。",
    ),
    "lane": ("lane", "通道"),
    "aligned": (
        "Both timelines, lane by lane: each lane of your run above the same lane of the reference's",
        "两条时间线逐通道对齐：你的运行的每个通道在参考运行的同一通道之上",
    ),
    "metric": ("metric", "指标"),
    "mine_col": ("yours", "你的"),
    "ref_col": ("reference", "参考"),
    "busy": ("busy µs", "忙碌 µs"),
    "events": ("events", "事件"),
    "off": (
        "Code runs are off on this server: {why}.",
        "此服务器未开启代码运行：{why}。",
    ),
    "unsandboxed": (
        "Warning: this server runs exercise code WITHOUT a sandbox (--allow-unsandboxed-code). Use it only on "
        "your own machine.",
        "警告：此服务器在没有沙箱的情况下运行练习代码（--allow-unsandboxed-code）。只能在你自己的电脑上使用。",
    ),
}


def text(key: str, lang: str, **values) -> str:
    entry = _TEXT[key][0 if lang == "en" else 1]
    return entry.format(**values) if values else entry


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
            html.Div(lesson.exercise_text[lang], className="exercise"),
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
            dcc.Store(id="ex-submit"),
            dcc.Store(id="ex-line"),
            dcc.Store(id="ex-number", data=lesson.number),
        ],
        id="ex-panel",
        className="expanel",
    )


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
        "run": run,
    }
    if run is not None:  # the comparison with the reference solution's run is made here, in the job
        from app.present.trace_diff import aligned_timelines, trace_diff

        from . import figures, render

        reference = runs.reference(get(result.lesson)) or {"lesson": result.lesson}
        mine, ref = runs.load(run), runs.load(reference)
        doc["events"], doc["us"], doc["ref_events"] = mine.events, mine.outline["end_us"], ref.events
        doc["diff"] = json.loads(json.dumps(trace_diff(mine.replay, ref.replay).to_dict(), default=float))
        doc["aligned"] = {  # the two timelines lane by lane, in each language (the page switches without a job)
            lang: figures.aligned_figure(
                aligned_timelines(mine.replay, ref.replay, (text("mine_col", lang), text("ref_col", lang)), lang),
                render.labels(lang),
            )
            for lang in ("en", "zh")
        }
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


MAX_DIFF_LANES = 24


def diff_view(doc: dict, lang: str) -> html.Section:
    """``view-diff``: the trainee's run against the reference solution's, in words (each statement a link to
    its step), metric by metric and lane by lane (computed in the job: :func:`grade_doc`)."""
    from app.present.trace_diff import TraceDiff

    diff = TraceDiff.from_dict(doc["diff"])
    said = []
    for i, st in enumerate(diff.statements):
        words = text(f"diff.{st.key}", lang, **st.values)
        if st.step is None:
            said.append(html.Li(words))
        else:
            said.append(
                html.Li(
                    html.Button(
                        words,
                        id={"type": "diff-step", "i": i, "step": st.step},
                        className="link",
                        **{"data-step": str(st.step)},
                    )
                )
            )
    head = [html.Th(text(k, lang)) for k in ("metric", "mine_col", "ref_col")]
    metrics = [html.Tr(head)] + [
        html.Tr([html.Td(metric_name(name, lang)), html.Td(fmt_value(row.b)), html.Td(fmt_value(row.a))])
        for name, row in diff.metrics.items()
    ]
    lanes = sorted(diff.lanes, key=lambda x: -max(x.mine_us, x.ref_us))[:MAX_DIFF_LANES]
    cols = [text("lane", lang), f"{text('busy', lang)} ({text('mine_col', lang)})", text("ref_col", lang)]
    cols += [f"{text('events', lang)} ({text('mine_col', lang)})", text("ref_col", lang)]
    lane_rows = [html.Tr([html.Th(c) for c in cols])] + [
        html.Tr(
            [html.Td(x.labels.get(lang, x.name))]
            + [html.Td(f"{v:,.3f}") for v in (x.mine_us, x.ref_us)]
            + [html.Td(f"{v:,}") for v in (x.mine_events, x.ref_events)],
            className="" if (x.mine_events and x.ref_events) else "only",
        )
        for x in lanes
    ]
    return html.Section(
        [
            html.H4(text("diff", lang)),
            html.Ul(said, id="diff-says"),
            html.Div(
                [html.Table(metrics, className="cmp"), html.Table(lane_rows, className="cmp", id="diff-lanes")],
                className="pair",
            ),
        ]
        + (
            [
                html.H5(text("aligned", lang)),
                dcc.Graph(id="diff-timeline", figure=doc["aligned"][lang], config=layout.GRAPH_CONFIG),
            ]
            if doc.get("aligned")
            else []
        ),
        id="view-diff",
        className="view",
    )


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


def register(app, runs: Runs) -> None:
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

    @app.callback(
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
        prevent_initial_call=True,
    )
    def check(set_progress, submit, lang, session):
        """A job: the code graded as ``ascendsim lesson check`` grades it; the trainee's run then plays."""
        lang = known_lang(lang)
        if not isinstance(submit, dict):
            raise PreventUpdate
        policy, why = runs.code_runs
        if policy == "off":
            return no_update, no_update, text("off", lang, why=why), no_update, *_UNCHANGED
        set_progress([text("queued", lang, ahead=0)])

        def report(phase: str, values: dict) -> None:
            set_progress([text(phase, lang, **values) if phase in _TEXT else msg(f"web.phase.{phase}", lang, **values)])

        try:
            result, run = runs.check(
                submit.get("lesson"), submit.get("code"), lang, session_id(session), report, policy == "sandbox"
            )
        except RunRequestError as exc:
            return no_update, no_update, f"{text('failed', lang)}: {exc}", no_update, *_UNCHANGED
        except Busy as exc:
            return (
                no_update,
                no_update,
                f"{text('failed', lang)}: {msg(exc.key, lang, **exc.values)}",
                no_update,
                *_UNCHANGED,
            )
        doc = {**grade_doc(result, run, runs), "n": submit.get("n")}
        done = text("done", lang, s=f"{result.time_s:.1f}")
        return doc, run, done, (run or no_update), *_views(doc, lang, doc["lesson"])

    @app.callback(
        *_VIEWS,
        Input("lang-page", "data"),
        Input("ex-number", "data"),
        State("ex-result", "data"),
        prevent_initial_call="initial_duplicate",
    )
    def show(lang, number, doc):
        """The kept grade, drawn again whenever the panel is (a language switch rebuilds it; ``ex-result`` lives
        outside it, so the verdict, the diff and the marked line stay); nothing for another lesson's grade."""
        return _views(doc, known_lang(lang), number)

    @app.callback(
        Output("run", "data", allow_duplicate=True),
        Output("jump-target", "data", allow_duplicate=True),
        Input({"type": "diff-step", "i": ALL, "step": ALL}, "n_clicks"),
        State("ex-mine", "data"),
        State("run", "data"),
        prevent_initial_call=True,
    )
    def go(clicks, mine, run):
        """A statement's link: the trainee's run in the views, at the step where it shows."""
        from dash import ctx

        if not isinstance(ctx.triggered_id, dict) or not any(clicks or []) or not isinstance(mine, dict):
            raise PreventUpdate
        step = ctx.triggered_id.get("step")
        if type(step) is not int or step < 0:
            raise PreventUpdate
        target = {"step": step, "at": time.time()}
        return (no_update if run == mine else mine), target

    @app.callback(
        Output("run", "data", allow_duplicate=True),
        Input("ex-show-mine", "n_clicks"),
        Input("ex-show-ref", "n_clicks"),
        State("ex-mine", "data"),
        State("ex-number", "data"),
        prevent_initial_call=True,
    )
    def switch(_mine, _ref, mine, number):
        from dash import ctx

        if ctx.triggered_id == "ex-show-mine" and isinstance(mine, dict):
            return mine
        if ctx.triggered_id == "ex-show-ref" and number:
            return {"lesson": number}
        raise PreventUpdate


__all__ = ("grade_doc", "panel", "register", "text", "verdict_view")
