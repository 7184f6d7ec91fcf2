"""``python -m app.cli``: the ``ascendsim`` command."""

from .command import console

console()
