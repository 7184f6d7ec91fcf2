"""The C++ lines of a module as they are written, with what each Python statement used (notes, API keys)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .table import Entry

INDENT = "    "


@dataclass
class Out:
    """The C++ lines of a module as they are written: text and the first line of the Python statement."""

    lines: list[tuple[str, int | None]] = field(default_factory=list)
    notes: dict[int, list[str]] = field(default_factory=dict)  # Python statement line -> note keys
    keys: dict[int, list[str]] = field(default_factory=dict)  # Python statement line -> API keys used
    missing: list[tuple[int, str]] = field(default_factory=list)
    comments_only: list[int] = field(default_factory=list)  # statements shown as Python comments
    errors: list[tuple[int, str]] = field(default_factory=list)  # statements the translator failed on (a bug)

    def add(self, text: str, py: int | None, depth: int) -> None:
        for part in text.split("\n"):
            self.lines.append((INDENT * depth + part if part else "", py))

    def used(self, py: int, entries: list[Entry], extra: tuple[str, ...] = ()) -> None:
        for entry in entries:
            self.keys.setdefault(py, [])
            if entry.key not in self.keys[py]:
                self.keys[py].append(entry.key)
        for note in [e.note for e in entries if e.note] + list(extra):
            self.notes.setdefault(py, [])
            if note not in self.notes[py]:
                self.notes[py].append(note)


__all__ = ("INDENT", "Out")
