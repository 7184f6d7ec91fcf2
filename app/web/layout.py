"""Layout builders: the page shell, the player (controls and the seven views) and the four pages.

Every label a trainee reads is a :meth:`Ui.t` span whose id names its catalogue key, so switching
the language rewrites the labels in place (one callback) without rebuilding the page and without
losing the step. Element ids listed in the README's automation contract (``step-back``, ``play``,
``view-core``, ``pg-run``, ...) are created here and keep their meaning.
"""

from __future__ import annotations

from dash import dcc, html

from app.present.messages import t as msg
from app.present.playback import DEFAULT_SPEED, SPEEDS
from engine.trace import Kind

from . import editor
from .figures import empty_figure

LANGS = (("en", "English"), ("zh", "中文"))
VIEWS = ("system", "core", "timeline", "matrices", "pipeline", "metrics", "code")
PAGES = (("/", "web.nav.lessons"), ("/playground", "web.nav.playground"), ("/compare", "web.nav.compare"))
PAGES += (("/export", "web.nav.export"),)
GRAPH_CONFIG = {"displaylogo": False, "modeBarButtonsToRemove": ["select2d", "lasso2d", "autoScale2d"]}


class Ui:
    """Builds translatable labels for one page in one language."""

    def __init__(self, lang: str, page: str) -> None:
        self.lang = lang
        self.page = page
        self._n = 0

    def t(self, key: str, tag=html.Span, **props):
        """An element showing catalogue entry ``key``; the language switch rewrites it in place."""
        self._n += 1
        return tag(msg(key, self.lang), id={"type": "t", "key": key, "n": f"{self.page}-{self._n}"}, **props)

    def s(self, key: str, **values) -> str:
        return msg(key, self.lang, **values)

    def dropdown(self, **props) -> dcc.Dropdown:
        """A dropdown whose own words (search, clear, select all) are in the page's language."""
        return dcc.Dropdown(labels=dropdown_labels(self.lang), **props)


def dropdown_labels(lang: str) -> dict:
    """The words dcc.Dropdown draws itself (its ``labels``), in ``lang``."""
    keys = ("select_all", "deselect_all", "selected_count", "search", "clear_search", "clear_selection")
    return {k: msg(f"web.dd.{k}", lang) for k in (*keys, "no_options_found")}


def shell(lang: str) -> html.Div:
    """Header (navigation, language switch), the session's current run, and the page area."""
    ui = Ui(lang, "shell")
    nav = [
        dcc.Link(ui.t(key), href=path, id=f"nav-{key.rsplit('.', 1)[1]}", className="navlink") for path, key in PAGES
    ]
    return html.Div(
        [
            dcc.Location(id="url", refresh=False),
            dcc.Store(id="last-run", storage_type="session"),
            dcc.Store(id="session", storage_type="session"),  # this tab's id: its jobs are counted under it
            html.Header(
                [
                    html.Div([html.B("AscendSim"), ui.t("web.title", className="subtitle")], className="brand"),
                    html.Nav(nav),
                    dcc.RadioItems(
                        id="lang-switch",
                        options=[{"label": name, "value": code} for code, name in LANGS],
                        value=lang,
                        inline=True,
                        persistence=True,
                        persistence_type="local",
                        className="lang",
                    ),
                ],
                className="top",
            ),
            # shown by player.js for a while when a lost answer was asked for again (the request resent)
            ui.t("web.resent", tag=html.Div, className="note conn-note", hidden=True),
            html.Main(id="page"),
        ],
        id="app",
    )


def remembered_choice(ident: str, options: list, value, lang: str = "en") -> dcc.Dropdown:
    """A dropdown that cannot be emptied and keeps its choice for the browser session."""
    return dcc.Dropdown(
        labels=dropdown_labels(lang),
        id=ident,
        options=options,
        value=value,
        clearable=False,
        persistence=True,
        persistence_type="session",
        className="dd",
    )


def page_stores(lang: str) -> list:
    """What every page holds: its language (kept in step with the switch).

    A callback's inputs must all be on the page or all absent (Dash reports a page that has some of them
    as an error), so parts that exist on some pages only (the player, the lesson list) keep their own
    copy of the language (``player-lang``, ``lesson-lang``), copied from this one in the browser."""
    return [dcc.Store(id="lang-page", data=lang)]


