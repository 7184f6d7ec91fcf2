"""``TPipe``, ``TQue`` and ``TBuf``: on-chip memory management and the synchronisation it implies.

``pipe.init_buffer(que, num, len)`` carves ``num`` slots of ``len`` bytes (rounded up to the
buffer's granularity) out of the queue's buffer; asking for more than the buffer holds is an
error naming the buffer, its capacity, what is taken and what was asked.

A ``TQue`` at a position has a producer pipe and a consumer pipe (ADK):

=========  ========  ========
position   producer  consumer
=========  ========  ========
VECIN      MTE2      V
VECOUT     V         MTE3
A1, B1     MTE2      MTE1
A2, B2     MTE1      M
CO1        M         FIX (V on chips without a FIX pipe)
CO2        FIX       MTE3
=========  ========  ========

``enque`` sets the producer->consumer flag of the tensor's slot (e.g. GM->VECIN ``enque`` is
``MTE2_V``); ``deque`` waits for it on the consumer; ``free_tensor`` sets consumer->producer;
``alloc_tensor`` of a slot that was freed waits for that. ``VECCALC`` queues and ``TBuf`` imply
no flags. Dequeueing an empty queue, or allocating when every slot is still in use, can never
complete (the block's code runs in order): it is reported as a deadlock, not left to hang.

Every one of these calls is one trace row with a :class:`~engine.trace.detail.QueueOp` detail (queue,
position, slot, byte offset and length): the flag row it implies, or, where it implies none (the
first ``alloc_tensor`` of a slot, ``init_buffer``, ``TBuf.get``, a ``VECCALC`` queue), a zero-cost
row of kind BUFFER. A replay rebuilds every slot's state from these rows alone.
"""

from __future__ import annotations

from collections import deque
from types import MappingProxyType

from ..host.acl_codes import ACL_ERROR_RT_AICORE_EXCEPTION
from ..trace import Kind
from ..trace.detail import NO_SLOT, QueueOp, QueueOpKind
from .context import KernelError
from .dispatch import KernelFault
from .pipes import LANE_NAMES, Pipe
from .program import NOTE, SET, WAIT
from .running import current
from .tensor import Buffer, DType, LocalTensor, TPosition, as_dtype

_ROUTES = MappingProxyType(
    {
        TPosition.VECIN: (Pipe.MTE2, Pipe.V),
        TPosition.VECOUT: (Pipe.V, Pipe.MTE3),
        TPosition.A1: (Pipe.MTE2, Pipe.MTE1),
        TPosition.B1: (Pipe.MTE2, Pipe.MTE1),
        TPosition.A2: (Pipe.MTE1, Pipe.M),
        TPosition.B2: (Pipe.MTE1, Pipe.M),
        TPosition.CO1: (Pipe.M, Pipe.FIX),
        TPosition.CO2: (Pipe.FIX, Pipe.MTE3),
    }
)

_FREE, _ALLOCATED, _ENQUEUED, _DEQUEUED = range(4)


def route(position: TPosition, has_fix: bool) -> tuple[Pipe, Pipe] | None:
    pair = _ROUTES.get(position)
    if pair is not None and not has_fix and Pipe.FIX in pair:
        pair = tuple(Pipe.V if p == Pipe.FIX else p for p in pair)
    return pair


