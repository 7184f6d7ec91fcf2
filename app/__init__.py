"""AscendSim front ends, all drawn from one presenter:

* :mod:`app.present` — a finished run step by step as plain data (view-models, playback, texts in both
  languages); no UI imports;
* :mod:`app.web` — the Dash dashboard (lessons, the exercise panel, playground, compare, export);
* :mod:`app.tui` — the Textual terminal UI;
* :mod:`app.cli` — the ``ascendsim`` command;
* :mod:`app.server` — what only a dashboard server needs: the run store, its limits, the jobs.
"""
