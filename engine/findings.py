"""Findings: problems a run detected (failed ACL calls, deadlocks, races, misuse), one list per run."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Finding:
    kind: str  # "acl-error", "deadlock", "race", "kernel-error", ...
    message: str
    code: int | None = None  # the ACL error code, when there is one
    time_ps: int = 0
    src: str = ""
    details: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        where = f" [{self.src}]" if self.src else ""
        code = f" ({self.code})" if self.code is not None else ""
        return f"{self.kind}{code}: {self.message}{where}"


class DeadlockError(RuntimeError):
    """The simulation cannot make progress; ``finding`` holds the diagnosis."""

    def __init__(self, finding: Finding):
        super().__init__(finding.message)
        self.finding = finding
