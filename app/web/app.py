"""The dashboard application: one Dash app over one :class:`~app.web.runs.Runs`.

:func:`create_app` builds the page shell and registers every callback; the Flask server it returns
(``app.server``) is the WSGI object a production server runs (``gunicorn -w 2 'app.web:server'``).
Any worker can serve any request: the browser keeps its own state (its run, its step) in its page,
and runs are found by their parameters in the store every worker shares.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

from dash import Dash

from app.server import managers
from app.server.store import DISK_BYTES

from . import compare, editor, exercise, layout, pages, player, playground
from .runs import Runs

MAX_BODY_BYTES = 2 << 20  # a callback's request (a trainee's code included) is far smaller

ASSETS = Path(__file__).resolve().parent / "assets"
PRELOADED_CHUNKS = ("graph", "dropdown", "slider")  # dcc's async chunks every page draws at once (see below)
POLYFILL = re.compile(r'<script src="[^"]*/deps/polyfill@7[^"]*"></script>\s*')


class AscendSimDash(Dash):
    """Dash without the @babel/polyfill 7 it puts first on every page. Its core-js 2 finds a modern browser's
    ``String.prototype.trim``, ``Number.prototype.toFixed`` and typed-array methods wanting and replaces them with
    slower ones, and evaluating it took 0.16-0.26 s of each page load. What Dash's own bundles need of it, the
    global ``regeneratorRuntime``, is ``assets/regenerator.bundle.js`` (app/web/bundles), which Dash loads with
    the other assets before its renderer and components.

    And the chunks of dcc's components the pages draw at once (the graphs, the dropdowns, the sliders) are preloaded
    with the page: dcc fetches each one only when a component of its kind is first rendered, which on the lessons
    page is after the page's first callback has answered, one more wait in the chain to the first step."""

    def interpolate_index(self, **kwargs) -> str:
        kwargs["scripts"] = POLYFILL.sub("", kwargs["scripts"])
        prefix = self.config.requests_pathname_prefix
        kwargs["css"] += "".join(
            f'<link rel="preload" as="script" href="{prefix}_dash-component-suites/dash/dcc/async-{chunk}.js">'
            for chunk in PRELOADED_CHUNKS
        )
        return super().interpolate_index(**kwargs)


def create_app(
    runs_dir: str | Path | None = None,
    lang: str = "en",
    store_mb: int | None = None,
    allow_unsandboxed_code: bool = False,
) -> Dash:
    """The dashboard. ``runs_dir``: where runs are stored (default ``$ASCENDSIM_RUNS`` or a folder in the
    system's temporary directory); ``lang``: the default language; ``store_mb``: the runs folder's cap on disk
    (default ``$ASCENDSIM_STORE_MB``, else :data:`app.server.store.DISK_BYTES`); ``allow_unsandboxed_code``:
    run trainees' exercises without bubblewrap (a trainee's own laptop: the pages show a warning)."""
    if lang not in ("en", "zh"):
        raise ValueError(f"lang must be one of en, zh, got {lang!r}")
    store_mb = store_mb or int(os.environ.get("ASCENDSIM_STORE_MB") or 0) or DISK_BYTES >> 20
    runs = Runs(runs_dir or os.environ.get("ASCENDSIM_RUNS") or None, disk_bytes=store_mb << 20)
    if allow_unsandboxed_code:
        runs.code_runs = ("unsandboxed", "")
    if runs.problem:  # the server still serves what it can compute; every page that needs the store says why
        logging.getLogger("ascendsim").warning(runs.problem)
    app = AscendSimDash(
        __name__,
        assets_folder=str(ASSETS),
        assets_ignore=editor.LAZY_ASSETS,  # the code editor: loaded when the Exercise panel shows it
        suppress_callback_exceptions=True,
        title="AscendSim",
        update_title=None,
        background_callback_manager=(manager := managers.manager(runs.coordinator.folder)),
    )
    app.layout = layout.shell(lang)
    pages.register(app, runs, lang)
    playground.register(app, runs)
    compare.register(app, runs)
    player.register(app, runs)
    exercise.register(app, runs)
    guard(app.server)
    if isinstance(manager, managers.LocalManager):  # jobs of this machine: their launcher, forked now (see its doc)
        manager.start(warm=runs.warm)
    app.server.config["ASCENDSIM_RUNS"] = str(runs.directory)
    return app


def guard(server) -> None:
    """What a request may be: at most :data:`MAX_BODY_BYTES` (413 beyond), and a callback request that cannot be
    dispatched (an unknown callback, a malformed body) is a 400 with one line, never a 500."""
    server.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES

    @server.errorhandler(413)
    def too_large(_err):
        return {"error": f"request body larger than {MAX_BODY_BYTES} B"}, 413

    @server.errorhandler(Exception)
    def failed(err):
        from flask import request
        from werkzeug.exceptions import HTTPException

        if isinstance(err, HTTPException):
            return err
        logging.getLogger("ascendsim").exception("request %s failed", request.path)
        if request.path.endswith("/_dash-update-component"):
            return {"error": f"the request could not be handled ({type(err).__name__})"}, 400
        return {"error": "internal error"}, 500


__all__ = ("create_app",)