# -- the player -------------------------------------------------------------------------------------------------
def controls(ui: Ui) -> html.Div:
    kinds = [{"label": k, "value": k} for k in Kind.__members__]
    any_kind = [{"label": "*", "value": ""}, *kinds]
    return html.Div(
        [
            html.Div(
                [
                    html.Button(ui.t("web.back"), id="step-back", className="btn", title="←"),
                    html.Button(
                        [ui.t("web.play", className="lbl-play"), ui.t("web.pause", className="lbl-pause")],
                        id="play",
                        className="btn play",
                        title="space",
                    ),
                    html.Button(ui.t("web.forward"), id="step-forward", className="btn", title="→"),
                    html.Button("|◀", id="step-first", className="btn hidden", title="Home"),
                    html.Button("▶|", id="step-last", className="btn hidden", title="End"),
                    html.Span("", id="step-label", className="steplabel"),
                    html.Div(
                        dcc.Slider(
                            id="step-slider",
                            min=0,
                            max=1,
                            step=1,
                            value=0,
                            marks=None,
                            updatemode="drag",
                            allow_direct_input=False,  # its box counted from 0: the labelled box below counts from 1
                        ),
                        className="slider",
                    ),
                    html.Label(
                        [ui.t("web.goto"), dcc.Input(id="step-goto", type="number", min=1, step=1, debounce=True)],
                        className="field goto",
                    ),
                    html.Label(
                        [
                            ui.t("web.speed"),
                            ui.dropdown(
                                id="speed",
                                options=[{"label": str(s), "value": s} for s in SPEEDS],
                                value=DEFAULT_SPEED,
                                clearable=False,
                                className="dd small",
                            ),
                        ],
                        className="field",
                    ),
                ],
                className="row",
            ),
            html.Div(
                [
                    html.Label(
                        [
                            ui.t("web.jump"),
                            ui.dropdown(
                                id="jump-kind", options=kinds, value="COMPUTE", clearable=False, className="dd"
                            ),
                        ],
                        className="field",
                    ),
                    html.Button(ui.t("web.jump_prev"), id="jump-prev", className="btn", title="["),
                    html.Button(ui.t("web.jump_next"), id="jump-next", className="btn", title="]"),
                    html.Label(
                        [
                            ui.t("web.core_shown"),
                            ui.dropdown(id="core-select", options=[], clearable=False, className="dd"),
                        ],
                        className="field",
                    ),
                    html.Span("", id="event-label", className="event"),
                ],
                className="row",
            ),
            html.Details(
                [
                    html.Summary(ui.t("web.breakpoints")),
                    html.Div(
                        [
                            html.Label(
                                [
                                    ui.t("web.bp_kind"),
                                    ui.dropdown(
                                        id="bp-kind", options=any_kind, value="", clearable=False, className="dd"
                                    ),
                                ],
                                className="field",
                            ),
                            html.Label(
                                [ui.t("web.bp_core"), ui.dropdown(id="bp-core", options=[], className="dd")],
                                className="field",
                            ),
                            html.Label(
                                [ui.t("web.bp_src"), dcc.Input(id="bp-src", type="text", debounce=False)],
                                className="field",
                            ),
                            html.Label([ui.t("web.bp_mark"), dcc.Input(id="bp-mark", type="text")], className="field"),
                            html.Button(ui.t("web.bp_add"), id="bp-add", className="btn"),
                        ],
                        className="row",
                    ),
                    html.Div(ui.t("web.bp_none"), id="bp-list", className="bplist"),
                    html.Div("", id="bp-error", className="error"),
                ],
                className="breakpoints",
            ),
            ui.t("web.keys", tag=html.Div, className="keys"),
            html.Div("", id="player-status", className="status"),
        ],
        className="controls",
    )


def _view(ui: Ui, name: str, title_key: str, *children, extra=None) -> html.Section:
    head = [ui.t(title_key, tag=html.H3)]
    if extra is not None:
        head.append(extra)
    return html.Section([html.Div(head, className="viewhead"), *children], id=f"view-{name}", className="view")


FOLLOWING = ["on"]  # the timeline's "follow the cursor" box as a page opens: ticked