class TPipe:
    """Owns the block's on-chip allocations (one per kernel invocation, as in Ascend C)."""

    def __init__(self) -> None:
        self._ctx = current()

    def init_buffer(self, que=None, num: int | None = None, len: int | None = None, buf=None) -> None:
        """``init_buffer(que, num, len)`` for a queue, or ``init_buffer(buf=tbuf, num=bytes)`` for a TBuf."""
        ctx = self._ctx
        if buf is not None:
            target, slots, length = buf, 1, num
        else:
            target, slots, length = que, num, len
        if target is None or slots is None or length is None:
            raise KernelError(
                ACL_ERROR_RT_AICORE_EXCEPTION,
                "init_buffer needs (que, num, len) or (buf=, num=)",
                "init_buffer 需要参数 (que, num, len) 或 (buf=, num=)",
            )
        if slots < 1 or length < 1:
            raise KernelError(
                ACL_ERROR_RT_AICORE_EXCEPTION,
                f"init_buffer: num and len must be >= 1, got num={slots} len={length}",
                f"init_buffer: num 和 len 必须 >= 1，实际为 num={slots} len={length}",
            )
        buffer = target.position.buffer
        capacity = ctx.capacity(buffer)
        if capacity == 0:
            raise KernelError(
                ACL_ERROR_RT_AICORE_EXCEPTION,
                f"init_buffer: {buffer.name} does not exist on {ctx.core.label} ({ctx.core_type} core); "
                f"{target.position.name} cannot be used in this kernel",
                f"init_buffer: {ctx.core.label}（{ctx.core_type} 核）上没有 {buffer.name}；"
                f"此核函数不能使用 {target.position.name}",
            )
        align = ctx.launch.granularity(buffer)
        length = (length + align - 1) // align * align
        need = slots * length
        taken = ctx.taken[buffer]
        if taken + need > capacity:
            held = ", ".join(ctx.owners[buffer])
            raise KernelError(
                ACL_ERROR_RT_AICORE_EXCEPTION,
                f"init_buffer: {buffer.name} holds {capacity} B; {taken} B are already taken ({held or 'nothing'}); "
                f"asked {slots} x {length} B = {need} B for a {target.position.name} "
                f"{type(target).__name__} ({taken + need - capacity} B too many)",
                f"init_buffer: {buffer.name} 容量为 {capacity} B，已占用 {taken} B（{held or '无'}）；"
                f"为 {target.position.name} {type(target).__name__} 申请 {slots} x {length} B = {need} B"
                f"（超出 {taken + need - capacity} B）",
            )
        target._bind(ctx, taken, slots, length)
        ctx.taken[buffer] = taken + need
        ctx.owners[buffer].append(f"{target.position.name} {type(target).__name__}: {slots} x {length} B")
        name = target.position.name
        init = QueueOp(QueueOpKind.INIT, target.ident, name, buffer.value, NO_SLOT, taken, length, slots)
        init = init._replace(container=type(target).__name__)
        ctx.emit(Pipe.S, NOTE, 0, 0.0, -1, 0, f"init_buffer {target.position.name}", Kind.BUFFER, init)

    def init(self) -> None:
        """Ascend C's ``TPipe::Init``: nothing to do here."""

    def reset(self) -> None:
        """Release every allocation of this pipe (``TPipe::Reset``)."""
        ctx = self._ctx
        for b in Buffer:
            ctx.taken[b] = 0
            ctx.owners[b] = []

    destroy = reset


