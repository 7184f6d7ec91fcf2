"""Which files are the simulator's own (a call's source line is the first frame outside them: the user's
line) and how a source file is named in a trace (relative to the project)."""

from __future__ import annotations

from pathlib import Path

_ENGINE_DIR = Path(__file__).resolve().parent.parent
_REPO_DIR = _ENGINE_DIR.parent
# the simulator's own folders; kernels/ and scenarios/ are programs it runs, shown as the user's code
_MACHINE = ("", "aicore", "device", "host", "trace", "profiles")
# frames in these files are the simulator itself; the first frame outside them is the user's line
INTERNAL_FILES = frozenset(str(p) for d in _MACHINE for p in (_ENGINE_DIR / d).glob("*.py"))


def short_path(filename: str) -> str:
    """``filename`` relative to the project, or its base name when it is outside it."""
    path = Path(filename)
    try:
        return str(path.resolve().relative_to(_REPO_DIR))
    except ValueError:
        return path.name


__all__ = ("INTERNAL_FILES", "short_path")