def views(ui: Ui) -> html.Div:
    """The seven views; their contents are filled per run (server) and per step (browser)."""
    timeline_tools = html.Div(
        [
            dcc.Checklist(
                id="tl-follow", options=[{"label": ui.t("web.follow"), "value": "on"}], value=FOLLOWING, inline=True
            ),
            html.Button(ui.t("web.whole_run"), id="tl-whole", className="btn small"),
            html.Button(
                ui.t("web.device_work"), id="tl-work", className="btn small", title=ui.s("web.device_work_tip")
            ),
            html.Label(
                [ui.t("web.expand"), ui.dropdown(id="tl-expand", options=[], multi=True, className="dd wide")],
                className="field",
            ),
        ],
        className="tools",
    )
    return html.Div(
        [
            html.Div(
                [
                    _view(ui, "system", "web.view.system", html.Div(id="sys-host"), html.Div(id="sys-device")),
                    _view(ui, "core", "web.view.core", html.Div(id="core-body"), html.Div(id="tile-values")),
                ],
                className="pair",
            ),
            _view(
                ui,
                "timeline",
                "timeline",
                dcc.Graph(id="timeline-graph", figure=empty_figure(), config=GRAPH_CONFIG),
                extra=timeline_tools,
            ),
            html.Div(
                [
                    _view(
                        ui,
                        "matrices",
                        "matrices",
                        ui.t("web.tile_legend", tag=html.Div, className="hint"),
                        html.Div(id="mx-note", className="note"),
                        dcc.Graph(id="matrices-graph", figure=empty_figure(), config=GRAPH_CONFIG),
                    ),
                    _view(
                        ui,
                        "pipeline",
                        "pipeline",
                        dcc.Graph(id="pipeline-graph", figure=empty_figure(), config=GRAPH_CONFIG),
                    ),
                ],
                className="pair",
            ),
            _view(  # the current line's Python beside its C++ (Ascend C), both drawn per step from the frames
                ui,
                "code",
                "code",
                html.Div(
                    [
                        html.Div([ui.t("cpp.python", tag=html.H4), html.Div(id="code-body")], className="codecol"),
                        html.Div(
                            [ui.t("cpp.title", tag=html.H4), html.Div(id="cpp-body"), html.Div(id="cpp-notes")],
                            className="codecol",
                        ),
                    ],
                    className="codecols",
                ),
            ),
            _view(ui, "metrics", "metrics", html.Div(id="metrics-body")),
        ],
        className="views",
    )


def player(ui: Ui) -> html.Div:
    """Controls, views, and the browser-side state of one player (run, step, window of frames)."""
    stores = [
        dcc.Store(id="player-lang", data=ui.lang),
        dcc.Store(id="run"),
        dcc.Store(id="meta"),
        dcc.Store(id="step", data=0),
        dcc.Store(id="window"),
        dcc.Store(id="tl-view"),  # the timeline's viewport: its run and span (app.present.viewport)
        dcc.Store(id="window-request"),
        dcc.Store(id="playing", data=False),
        dcc.Store(id="breakpoints", data=[]),
        dcc.Store(id="jump-target"),
        dcc.Store(id="slot-click"),
        dcc.Store(id="core-pick"),
        dcc.Store(id="tl-zoom"),
        dcc.Interval(id="play-timer", interval=100, disabled=True),
    ]
    return html.Div([*stores, controls(ui), views(ui)], className="player")


# -- pages ----------------------------------------------------------------------------------------------------
def lesson_options(lessons, lang: str) -> list[dict]:
    """The lesson menu's entries ("1. Host lifecycle and error codes — beginner") in ``lang``: each lesson with
    its level on the path (beginner, intermediate, expert)."""
    return [{"label": f"{x.number}. {x.title[lang]} — {x.level_name(lang)}", "value": x.number} for x in lessons]


