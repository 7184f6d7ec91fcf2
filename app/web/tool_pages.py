"""The layouts of the pages beside the lessons and the playground: Compare (two runs side by side), Export
(the current run's files) and the page for an address that names none."""

from __future__ import annotations

from dash import dcc, html

from .layout import Ui, page_stores, remembered_choice


def compare_page(lang: str, scenarios: list[str]) -> html.Div:
    ui = Ui(lang, "compare")

    def side(tag: str, key: str, scenario: str, options: str) -> html.Div:
        return html.Div(
            [
                ui.t(key, tag=html.H3),
                remembered_choice(f"cmp-{tag}-scenario", scenarios, scenario, lang),
                dcc.Input(
                    id=f"cmp-{tag}-options",
                    type="text",
                    value=options,
                    persistence=True,
                    persistence_type="session",
                    className="opts",
                ),
            ],
            className="cmpside",
        )

    return html.Div(
        [
            *page_stores(lang),
            html.Div(
                [
                    side("a", "web.compare_a", "matmul", "--m 1024 --n 1024 --k 1024 --buffer-num 1"),
                    side("b", "web.compare_b", "matmul", "--m 1024 --n 1024 --k 1024 --buffer-num 2"),
                ],
                className="pair",
            ),
            dcc.Checklist(id="cmp-numerics", options=[{"label": ui.t("web.numerics"), "value": "on"}], value=[]),
            html.Button(ui.t("web.compare_run"), id="cmp-run", className="btn run"),
            html.Div("", id="cmp-error", className="error", role="alert"),
            html.Div("", id="cmp-progress", className="progress"),
            html.Div(id="cmp-result"),
            dcc.Store(id="cmp-shown"),  # the two requests compared (a language switch draws them again)
        ],
        className="page compare",
    )


def export_page(lang: str) -> html.Div:
    ui = Ui(lang, "export")
    return html.Div(
        [
            *page_stores(lang),
            ui.t("web.export_title", tag=html.H2),
            html.Div(id="exp-run", className="note"),
            html.Div(
                [
                    html.Button(ui.t("web.export_chrome"), id="exp-chrome", className="btn"),
                    html.Button(ui.t("web.export_summary"), id="exp-summary", className="btn"),
                    html.Button(ui.t("web.export_csv"), id="exp-csv", className="btn"),
                ],
                className="row",
            ),
            html.Div("", id="exp-error", className="error"),
            dcc.Download(id="exp-download"),
        ],
        className="page export",
    )


def not_found(lang: str) -> html.Div:
    return html.Div([*page_stores(lang), Ui(lang, "404").t("web.not_found", tag=html.H2)], className="page")


__all__ = ("compare_page", "export_page", "not_found")
