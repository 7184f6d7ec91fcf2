"""Synchronisation and identity, pyasc-shaped: ``SetFlag``/``WaitFlag`` between the pipes of one core,
``PipeBarrier``, the cross-core flags of a mixed kernel, ``GetBlockIdx`` and its kin, scalar work and marks.
Flags and barriers cost ``flag_cycles``."""

from __future__ import annotations

from ..trace import Kind
from ..trace.detail import CrossFlag, Flag, Mark
from .context import BlockContext
from .operands import fail
from .pipes import HardEvent, Pipe, PipeID
from .program import BARRIER, LOCAL, NOTE, SET, WAIT, XSET, XWAIT
from .running import current


# -- synchronisation ----------------------------------------------------------------------------
def _event_key(ctx: BlockContext, event: HardEvent, event_id: int, what: str) -> int:
    limit = ctx.launch.flag_ids
    if not isinstance(event, HardEvent):
        fail(
            f"{what}: event must be an asc.HardEvent, got {event!r}",
            f"{what}: event 必须是 asc.HardEvent，实际为 {event!r}",
        )
    if not isinstance(event_id, int) or not 0 <= event_id < limit:
        fail(
            f"{what}: event_id must be 0..{limit - 1}, got {event_id!r}",
            f"{what}: event_id 必须在 0..{limit - 1} 之间，实际为 {event_id!r}",
        )
    return ctx.launch.flag_key(event.src, event.dst, ("id", event_id))


def set_flag(event: HardEvent, event_id: int = 0) -> None:
    """``SetFlag<SRC_DST>``: fires on the SRC pipe once its earlier work is done."""
    ctx = current()
    key = _event_key(ctx, event, event_id, "set_flag")
    flag = Flag(int(event.src), int(event.dst), event_id)
    ctx.emit(event.src, SET, 0, 0.0, key, 0, f"set_flag {event.name}", Kind.FLAG_SET, flag)


def wait_flag(event: HardEvent, event_id: int = 0) -> None:
    """``WaitFlag<SRC_DST>``: holds the DST pipe until the matching set_flag fired."""
    ctx = current()
    key = _event_key(ctx, event, event_id, "wait_flag")
    flag = Flag(int(event.src), int(event.dst), event_id)
    ctx.emit(event.dst, WAIT, 0, 0.0, key, 0, f"wait_flag {event.name}", Kind.FLAG_WAIT, flag)


def pipe_barrier(pipe: PipeID = PipeID.PIPE_ALL) -> None:
    """``PipeBarrier``: PIPE_ALL drains every pipe; one pipe's barrier orders only that (in-order) pipe."""
    ctx = current()
    if pipe == PipeID.PIPE_ALL:
        ctx.emit(Pipe.S, BARRIER, 0, 0.0, -1, 0, "pipe_barrier PIPE_ALL", Kind.BARRIER)
    else:
        ctx.emit(pipe.value, LOCAL, ctx.launch.flag_ps, 0.0, -1, 0, f"pipe_barrier {pipe.name}", Kind.BARRIER)


def _cross_flag(what: str, flag_id: int, mode: int) -> BlockContext:
    ctx = current()
    if ctx.group is None:
        fail(
            f"{what}: cross-core flags synchronise the AIC and AIVs of a mixed kernel; {ctx.launch.name} is "
            f"{ctx.launch.core_type}-only (launch it with kernel_type=asc.KernelType.MIX_AIC_1_2)",
            f"{what}: 跨核 flag 用于同步混合核函数的 AIC 与 AIV；{ctx.launch.name} 只用 {ctx.launch.core_type} 核"
            f"（请以 kernel_type=asc.KernelType.MIX_AIC_1_2 启动）",
        )
    if mode != 2:
        fail(
            f"{what}: mode {mode!r} is not modelled; mode 2 (AIC <-> AIV of one AI core) is",
            f"{what}: 未模拟 mode {mode!r}；只模拟 mode 2（同一 AI Core 的 AIC <-> AIV）",
        )
    limit = ctx.launch.cross_flag_ids
    if not isinstance(flag_id, int) or not 0 <= flag_id < limit:
        fail(
            f"{what}: flag_id must be 0..{limit - 1}, got {flag_id!r}",
            f"{what}: flag_id 必须在 0..{limit - 1} 之间，实际为 {flag_id!r}",
        )
    return ctx