def lessons_page(lang: str, lessons, number: int | None = None) -> html.Div:
    """The lessons page, on lesson ``number`` (None: the one this browser session last chose, else lesson 1)."""
    ui = Ui(lang, "lessons")
    choice = remembered_choice("lesson-select", lesson_options(lessons, lang), number or 1, lang)
    if number is not None:  # asked for by the address: it wins over the remembered choice
        choice.persistence = False
    aside = html.Aside(
        [
            html.Label(
                [
                    ui.t("web.lesson"),
                    choice,
                ],
                className="field",
            ),
            dcc.Store(id="lesson-lang", data=lang),
            html.Div(id="lesson-head"),
            html.Div(id="narration", className="narration"),
            html.Div(
                [
                    html.Button(ui.t("web.prev_step"), id={"type": "ls-nav", "dir": -1}, className="btn"),
                    html.Button(ui.t("web.next_step"), id={"type": "ls-nav", "dir": 1}, className="btn"),
                ],
                className="row",
            ),
            ui.t("web.steps", tag=html.H4),
            html.Div(id="lesson-steps", className="lessonsteps"),
            html.Div(id="lesson-questions"),
        ],
        className="side",
    )
    tabs = html.Div(
        [
            html.Button(ui.t("web.tab_views"), id="tab-views", className="tab on", n_clicks=0),
            html.Button(
                ui.t("web.tab_exercise"), id="tab-exercise", className="tab", n_clicks=0, **{editor.PREFETCH: ""}
            ),
            html.Button(ui.t("cpp.whole"), id="tab-cpp", className="tab", n_clicks=0),
        ],
        className="tabs",
    )
    main = html.Div(
        [
            tabs,
            html.Div(id="lesson-exercise", className="hidden"),
            html.Div(id="lesson-cpp", className="hidden"),  # the lesson's whole program in C++ (Ascend C)
            dcc.Store(id="ex-result"),  # the last grade: outside the exercise panel, which a language switch rebuilds
            dcc.Store(id="ex-mine"),  # its run (what the views load): the small part callbacks send back
            # what Run & check sends: outside the panel, so that drawing the panel does not start a grading job
            dcc.Store(id="ex-submit"),
            html.Div(player(ui), id="player-area"),
        ],
        className="main",
    )
    return html.Div([*page_stores(lang), html.Div([aside, main], className="with-side")], className="page")


def playground_page(lang: str, scenarios: list[str], profiles: list[str], scenario: str, profile: str) -> html.Div:
    ui = Ui(lang, "playground")

    def text(ident: str, value) -> dcc.Input:
        return dcc.Input(
            id=ident,
            type="text",
            inputMode="numeric",
            value=str(value),
            persistence=True,
            persistence_type="session",
            className="num",
        )

    aside = html.Aside(
        [
            html.Label(
                [
                    ui.t("web.scenario"),
                    remembered_choice("pg-scenario", scenarios, scenario, lang),
                ],
                className="field",
            ),
            html.Label(
                [
                    ui.t("web.profile"),
                    remembered_choice("pg-profile", profiles, profile, lang),
                ],
                className="field",
            ),
            html.Div(
                [
                    html.Label(["m", text("pg-m", 1024)], id="pg-m-row", className="field"),
                    html.Label(["n", text("pg-n", 1024)], id="pg-n-row", className="field"),
                    html.Label(["k", text("pg-k", 1024)], id="pg-k-row", className="field"),
                ],
                className="mnk",
            ),
            html.Div(id="pg-params"),
            dcc.Checklist(
                id="pg-numerics",
                options=[{"label": ui.t("web.numerics"), "value": "on"}],
                value=["on"],
                persistence=True,
                persistence_type="session",
            ),
            html.Div(
                [
                    html.Button(ui.t("web.run"), id="pg-run", className="btn run"),
                    html.Button(ui.t("web.cancel"), id="pg-cancel", className="btn", style={"display": "none"}),
                ],
                className="buttons",
            ),
            html.Div("", id="pg-error", className="error", role="alert"),
            html.Div("", id="pg-note", className="note"),
            html.Div(ui.t("web.pg_hint"), id="pg-progress", className="progress"),
            html.Div(html.Div(id="pg-summary"), id="narration", className="narration small"),
            dcc.Store(id="pg-last", storage_type="session"),
        ],
        className="side",
    )
    return html.Div([*page_stores(lang), html.Div([aside, player(ui)], className="with-side")], className="page")


__all__ = (
    "LANGS",
    "SPEEDS",
    "VIEWS",
    "Ui",
    "lessons_page",
    "player",
    "playground_page",
    "shell",
)
