"""Deadlock diagnosis for streams and events: who waits for whom, since when, from which line.

Called when something waits and the device has nothing left to simulate. Each stuck stream is
blocked at a ``stream_wait_event``; the event is either never going to be recorded (no record of
it is queued anywhere) or is recorded by another stream that is itself stuck — following those
links gives a chain that ends at a never-recorded event or closes into a cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .findings import Finding
from .stream import Stream, Task, TaskKind

if TYPE_CHECKING:
    from .simulation import Simulation


def _src(sim: Simulation, task: Task) -> str:
    return sim.trace.srcs.items[task.src] if task.src >= 0 else "?"


def _us(ps: int) -> str:
    return f"{ps / 1e6:.3f} us"


def _pending_record(sim: Simulation, streams: list[Stream], event, skip: Task) -> tuple[Stream, Task] | None:
    for stream in streams:
        for task in sim.runtime.queued(stream):
            if task != skip and task.kind == TaskKind.RECORD and task.event is event:
                return stream, task
    return None


def diagnose_stuck(sim: Simulation, who: str, since_ps: int) -> Finding:
    """Explain why nothing can progress: a readable wait-for chain plus the same as data."""
    rt = sim.runtime
    streams = list(rt.streams.values())
    heads = {task.stream.ident: task for task in rt.blocked()}
    lines = [f"deadlock: {who} (since {_us(since_ps)}), but nothing left can run."]
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
                else:
                    why = (
                        f"whose last record (at {event.last_record_src}) completed before the wait asked for "
                        f"record number {task.target}, and no further record is queued"
                    )
                step["recorded_by"] = None
                chain.append(step)
                lines.append(f"  {stream.label} waits since {_us(since)} ({_src(sim, task)}) for {event.label}, {why}.")
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
            if blocker is None:
                break
            if other.ident in visited:
                cycle = [rt.streams[i].label for i in visited[visited.index(other.ident) :]] + [other.label]
                lines.append("  cycle: " + " -> ".join(cycle) + ".")
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
    )
