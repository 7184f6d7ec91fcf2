"""The dashboard application: one Dash app over one :class:`~app.web.runs.Runs`.

:func:`create_app` builds the page shell and registers every callback; the Flask server it returns
(``app.server``) is the WSGI object a production server runs (``gunicorn -w 2 'app.web:server'``).
Any worker can serve any request: the browser keeps its own state (its run, its step) in its page,
and runs are found by their parameters in the store every worker shares.
"""

from __future__ import annotations

import os
from pathlib import Path

from dash import Dash

from . import compare, layout, pages, player, playground, render
from .runs import Runs

ASSETS = Path(__file__).resolve().parent / "assets"


def create_app(runs_dir: str | Path | None = None, lang: str = "en") -> Dash:
    """The dashboard. ``runs_dir``: where runs are stored (default ``$ASCENDSIM_RUNS`` or a folder in the
    system's temporary directory named after the code's hash); ``lang``: the default language."""
    if lang not in ("en", "zh"):
        raise ValueError(f"lang must be one of en, zh, got {lang!r}")
    runs = Runs(runs_dir or os.environ.get("ASCENDSIM_RUNS") or None, prepare=render.prepare)
    app = Dash(
        __name__,
        assets_folder=str(ASSETS),
        suppress_callback_exceptions=True,
        title="AscendSim",
        update_title=None,
    )
    app.layout = layout.shell(lang)
    pages.register(app, runs, lang)
    playground.register(app, runs)
    compare.register(app, runs)
    player.register(app, runs)
    app.server.config["ASCENDSIM_RUNS"] = str(runs.directory)
    return app


__all__ = ("create_app",)
