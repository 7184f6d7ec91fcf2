"""The ``ascendsim`` command (:mod:`app.cli.command`): run, trace, compare, profiles, bench, lesson, grade,
calibrate, web and tui, one module per command family; :mod:`app.cli.usage` and :mod:`app.cli.budget` are how
every command refuses bad input and runs too big for this machine."""

from .command import EXIT_USAGE, UsageFailure, cli, console, main

__all__ = ("EXIT_USAGE", "UsageFailure", "cli", "console", "main")
