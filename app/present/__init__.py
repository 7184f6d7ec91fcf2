"""The presenter: a finished run, step by step, as plain data that both UIs draw (no UI imports here).

* :class:`~app.present.replay.Replay` — steps, the state at any step, tile names and values,
  navigation (next event of a kind, marks, breakpoints, the step nearest a time);
* :mod:`~app.present.views` — view-models: small pure functions from ``(replay, step, options)`` to
  JSON-serialisable dicts, one per view (system, core, timeline, matrices, pipeline, metrics, code);
* :mod:`~app.present.messages` — every string a trainee sees, in English and Chinese.
* :mod:`~app.present.vocabulary` — the words both UIs draw with (what a core does, what a slot holds),
  each with its code, glyph and style class. Cores and source lines are typed references
  (:mod:`engine.trace.locations`): nothing here takes a label apart.

What only a server needs (the run store, its limits, background jobs) is :mod:`app.server`.
"""

from .replay import Breakpoint, Replay, StepFilter

__all__ = ("Breakpoint", "Replay", "StepFilter")
