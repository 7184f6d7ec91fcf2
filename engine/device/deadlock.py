"""Deadlock diagnosis for streams and events: who waits for whom, since when, from which line.

Called when something waits and the device has nothing left to simulate. Each stuck stream is
blocked at a ``stream_wait_event``; the event is either never going to be recorded (no record of
it is queued anywhere) or is recorded by another stream that is itself stuck — following those
links gives a chain that ends at a never-recorded event or closes into a cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..trace.findings import Finding, event_zh, stream_zh
from .stream import Stream, Task, TaskKind

if TYPE_CHECKING:
    from ..simulation import Simulation


def _src(sim: Simulation, task: Task) -> str:
    return sim.trace.srcs.items[task.src] if task.src >= 0 else "?"


def _us(ps: int) -> str:
    return f"{ps / 1e6:.3f} us"


def _task_zh(sim: Simulation, task: Task) -> str:
    """A task's label in Chinese, from its plan's facts (``Task.label`` is the English one)."""
    plan = task.plan
    stream = stream_zh(plan.stream)
    if plan.kind == TaskKind.COPY:
        return f"{stream} 上 {plan.nbytes} B 的 {plan.direction} 拷贝"
    if plan.kind == TaskKind.KERNEL:
        return f"{stream} 上的核函数 {sim.trace.names.items[plan.name]}"
    if plan.kind == TaskKind.RECORD:
        return f"{stream} 上对{event_zh(plan.event)}的 record"
    return f"{stream} 对{event_zh(plan.event)}的等待"


def _pending_record(sim: Simulation, streams: list[Stream], event, skip: Task) -> tuple[Stream, Task] | None:
    for stream in streams:
        for task in sim.runtime.queued(stream):
            if task != skip and task.kind == TaskKind.RECORD and task.event is event:
                return stream, task
    return None


def diagnose_stuck(sim: Simulation, who: str, since_ps: int, who_zh: str) -> Finding:
    """Explain why nothing can progress: a readable wait-for chain (in English and, from the same facts, in
    Chinese: ``who_zh`` is ``who`` in Chinese) plus the same as data."""
    rt = sim.runtime
    streams = list(rt.streams.values())
    heads = {task.stream.ident: task for task in rt.blocked()}
    lines = [f"deadlock: {who} (since {_us(since_ps)}), but nothing left can run."]
    lines_zh = [f"死锁：{who_zh}（自 {_us(since_ps)} 起），但已没有任何任务可以运行。"]
    chains = []
    seen_roots: set[int] = set()
    for ident, head in heads.items():
        if ident in seen_roots:
            continue
        chain = []
        visited: list[int] = []
        task = head
        while True:
            stream = task.stream
            visited.append(stream.ident)
            seen_roots.add(stream.ident)
            if task.kind != TaskKind.WAIT:
                chain.append({"stream": stream.label, "blocked_on": task.label, "src": _src(sim, task)})
                lines.append(f"  {stream.label} is stuck at {task.label} ({_src(sim, task)}).")
                lines_zh.append(f"  {stream_zh(stream.ident)} 卡在{_task_zh(sim, task)}（{_src(sim, task)}）。")
                break
            event = task.event
            since = task.start if task.start >= 0 else task.submit
            step = {
                "stream": stream.label,
                "waits_for": event.label,
                "since_us": since / 1e6,
                "src": _src(sim, task),
            }
            found = _pending_record(sim, streams, event, task)
            if found is None:
                if event.records_submitted == 0:
                    why = (
                        f"which is never recorded (created at {event.created_src}; "
                        "no record_event for it was submitted)"
                    )
                    why_zh = f"而它永远不会被 record（创建于 {event.created_src}；从未提交过针对它的 record_event）"
                else:
                    why = (
                        f"whose last record (at {event.last_record_src}) completed before the wait asked for "
                        f"record number {task.target}, and no further record is queued"
                    )
                    why_zh = (
                        f"而它的最后一次 record（位于 {event.last_record_src}）在该等待要求第 {task.target} 次 "
                        "record 之前就已完成，且队列中再没有新的 record"
                    )
                step["recorded_by"] = None
                chain.append(step)
                lines.append(f"  {stream.label} waits since {_us(since)} ({_src(sim, task)}) for {event.label}, {why}.")
                lines_zh.append(
                    f"  {stream_zh(stream.ident)} 自 {_us(since)} 起（{_src(sim, task)}）等待{event_zh(event.ident)}，"
                    f"{why_zh}。"
                )
                break
            other, record = found
            step["recorded_by"] = other.label
            step["record_src"] = _src(sim, record)
            chain.append(step)
            blocker = heads.get(other.ident)
            lines.append(
                f"  {stream.label} waits since {_us(since)} ({_src(sim, task)}) for {event.label}, "
                f"recorded by {other.label} at {_src(sim, record)}, queued behind "
                f"{blocker.label if blocker else 'nothing'}."
            )
            lines_zh.append(
                f"  {stream_zh(stream.ident)} 自 {_us(since)} 起（{_src(sim, task)}）等待{event_zh(event.ident)}，"
                f"它由{stream_zh(other.ident)}在 {_src(sim, record)} 处 record，但排在"
                f"{_task_zh(sim, blocker) if blocker else '（无）'}之后。"
            )
            if blocker is None:
                break
            if other.ident in visited:
                cycle = [rt.streams[i].label for i in visited[visited.index(other.ident) :]] + [other.label]
                lines.append("  cycle: " + " -> ".join(cycle) + ".")
                cycle_zh = [stream_zh(i) for i in visited[visited.index(other.ident) :]] + [stream_zh(other.ident)]
                lines_zh.append("  环：" + " -> ".join(cycle_zh) + "。")
                chain.append({"cycle": cycle})
                break
            task = blocker
        chains.append(chain)
    return Finding(
        "deadlock",
        "\n".join(lines),
        None,
        since_ps,
        "",
        {"chains": chains},
        message_zh="\n".join(lines_zh),
    )