class TQue:
    """A queue of ``num`` tensors at one position, with the flags the hardware needs."""

    def __init__(self, position: TPosition, depth: int = 1) -> None:
        if not isinstance(position, TPosition):
            raise TypeError(f"TQue needs a TPosition, got {position!r}")
        self.position = position
        self.depth = depth
        self._ctx = None
        self._base = 0
        self._num = 0
        self._len = 0
        self._state: list[int] = []
        self._freed: list[bool] = []
        self._queue: deque[LocalTensor] = deque()
        self._next = 0
        self.ident = -1
        self._rows: dict[tuple, tuple] = {}  # (op, slot, flag, what) -> the arguments of its emit
        self._routed: tuple[Pipe, Pipe] | None = None  # (producer, consumer) pipes, once bound

    def _bind(self, ctx, base: int, num: int, length: int) -> None:
        self._ctx = ctx
        self._rows = {}
        self._routed = route(self.position, ctx.launch.has_fix)
        self._base = base
        self._num = num
        self._len = length
        self._state = [_FREE] * num
        self._freed = [False] * num
        self._queue.clear()
        self._next = 0
        self.ident = ctx.queue_count
        ctx.queue_count += 1

    def slot_state(self) -> tuple:
        """What decides the instructions this queue's next calls issue: its next slot and each slot's state.
        A fast path compares it at a step boundary (no tensor may be enqueued there) and restores it
        (:meth:`set_slot_state`) when it stamps a step instead of running it."""
        if self._queue:
            raise ValueError("slot_state: a step boundary with tensors still enqueued")
        return (self._next, tuple(self._freed), tuple(self._state))

    def set_slot_state(self, state: tuple) -> None:
        """Put the queue in a state :meth:`slot_state` gave (a stamped step's exit state)."""
        nxt, freed, slots = state
        self._next = nxt
        self._freed = list(freed)
        self._state = list(slots)

    def _check_bound(self, what: str) -> None:
        if self._ctx is None:
            raise KernelError(
                ACL_ERROR_RT_AICORE_EXCEPTION,
                f"{what} on a {self.position.name} TQue before init_buffer",
                f"在 init_buffer 之前对 {self.position.name} TQue 调用了 {what}",
            )

    def _record(self, op: QueueOpKind, slot: int, flag: int | None, what: str = "") -> None:
        """One row for a queue call: the hardware flag it implies (``flag`` is SET or WAIT), or a BUFFER note."""
        row = self._rows.get((op, slot, flag, what))
        if row is None:
            row = self._rows[(op, slot, flag, what)] = self._row(op, slot, flag, what)
        pipe, opcode, key, name, kind, detail = row
        self._ctx.emit(pipe, opcode, 0, 0.0, key, 0, name, kind, detail)

    def _row(self, op: QueueOpKind, slot: int, flag: int | None, what: str) -> tuple:
        """What a queue call emits (the same every time in a bound queue, so :meth:`_record` keeps it)."""
        r = self._routed
        offset = self._base + slot * self._len
        position = self.position.name
        buf = self.position.buffer.value
        if flag is None:
            pipe = Pipe.S if r is None else (r[0] if op in (QueueOpKind.ALLOC, QueueOpKind.ENQUE) else r[1])
            detail = QueueOp(op, self.ident, position, buf, slot, offset, self._len)
            return pipe, NOTE, -1, f"{op.name.lower()} {position} slot {slot}", Kind.BUFFER, detail
        src, dst = (r[0], r[1]) if what == "data" else (r[1], r[0])
        key = self._ctx.launch.flag_key(src, dst, ("que", self.ident, slot, what))
        purpose = "data" if what == "data" else "free slot"
        name = f"{'set_flag' if flag == SET else 'wait_flag'} {src.name}_{dst.name} ({position} {purpose})"
        detail = QueueOp(op, self.ident, position, buf, slot, offset, self._len, 1, int(src), int(dst), what)
        kind = Kind.FLAG_SET if flag == SET else Kind.FLAG_WAIT
        return (src if flag == SET else dst), flag, key, name, kind, detail

    def alloc_tensor(self, dtype: DType | None = None, shape: tuple[int, int] | None = None) -> LocalTensor:
        self._check_bound("alloc_tensor")
        dtype = as_dtype(dtype or "float16")
        slot = None
        for k in range(self._num):
            cand = (self._next + k) % self._num
            if self._state[cand] == _FREE:
                slot = cand
                break
        if slot is None:
            raise KernelFault(
                0,
                "deadlock",
                f"alloc_tensor on a {self.position.name} TQue of {self._num} slot(s) while every slot is still "
                f"in use (allocated or queued, never freed): the block's code runs in order, so no free_tensor "
                f"can come before this call returns ({self._ctx.src()[1]})",
                f"在 {self.position.name} TQue 的 {self._num} 个槽位都仍被占用（已分配或已入队，从未释放）时调用了 "
                f"alloc_tensor：块的代码按顺序执行，所以在这次调用返回之前不可能执行任何 free_tensor"
                f"（{self._ctx.src()[1]}）",
            )
        self._next = (slot + 1) % self._num
        if self._routed is not None and self._freed[slot]:  # the producer waits for the consumer's free
            self._record(QueueOpKind.ALLOC, slot, WAIT, "free")
        else:
            self._record(QueueOpKind.ALLOC, slot, None)
        self._state[slot] = _ALLOCATED
        t = LocalTensor(self.position, self._base + slot * self._len, dtype, self._len // dtype.sizeof(), slot, self)
        if shape is not None:
            t = t.reshape(*shape)
        return t

    def enque(self, tensor: LocalTensor) -> bool:
        self._check_bound("enque")
        self._owned(tensor, "enque")
        if self._state[tensor.slot] != _ALLOCATED:
            raise KernelError(
                ACL_ERROR_RT_AICORE_EXCEPTION,
                f"enque of a {self.position.name} tensor that is not allocated",
                f"对一个未分配的 {self.position.name} 张量调用了 enque",
            )
        routed = self._routed is not None
        self._record(QueueOpKind.ENQUE, tensor.slot, SET if routed else None, "data")
        self._state[tensor.slot] = _ENQUEUED
        self._queue.append(tensor)
        return True

    def deque(self, dtype: DType | None = None) -> LocalTensor:
        self._check_bound("deque")
        if not self._queue:
            consumer = self._routed
            pipe = LANE_NAMES[consumer[1]] if consumer else "the consumer pipe"
            pipe_zh = LANE_NAMES[consumer[1]] if consumer else "消费方流水线"
            raise KernelFault(
                0,
                "deadlock",
                f"deque on a {self.position.name} TQue with nothing enqueued ({self._ctx.src()[1]}): {pipe} would "
                "wait forever, because the block's code runs in order and nothing can enqueue before this returns",
                f"对一个没有任何已入队张量的 {self.position.name} TQue 调用了 deque（{self._ctx.src()[1]}）："
                f"{pipe_zh} 将永远等待，因为块的代码按顺序执行，在这次调用返回之前不可能有任何 enque",
            )
        tensor = self._queue.popleft()
        routed = self._routed is not None
        self._record(QueueOpKind.DEQUE, tensor.slot, WAIT if routed else None, "data")
        self._state[tensor.slot] = _DEQUEUED
        if dtype is not None and as_dtype(dtype) != tensor.dtype:
            out = LocalTensor(
                tensor.position,
                tensor.offset,
                as_dtype(dtype),
                tensor.nbytes // as_dtype(dtype).sizeof(),
                tensor.slot,
                self,
            )
            out.shape = None
            return out
        return tensor

    def free_tensor(self, tensor: LocalTensor) -> None:
        self._check_bound("free_tensor")
        self._owned(tensor, "free_tensor")
        if self._state[tensor.slot] == _FREE:
            raise KernelError(
                ACL_ERROR_RT_AICORE_EXCEPTION,
                f"free_tensor of a {self.position.name} tensor that is already free",
                f"对一个已经释放的 {self.position.name} 张量调用了 free_tensor",
            )
        if self._routed is not None and self._state[tensor.slot] == _DEQUEUED:
            self._record(QueueOpKind.FREE, tensor.slot, SET, "free")
            self._freed[tensor.slot] = True
        else:
            self._record(QueueOpKind.FREE, tensor.slot, None)
        self._state[tensor.slot] = _FREE

    def has_tensor_in_que(self) -> bool:
        return bool(self._queue)

    def _owned(self, tensor: LocalTensor, what: str) -> None:
        if tensor.owner is not self:
            raise KernelError(
                ACL_ERROR_RT_AICORE_EXCEPTION,
                f"{what}: the tensor does not belong to this queue",
                f"{what}: 该张量不属于这个队列",
            )


class TBuf:
    """Temporary buffer space at a position (no flags)."""

    def __init__(self, position: TPosition = TPosition.VECCALC) -> None:
        self.position = position
        self._ctx = None
        self._base = 0
        self._len = 0
        self.ident = -1

    def _bind(self, ctx, base: int, num: int, length: int) -> None:
        self._ctx = ctx
        self._base = base
        self._len = length
        self.ident = ctx.queue_count
        ctx.queue_count += 1

    def get(self, dtype: DType | None = None, count: int | None = None) -> LocalTensor:
        if self._ctx is None:
            raise KernelError(
                ACL_ERROR_RT_AICORE_EXCEPTION, "TBuf.get before init_buffer", "在 init_buffer 之前调用了 TBuf.get"
            )
        dtype = as_dtype(dtype or "float16")
        n = self._len // dtype.sizeof() if count is None else count
        buf = self.position.buffer.value
        detail = QueueOp(QueueOpKind.GET, self.ident, self.position.name, buf, NO_SLOT, self._base, self._len)
        detail = detail._replace(container="TBuf")
        self._ctx.emit(Pipe.S, NOTE, 0, 0.0, -1, 0, f"get {self.position.name}", Kind.BUFFER, detail)
        return LocalTensor(self.position, self._base, dtype, n, NO_SLOT, self)
