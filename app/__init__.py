"""AscendSim front ends: the ``ascendsim`` command (and, later, the web dashboard and the TUI)."""
