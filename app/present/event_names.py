"""An event's name as a trainee reads it, in their language, from the event's typed detail.

The trace names events in English once (``wait: stream 1 to drain``, ``alloc VECIN slot 0``); API calls and
instructions are named by their API (``acl.rt.malloc``, ``mmad``), the same in both languages. Where the name
is words rather than an API, the Chinese one is built here from the detail record the engine attached (a
:class:`engine.trace.detail.HostWait`, a :class:`engine.trace.detail.QueueOp`), never from the English text.
"""

from __future__ import annotations

from engine.aicore.pipes import Pipe
from engine.trace import Kind
from engine.trace.data import TraceData
from engine.trace.detail import HostWait, HostWork, Issue, QueueOp, QueueOpKind
from engine.trace.findings import event_zh, stream_zh

from .messages import t as msg

_WAITS_ZH = {  # HostWait.on -> what the host waits for, given its target
    "stream": lambda n: f"{stream_zh(n)} 中的任务全部完成",
    "event": lambda n: f"{event_zh(n)} 完成",
    "copy": lambda _n: "拷贝完成",
    "pageable": lambda _n: "可分页内存的拷贝完成（经锁页缓冲中转）",
    "room": lambda n: f"{stream_zh(n)} 的队列腾出空间",
    "device": lambda _n: "所有流中的任务全部完成",
}
_QUEUE_OPS = frozenset({QueueOpKind.ALLOC, QueueOpKind.ENQUE, QueueOpKind.DEQUE, QueueOpKind.FREE})


def event_name(t: TraceData, row: int, lang: str = "en") -> str:
    """The name of the event at trace ``row`` in ``lang``."""
    name = t.names[int(t.name[row])]
    if lang != "zh":
        return name
    d = t.detail_of(row)
    if isinstance(d, HostWait) and d.on in _WAITS_ZH:
        return msg("event.wait", lang, what=_WAITS_ZH[d.on](d.target))
    if isinstance(d, HostWork) and d.name_zh:  # the program's own work, named by the program in both languages
        return d.name_zh
    if isinstance(d, Issue):  # the scalar unit issuing instructions
        return msg("event.issue", lang, n=d.instructions)
    if isinstance(d, QueueOp) and d.op in _QUEUE_OPS:  # (a stored run's op is a plain int)
        op = QueueOpKind(d.op)
        if d.flag_src >= 0:  # the queue's implied flag: set_flag MTE2_V (VECIN data)
            call = "set_flag" if int(t.kind[row]) == Kind.FLAG_SET else "wait_flag"
            api = f"{call} {Pipe(d.flag_src).name}_{Pipe(d.flag_dst).name}"
            return f"{api}（{d.position} {msg('event.flag_' + ('data' if d.purpose == 'data' else 'free'), lang)}）"
        return msg("event.queue_op", lang, op=msg(f"event.q.{op.name.lower()}", lang), pos=d.position, slot=d.slot)
    return name


__all__ = ("event_name",)
