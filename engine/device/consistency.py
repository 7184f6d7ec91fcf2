"""Cross-stream memory consistency (seed section 6.2): unordered accesses to the same memory.

Two tasks on different streams that touch overlapping memory, at least one of them writing, must be
ordered: by an event (``record_event`` on one stream, ``stream_wait_event`` on the other) or by the
host synchronising with the first before it submits the second. Each task carries a vector clock
of what is known to happen before it (see ``DeviceRuntime.submit``); a pair whose clocks do not
order them is a race, reported with both operations, the memory range and the source lines.
"""

from __future__ import annotations

from ..trace import TraceData
from ..trace.findings import RACE_KIND_ZH, Finding, stream_zh, where_zh
from .stream import TaskKind, TaskRecords

MAX_REPORTS = 20


def stream_races(trace: TraceData, tasks) -> list[Finding]:
    """The races among ``tasks`` (task records in submission order) of a run whose trace is ``trace``."""
    names, srcs = trace.names, trace.srcs
    # per allocation: the latest access per (stream, range, write) — earlier ones are ordered before it
    latest: dict[tuple, dict[tuple, object]] = {}
    findings: list[Finding] = []
    reported: set[tuple] = set()

    def describe(task) -> str:
        src = srcs[task.src] if task.src >= 0 else "?"
        return f"{names[task.name]} on {task.stream_label} ({src})"

    def describe_zh(task) -> str:
        src = srcs[task.src] if task.src >= 0 else "?"
        what = names[task.name]
        if task.kind == TaskKind.COPY and task.reads and task.writes:  # "H2D copy": its direction, from the memories
            ends = ("D" if side[0][0] == "device" else "H" for side in (task.reads[0], task.writes[0]))
            what = "{}2{} 拷贝".format(*ends)
        return f"{stream_zh(task.stream)} 上的 {what}（{src}）"

    for task in _worth_checking(tasks):
        me = task.stream
        accesses = [(r, False) for r in task.reads] + [(w, True) for w in task.writes]
        for (alloc, lo, hi), write in accesses:
            entries = latest.setdefault(alloc, {})
            for (stream, olo, ohi, owrite), other in entries.items():
                if stream == me or ohi <= lo or olo >= hi or not (write or owrite):
                    continue
                if other.clock(stream) <= task.clock(stream):
                    continue  # the other task happens before this one
                key = (other.seq, task.seq)
                if key in reported or len(findings) >= MAX_REPORTS:
                    continue
                reported.add(key)
                kind = (
                    "write-after-write" if write and owrite else ("read-after-write" if owrite else "write-after-read")
                )
                where = f"{alloc[0]} allocation #{alloc[1]} bytes [{max(lo, olo)}, {min(hi, ohi)})"
                where_zh_ = f"{where_zh(alloc[0])}分配 #{alloc[1]} 的字节 [{max(lo, olo)}, {min(hi, ohi)})"
                findings.append(
                    Finding(
                        "race",
                        f"cross-stream {kind} race on {where}: {describe(task)} {_verb(write)} it while "
                        f"{describe(other)} {_verb(owrite)} it, and nothing orders the two: record an event after "
                        f"the first and make the second's stream wait for it (stream_wait_event), or synchronize "
                        f"in between",
                        None,
                        task.start if task.start >= 0 else 0,
                        srcs[task.src] if task.src >= 0 else "",
                        {"first": describe(other), "second": describe(task), "memory": where},
                        message_zh=f"{where_zh_} 上的跨流{RACE_KIND_ZH[kind]}数据竞争：{describe_zh(task)}"
                        f"{_verb_zh(write)}该内存，而{describe_zh(other)}{_verb_zh(owrite)}该内存，两者之间没有任何"
                        "先后约束：请在前者之后 record 一个事件，并让后者所在的流等待它（stream_wait_event），"
                        "或在两者之间同步",
                    )
                )
            entries[(me, lo, hi, write)] = task
    return findings


def _worth_checking(tasks):
    """The tasks that ran and touch an allocation that tasks of another stream touch too, in order: only
    those can race (``TaskRecords.shared_tasks``: a bulk path's tens of thousands stay columns)."""
    if not isinstance(tasks, TaskRecords):
        tasks = TaskRecords(list(tasks))
    return [tasks[i] for i in tasks.shared_tasks()]


def _verb(write: bool) -> str:
    return "writes" if write else "reads"


def _verb_zh(write: bool) -> str:
    return "写入" if write else "读取"
