"""The terminal UI (Textual): lessons and scenarios played step by step, drawn from app.present's view-models.

* :mod:`~app.tui.app` — the application: state (step, language, core, breakpoints, play), key
  bindings and their ``action_*`` methods, the worker that prepares a run;
* :mod:`~app.tui.widgets` — thin panes, each a reactive view-model in and a renderable out;
* :mod:`~app.tui.screens` — the loading, help, check-result and lesson-picker screens;
* :mod:`~app.tui.switching` — opening another lesson (``o``) through the preparing worker;
* :mod:`~app.tui.navigation` — play speeds, timeline windows and core numbers in plain Python;
* ``ascendsim.tcss`` — layout and colours.
"""

from .app import AscendApp

__all__ = ("AscendApp",)
