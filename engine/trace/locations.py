"""Where something happened, as data: on which AI core (:class:`CoreRef`) and at which line of code
(:class:`SourceLine`).

A view that needs to know "which core" or "which line" reads these fields; it never splits a label
such as ``"AIC 3"`` or ``"kernels/add.py:42"``. The labels are for people: :attr:`CoreRef.label` is how
the trace names a core's lanes, :attr:`SourceLine.label` how a message cites a line. At a JSON edge
both travel as their fields (:meth:`to_dict`, :meth:`from_dict`).
"""

from __future__ import annotations

from dataclasses import dataclass

CORE_KINDS = ("AIC", "AIV")  # a Cube core, a vector core


@dataclass(frozen=True, order=True)
class CoreRef:
    """A physical AI core: its ``kind`` ("AIC" or "AIV") and its number among the cores of that kind.

    Ordered as viewers list cores: AICs first, then AIVs, each by number.
    """

    kind: str
    index: int

    def __post_init__(self) -> None:
        if self.kind not in CORE_KINDS:
            raise ValueError(f"a core's kind is one of {', '.join(CORE_KINDS)}, got {self.kind!r}")
        if not isinstance(self.index, int) or isinstance(self.index, bool) or self.index < 0:
            raise ValueError(f"a core's index is a whole number >= 0, got {self.index!r}")

    @classmethod
    def of_lane(cls, lane) -> CoreRef | None:
        """The core a trace lane belongs to (from its ``core_type`` and ``core`` fields), None for a lane of no core."""
        return cls(lane.core_type, lane.core) if lane.core >= 0 else None

    @property
    def label(self) -> str:
        """``"AIC 3"``: how the trace names the core's lanes and a person reads it."""
        return f"{self.kind} {self.index}"

    @property
    def short(self) -> str:
        """``"C3"`` / ``"V3"``: a grid cell's caption."""
        return f"{self.kind[-1]}{self.index}"

    @property
    def css(self) -> str:
        """The style class of the core's kind: ``"aic"`` or ``"aiv"``."""
        return self.kind.lower()

    def to_dict(self) -> dict:
        return {"kind": self.kind, "index": self.index}

    @classmethod
    def from_dict(cls, doc: dict) -> CoreRef:
        return cls(str(doc["kind"]), int(doc["index"]))


@dataclass(frozen=True, order=True)
class SourceLine:
    """A line of a source file: ``file`` as the trace names it (relative to the package, or the trainee's
    file name) and ``line``, counted from 1."""

    file: str
    line: int

    def __post_init__(self) -> None:
        if not self.file:
            raise ValueError("a source line needs a file")
        if not isinstance(self.line, int) or isinstance(self.line, bool) or self.line < 1:
            raise ValueError(f"a source line's number is a whole number >= 1, got {self.line!r}")

    @property
    def label(self) -> str:
        """``"kernels/add.py:42"``: how a message cites the line."""
        return f"{self.file}:{self.line}"

    @property
    def name(self) -> str:
        """The file's name without its folders."""
        return self.file.rpartition("/")[2]

    def to_dict(self) -> dict:
        return {"file": self.file, "line": self.line}

    @classmethod
    def from_dict(cls, doc: dict) -> SourceLine:
        return cls(str(doc["file"]), int(doc["line"]))

    @classmethod
    def parse(cls, text: str) -> SourceLine:
        """A line from ``"file:line"`` text: what a person types (a breakpoint) and the trace's table of
        source locations, read once per run (:attr:`engine.trace.TraceData.srcs` keeps text). ValueError
        when the text is not a file and a line number."""
        file, colon, line = str(text).strip().rpartition(":")
        if not colon or not line.isdigit():
            raise ValueError(f"a source line is written file:line (kernels/add.py:42), got {text!r}")
        return cls(file, int(line))


__all__ = ("CORE_KINDS", "CoreRef", "SourceLine")
