"""``view-diff``: a trainee's run against the lesson's reference solution's run: the statements (each a link
to its step), the metrics and the lanes side by side, and both timelines lane by lane (made in the job,
in both languages, by :func:`comparison`)."""

from __future__ import annotations

import json
from itertools import groupby

from dash import dcc, html

from app.present.messages import metric_name

from . import figures, layout, render
from .exercise_text import text
from .panels import fmt_value


def comparison(mine, ref) -> dict:
    """What the page keeps of the comparison of two loaded runs (plain JSON): their sizes, the typed diff and
    the aligned timelines' figure in each language (the page switches language without a job)."""
    from app.present.trace_diff import aligned_timelines, trace_diff

    names = {lang: (text("mine_col", lang), text("ref_col", lang)) for lang in ("en", "zh")}
    return {
        "events": mine.events,
        "us": mine.outline["end_us"],
        "ref_events": ref.events,
        "diff": json.loads(json.dumps(trace_diff(mine.replay, ref.replay).to_dict(), default=float)),
        "aligned": {
            lang: aligned_figure(aligned_timelines(mine.replay, ref.replay, names[lang], lang), render.labels(lang))
            for lang in ("en", "zh")
        },
    }


def aligned_figure(view: dict, labels: dict) -> dict:
    """:func:`timeline_figure` of two runs' aligned lanes (:func:`app.present.trace_diff.aligned_timelines`),
    every other lane's pair of rows on a light band so each of yours reads against the reference's below it."""
    fig = figures.timeline_figure(view, labels)
    where = {name: i for i, name in enumerate(fig["layout"]["yaxis"]["categoryarray"])}  # bottom to top
    bands = []
    for _pair, rows in groupby(view["lanes"], key=lambda lane: lane["pair"]):
        ys = [where[lane["label"]] for lane in rows]
        bands.append((min(ys) - 0.5, max(ys) + 0.5))
    fig["layout"]["shapes"] = [
        {
            "type": "rect",
            "xref": "paper",
            "yref": "y",
            "x0": 0,
            "x1": 1,
            "y0": y0,
            "y1": y1,
            "fillcolor": "#eef2f7",
            "line": {"width": 0},
            "layer": "below",
        }
        for k, (y0, y1) in enumerate(bands)
        if k % 2 == 0
    ]
    return fig


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


__all__ = ("aligned_figure", "comparison", "diff_view")
