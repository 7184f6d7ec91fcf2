"""``python -m app.cli``: the ``ascendsim`` command."""

import sys

from .command import main

sys.exit(main())
