"""Findings: problems a run detected (failed ACL calls, deadlocks, races, misuse), one list per run."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from types import MappingProxyType

# Chinese words for what English messages name: where memory lives (Allocation.where), streams and events
WHERE_ZH = MappingProxyType({"device": "设备", "pinned": "锁页主机", "pageable": "可分页主机", "host": "主机"})


RACE_KIND_ZH = MappingProxyType(
    {"read-after-write": "写后读", "write-after-read": "读后写", "write-after-write": "写后写"}
)


def where_zh(where: str) -> str:
    return WHERE_ZH.get(where, where)


def stream_zh(ident: int) -> str:
    """A stream's name in Chinese (``default stream`` / ``stream 2`` in English)."""
    return "默认流" if ident == 0 else f"流 {ident}"


def event_zh(ident: int) -> str:
    return f"事件 {ident}"


@dataclass(frozen=True)
class Finding:
    kind: str  # "acl-error", "deadlock", "race", "kernel-error", ...
    message: str
    code: int | None = None  # the ACL error code, when there is one
    time_ps: int = 0
    src: str = ""
    details: dict = field(default_factory=dict)
    # the same diagnosis in Chinese, written where the finding is made from the same facts (names, numbers and
    # file:line kept as they are); required, so no site can forget it. Runs stored before it existed decode to ""
    message_zh: str = field(kw_only=True)

    def text(self, lang: str = "en") -> str:
        """The message in ``lang``: the Chinese one when asked for and present, else the English one."""
        return self.message_zh if lang == "zh" and self.message_zh else self.message

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