def cross_core_set_flag(flag_id: int, mode: int = 2, pipe: PipeID = PipeID.PIPE_FIX) -> None:
    """``CrossCoreSetFlag<mode, pipe>(flagId)``: once ``pipe``'s earlier work is done, signal the other side.

    On the AIC it reaches both AIVs of the group; on an AIV it reaches the AIC. ``pipe`` defaults to
    FIX on the AIC (its results leave through the fixpipe) and is MTE3 on an AIV by default.
    """
    ctx = _cross_flag("cross_core_set_flag", flag_id, mode)
    if pipe == PipeID.PIPE_FIX and ctx.core_type == "aiv":
        pipe = PipeID.PIPE_MTE3
    if pipe == PipeID.PIPE_ALL:
        fail(
            "cross_core_set_flag: pipe must be one pipe (PIPE_S, PIPE_FIX, PIPE_MTE3, ...), not PIPE_ALL",
            "cross_core_set_flag: pipe 必须是单条流水线（PIPE_S、PIPE_FIX、PIPE_MTE3 ...），不能是 PIPE_ALL",
        )
    detail = CrossFlag(flag_id, mode)
    ctx.emit(pipe.value, XSET, 0, 0.0, flag_id, 0, f"cross_core_set_flag {flag_id}", Kind.FLAG_SET, detail)
    ctx.group.cross_set(ctx.role, flag_id)


def cross_core_wait_flag(flag_id: int, mode: int = 2, pipe: PipeID = PipeID.PIPE_S) -> None:
    """``CrossCoreWaitFlag(flagId)``: every later instruction of this core waits until the other side set it.

    The AIC's wait takes one set from each of its two AIVs; an AIV's wait takes one set of the AIC.
    """
    ctx = _cross_flag("cross_core_wait_flag", flag_id, mode)
    if pipe == PipeID.PIPE_ALL:
        fail(
            "cross_core_wait_flag: pipe must be one pipe (PIPE_S, PIPE_V, ...), not PIPE_ALL",
            "cross_core_wait_flag: pipe 必须是单条流水线（PIPE_S、PIPE_V ...），不能是 PIPE_ALL",
        )
    name = f"cross_core_wait_flag {flag_id}"
    where = ctx.emit(pipe.value, XWAIT, 0, 0.0, flag_id, 0, name, Kind.FLAG_WAIT, CrossFlag(flag_id, mode))
    ctx.group.cross_wait(ctx.role, flag_id, where)


# -- block identity -----------------------------------------------------------------------------
def get_block_idx() -> int:
    return current().block_idx


def get_block_num() -> int:
    return current().block_num


def get_subblockidx() -> int:
    """``GetSubBlockIdx()``: which AIV of its group (0 or 1) this core is; 0 on the AIC and outside mixed kernels."""
    ctx = current()
    return ctx.role - 1 if ctx.role else 0


def ascend_is_aic() -> bool:
    return current().core_type in ("aic", "coupled")


def ascend_is_aiv() -> bool:
    return current().core_type in ("aiv", "coupled")


def scalar_work(cycles: int, name: str = "scalar") -> None:
    """Account ``cycles`` of scalar-unit work (address arithmetic, loop control) on the S pipe."""
    ctx = current()
    ctx.emit(Pipe.S, LOCAL, ctx.launch.ps(cycles), 0.0, -1, 0, name, Kind.COMPUTE)


def mark(label: str) -> None:
    """A user's mark in the kernel (a trace row on the scalar pipe, no cost): the replay can stop at it."""
    ctx = current()
    ctx.emit(Pipe.S, NOTE, 0, 0.0, -1, 0, f"mark {label}", Kind.MARK, Mark(str(label)))
