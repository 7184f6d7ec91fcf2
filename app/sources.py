"""Which code made a result: a hash over the source files that determine it, so that a result kept on disk is
only ever read back by the code that made it."""

from __future__ import annotations

import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the folder holding app/, engine/ and lessons/ (a clone or site-packages)


def fingerprint(*folders: str, salt: str = "") -> str:
    """16 hex digits of a hash of the ``.py``, ``.toml`` and ``.json`` files under ``folders`` (or of those
    files), relative to :data:`ROOT`, names and bytes, and of ``salt`` (what else decides the result). Hidden
    files are not sources (a trainee's progress file beside an exercise, say)."""
    h = hashlib.sha256(salt.encode())
    for folder in folders:
        top = ROOT / folder
        for path in [top] if top.is_file() else sorted(top.rglob("*")):
            if path.suffix in (".py", ".toml", ".json") and "__pycache__" not in path.parts and path.name[0] != ".":
                h.update(str(path.relative_to(ROOT)).encode())
                h.update(path.read_bytes())
    return h.hexdigest()[:16]
