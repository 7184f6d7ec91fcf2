"""The web dashboard (Dash + plotly): lesson player, playground, compare and export.

* :mod:`.runs` — runs validated from what a browser asks, simulated once, shared by every worker;
* :mod:`.render` — what the server sends a player: a run's description and windows of frames;
* :mod:`.layout`, :mod:`.panels`, :mod:`.figures` — layout and figure builders over view-models;
* :mod:`.player`, :mod:`.pages`, :mod:`.playground`, :mod:`.compare` — the callbacks; ``assets/player.js``
  steps in the browser;
* :mod:`.app` — :func:`create_app`.

``app.web:server`` is the WSGI application (built on first access), for example
``gunicorn -w 2 -b 127.0.0.1:8050 'app.web:server'``; ``ASCENDSIM_RUNS`` names the folder the workers
share for runs, ``ASCENDSIM_LANG`` the default language.
"""

from __future__ import annotations

import os


def __getattr__(name: str):
    if name == "server":
        from .app import create_app

        return create_app(lang=os.environ.get("ASCENDSIM_LANG", "en")).server
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
