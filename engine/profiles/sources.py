"""Where each number of a hardware profile comes from: the comments of the profile files.

Every key of a profile file carries a comment: on its line (``aic_cores = 24  # INI [SoCInfo] ...``)
or, for a group of keys, in a comment block just above them in the same section. The comment opens
with the tag of a source listed in ``profiles/sources.toml`` (INI, ADK, MSOP, RT, ...) or says
``ASSUMPTION`` and gives the reasoning. A profile that is ``based_on`` another takes the comments of
the keys it inherits from that file. :func:`profile_sources` returns them per ``section.key``.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .profile import PROFILE_DIR, SOURCES_NAME, ProfileError, profile_path

SOURCES_FILE = PROFILE_DIR / SOURCES_NAME
_SECTION = re.compile(r"^\s*\[([A-Za-z0-9_]+)\]\s*(?:#\s*(.*))?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_]+)\s*=\s*(.*?)\s*$")
_TAG = re.compile(r"\b([A-Za-z]+)\b")


@dataclass(frozen=True)
class Source:
    """A number's provenance: ``kind`` is "source", "assumption" or "unsourced"; ``text`` is the comment."""

    kind: str
    text: str
    file: str

    def tags(self, legend: dict) -> list[str]:
        """The source tags the comment cites, of those in ``legend`` (:func:`source_legend`, read once by
        the caller)."""
        return [t for t in dict.fromkeys(_TAG.findall(self.text)) if t in legend and t != "ASSUMPTION"]


def source_legend() -> dict[str, dict[str, str]]:
    """``{tag: {"title": ..., "where": ...}}`` of every source the profiles may cite."""
    with SOURCES_FILE.open("rb") as fh:
        return tomllib.load(fh)


def _split_comment(line: str) -> tuple[str, str]:
    """(code, comment) of one TOML line (a ``#`` inside a string is not a comment)."""
    in_string = None
    for i, ch in enumerate(line):
        if in_string:
            if ch == in_string:
                in_string = None
        elif ch in "\"'":
            in_string = ch
        elif ch == "#":
            return line[:i], line[i + 1 :].strip()
    return line, ""


def file_comments(path: Path) -> tuple[dict[str, str], str | None]:
    """``({"section.key": comment}, based_on)`` of one profile file."""
    out: dict[str, str] = {}
    section = ""
    block: list[str] = []
    based_on = None
    for raw in path.read_text().splitlines():
        code, comment = _split_comment(raw)
        if not code.strip():
            if comment and section:
                block.append(comment)
            elif not comment:
                block = []
            continue
        head = _SECTION.match(code)
        if head:
            section, block = head.group(1), []
            continue
        key = _KEY.match(code)
        if not key:
            continue
        name = key.group(1)
        if not section:
            if name == "based_on":
                based_on = tomllib.loads(code)["based_on"]
            continue
        out[f"{section}.{name}"] = comment or " ".join(block)
        if comment:  # a block above applies to the keys that follow it without a comment of their own
            block = []
    return out, based_on


def classify(text: str, file: str) -> Source:
    if not text:
        return Source("unsourced", "no comment in the profile file says where this number comes from", file)
    return Source("assumption" if "ASSUMPTION" in text else "source", text, file)


def profile_sources(name_or_path: str | Path) -> dict[str, Source]:
    """The source of every key of a profile, following ``based_on`` for inherited keys."""
    path = Path(name_or_path)
    if path.suffix != ".toml":
        path = profile_path(str(name_or_path))
    merged: dict[str, Source] = {}
    seen: set[str] = set()
    while path is not None:
        if path.stem in seen:
            raise ProfileError(f"{path.name}: 'based_on' loops back to {path.stem}")
        seen.add(path.stem)
        comments, based_on = file_comments(path)
        for key, text in comments.items():
            merged.setdefault(key, classify(text, path.name))
        path = profile_path(based_on) if based_on else None
    return merged
