"""The host API, shaped like pyACL (Huawei's Python ACL): ``acl.init()``, ``acl.rt.malloc(...)`` ...

Calls return what pyACL returns — ``ret`` or ``(value, ret)`` with the real ACL codes — and cost
host time from the profile. Async calls return once the task is queued; blocking calls advance the
host clock to the moment their condition holds and the trace shows the host waiting. A failed call
also becomes a finding with a message naming what was wrong (with ``Simulation(strict=True)`` it
raises :class:`~engine.host.acl_codes.AclError` instead).

Pointers are integers, as in pyACL. Host memory is either pinned (``acl.rt.malloc_host``) or a plain
numpy array (pageable), passed directly or through ``acl.util.numpy_to_ptr``. A pageable async copy
blocks the host until it is done, as CUDA documents for pageable memory (ACL requires pinned memory
for truly asynchronous copies).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..device.copy_engine import D2H, H2D, H2H
from ..device.op_matmul import OpMatmul
from ..device.stream import TaskKind
from ..trace.detail import HostWait
from ..trace.findings import event_zh, stream_zh
from . import acl_codes as C
from .acl_codes import AclError
from .aclnn import Nn

if TYPE_CHECKING:
    from ..simulation import Simulation

STREAM_HANDLE_BASE = 0x5A00_0000
EVENT_HANDLE_BASE = 0x5E00_0000


class Acl:
    """``acl``: the top-level module of pyACL, bound to one simulation."""

    def __init__(self, sim: Simulation) -> None:
        self._sim = sim
        self.rt = Rt(sim)
        self.util = Util(sim)
        self.op = Op(sim)
        self.nn = Nn(sim)

    def init(self, config_path: str | None = None) -> int:
        sim = self._sim
        with sim.api("acl.init", sim.profile.host.init_us) as call:
            if sim.state.initialized:
                raise AclError(
                    C.ACL_ERROR_REPEAT_INITIALIZE,
                    "acl.init called twice without acl.finalize",
                    "acl.init 被调用了两次，中间没有 acl.finalize",
                )
            sim.state.initialized = True
        return call.ret

    def finalize(self) -> int:
        sim = self._sim
        with sim.api("acl.finalize", sim.profile.host.api_call_us) as call:
            if not sim.state.initialized:
                code = C.ACL_ERROR_REPEAT_FINALIZE if sim.state.finalized else C.ACL_ERROR_UNINITIALIZE
                raise AclError(
                    code,
                    "acl.finalize called without a matching acl.init",
                    "调用 acl.finalize 前没有与之对应的 acl.init",
                )
            if sim.state.device is not None:
                sim.rt_reset_device()
            sim.state.initialized = False
            sim.state.finalized = True
        return call.ret


class Rt:
    """``acl.rt``: devices, streams, memory, copies, events, kernel launch."""

    def __init__(self, sim: Simulation) -> None:
        self._sim = sim

    # -- device ---------------------------------------------------------------------------------
    def set_device(self, device_id: int) -> int:
        sim = self._sim
        with sim.api("acl.rt.set_device", sim.profile.host.set_device_us) as call:
            sim.require_init()
            if device_id != 0:
                raise AclError(
                    C.ACL_ERROR_RT_INVALID_DEVICEID,
                    f"set_device: device_id must be 0 (one device simulated), got {device_id!r}",
                    f"set_device: device_id 必须为 0（只模拟一个设备），实际为 {device_id!r}",
                )
            if sim.state.device is None:
                sim.state.device = 0
                sim.state.default_stream = sim.runtime.new_stream(0, call.src_text)
        return call.ret

    def reset_device(self, device_id: int) -> int:
        sim = self._sim
        with sim.api("acl.rt.reset_device", sim.profile.host.api_call_us) as call:
            sim.require_init()
            if device_id != 0 or sim.state.device is None:
                raise AclError(
                    C.ACL_ERROR_RT_INVALID_DEVICEID,
                    f"reset_device: device {device_id!r} was not set with set_device",
                    f"reset_device: 设备 {device_id!r} 没有用 set_device 设置过",
                )
            sim.rt_reset_device()
        return call.ret

    # -- streams --------------------------------------------------------------------------------
    def create_stream(self) -> tuple[int, int]:
        return self.create_stream_with_config(0, 0)

    def create_stream_with_config(self, priority: int, flag: int) -> tuple[int, int]:
        sim = self._sim
        handle = 0
        with sim.api("acl.rt.create_stream", sim.profile.host.api_call_us) as call:
            sim.require_device()
            if not isinstance(priority, int) or not 0 <= priority <= 7:
                raise AclError(
                    C.ACL_ERROR_INVALID_PARAM,
                    f"create_stream: priority must be 0..7 (0 highest), got {priority!r}",
                    f"create_stream: priority 必须在 0..7 之间（0 最高），实际为 {priority!r}",
                )
            live = sum(1 for s in sim.runtime.streams.values() if not s.closed)
            if live >= sim.profile.limits.max_streams:
                raise AclError(
                    C.ACL_ERROR_RT_NO_STREAM_RESOURCE,
                    f"create_stream: {live} streams exist, the limit is {sim.profile.limits.max_streams}",
                    f"create_stream: 已有 {live} 个流，上限为 {sim.profile.limits.max_streams}",
                )
            stream = sim.runtime.new_stream(priority, call.src_text)
            handle = STREAM_HANDLE_BASE + stream.ident
        return handle, call.ret

    def destroy_stream(self, stream: int) -> int:
        sim = self._sim
        with sim.api("acl.rt.destroy_stream", sim.profile.host.api_call_us) as call:
            s = sim.stream(stream, "destroy_stream", allow_default=False)
            last = s.last_task()
            if last >= 0 and not sim.runtime.seen_ended(last):  # the runtime finishes the stream's work first
                sim.host_block_until(
                    [last],
                    f"{s.label} to finish",
                    call,
                    on=HostWait("stream", s.ident),
                    what_zh=f"{stream_zh(s.ident)} 执行完毕",
                )
                sim.runtime.host_learns(s.vc)
            s.closed = True
        return call.ret

    # -- memory ---------------------------------------------------------------------------------
    def malloc(self, size: int, policy: int) -> tuple[int, int]:
        sim = self._sim
        ptr = 0
        with sim.api("acl.rt.malloc", sim.profile.host.malloc_us) as call:
            sim.require_device()
            ptr = sim.devmem.malloc(size, policy, call.src_text).ptr
        return ptr, call.ret

    def free(self, ptr: int) -> int:
        sim = self._sim
        with sim.api("acl.rt.free", sim.profile.host.free_us) as call:
            sim.require_device()
            sim.devmem.free(ptr, call.src_text)
        return call.ret

    def malloc_host(self, size: int) -> tuple[int, int]:
        sim = self._sim
        ptr = 0
        with sim.api("acl.rt.malloc_host", sim.profile.host.malloc_us) as call:
            sim.require_init()
            ptr = sim.hostmem.malloc_host(size, call.src_text).ptr
        return ptr, call.ret

    def free_host(self, ptr: int) -> int:
        sim = self._sim
        with sim.api("acl.rt.free_host", sim.profile.host.free_us) as call:
            sim.require_init()
            sim.hostmem.free_host(ptr, call.src_text)
        return call.ret

    def memset(self, dev_ptr: int, max_count: int, value: int, count: int) -> int:
        sim = self._sim
        with sim.api("acl.rt.memset", sim.profile.host.memcpy_call_us) as call:
            sim.require_device()
            if count > max_count:
                raise AclError(
                    C.ACL_ERROR_INVALID_PARAM,
                    f"memset: count {count} exceeds max_count {max_count}",
                    f"memset: count {count} 超过了 max_count {max_count}",
                )
            alloc, off = sim.devmem.space.resolve(dev_ptr, count, "memset")
            if sim.numerics:
                sim.devmem.view(alloc)[off : off + count] = value & 0xFF
        return call.ret

    # -- copies ---------------------------------------------------------------------------------
    def memcpy(self, dst: Any, dst_max: int, src: Any, count: int, kind: int) -> int:
        sim = self._sim
        with sim.api("acl.rt.memcpy", sim.profile.host.memcpy_call_us) as call:
            sim.require_device()
            plan, dst_alloc, src_alloc = sim.plan_copy(dst, dst_max, src, count, kind, "memcpy")
            if plan.direction == H2H:
                sim.host_copy(plan, call)
            else:
                task = sim.enqueue_copy(plan, dst_alloc, src_alloc, sim.state.default_stream, call)
                sim.host_block_until(
                    [task], "the copy to finish", call, on=HostWait("copy", task + 1), what_zh="拷贝完成"
                )
                sim.runtime.host_learns(sim.runtime.task_vc(task))
        return call.ret

    def memcpy_async(self, dst: Any, dst_max: int, src: Any, count: int, kind: int, stream: int) -> int:
        sim = self._sim
        with sim.api("acl.rt.memcpy_async", sim.profile.host.memcpy_call_us) as call:
            sim.require_device()
            s = sim.stream(stream, "memcpy_async")
            plan, dst_alloc, src_alloc = sim.plan_copy(dst, dst_max, src, count, kind, "memcpy_async")
            if plan.direction == H2H:
                sim.host_copy(plan, call)
            else:
                task = sim.enqueue_copy(plan, dst_alloc, src_alloc, s, call)
                if not plan.pinned and plan.direction in (H2D, D2H):
                    sim.host_block_until(
                        [task],
                        "a pageable copy (staged through a pinned buffer)",
                        call,
                        on=HostWait("pageable", task + 1),
                        what_zh="一次可分页内存拷贝（经锁页缓冲区中转）完成",
                    )
                    sim.runtime.host_learns(sim.runtime.task_vc(task))
        return call.ret

    # -- synchronisation ------------------------------------------------------------------------
    def synchronize_stream(self, stream: int) -> int:
        sim = self._sim
        with sim.api("acl.rt.synchronize_stream", sim.profile.host.sync_call_us, blocking=True) as call:
            sim.require_device()
            s = sim.stream(stream, "synchronize_stream")
            on = HostWait("stream", s.ident)
            last = [s.last_task()] if s.tasks else []
            sim.host_block_until(
                last, f"{s.label} to drain", call, on=on, what_zh=f"{stream_zh(s.ident)} 中的任务全部完成"
            )
            sim.runtime.host_learns(s.vc)
            sim.raise_stream_error(s, "synchronize_stream")
        return call.ret

    def synchronize_device(self) -> int:
        sim = self._sim
        with sim.api("acl.rt.synchronize_device", sim.profile.host.sync_call_us, blocking=True) as call:
            sim.require_device()
            sim.host_block_until(
                [s.last_task() for s in sim.runtime.streams.values() if s.tasks],
                "every stream to drain",
                call,
                C.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                on=HostWait("device"),
                what_zh="所有流中的任务全部完成",
            )
            for s in list(sim.runtime.streams.values()):
                sim.runtime.host_learns(s.vc)
                sim.raise_stream_error(s, "synchronize_device")
        return call.ret

    # -- events ---------------------------------------------------------------------------------
    def create_event(self) -> tuple[int, int]:
        sim = self._sim
        handle = 0
        with sim.api("acl.rt.create_event", sim.profile.host.api_call_us) as call:
            sim.require_device()
            live = sum(1 for e in sim.runtime.events.values() if not e.destroyed)
            if live >= sim.profile.limits.max_events:
                raise AclError(
                    C.ACL_ERROR_RT_NO_EVENT_RESOURCE,
                    f"create_event: {live} events exist, the limit is {sim.profile.limits.max_events}",
                    f"create_event: 已有 {live} 个事件，上限为 {sim.profile.limits.max_events}",
                )
            handle = EVENT_HANDLE_BASE + sim.runtime.new_event(call.src_text).ident
        return handle, call.ret

    def record_event(self, event: int, stream: int) -> int:
        sim = self._sim
        with sim.api("acl.rt.record_event", sim.profile.host.event_call_us) as call:
            sim.require_device()
            e = sim.event(event, "record_event")
            s = sim.stream(stream, "record_event")
            e.records_submitted += 1
            e.last_record_src = call.src_text
            plan = sim.runtime.event_plan(s, TaskKind.RECORD, e)
            sim.runtime.submit(s, plan, call.row, call.src, sim.host_now)
        return call.ret

    def stream_wait_event(self, stream: int, event: int) -> int:
        sim = self._sim
        with sim.api("acl.rt.stream_wait_event", sim.profile.host.event_call_us) as call:
            sim.require_device()
            s = sim.stream(stream, "stream_wait_event")
            e = sim.event(event, "stream_wait_event")
            plan = sim.runtime.event_plan(s, TaskKind.WAIT, e)
            # the most recent record submitted before this call, or the next one if none was
            sim.runtime.submit(s, plan, call.row, call.src, sim.host_now, target=max(e.records_submitted, 1))
        return call.ret

    def synchronize_event(self, event: int) -> int:
        sim = self._sim
        with sim.api("acl.rt.synchronize_event", sim.profile.host.sync_call_us, blocking=True) as call:
            sim.require_device()
            e = sim.event(event, "synchronize_event")
            target = max(e.records_submitted, 1)
            records = e.record_tasks[:target] if len(e.record_tasks) >= target else None  # None: never recorded
            sim.host_block_until(
                records,
                f"{e.label} to be recorded",
                call,
                C.ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
                on=HostWait("event", e.ident),
                what_zh=f"{event_zh(e.ident)} 被 record",
            )
            sim.runtime.host_learns(sim.runtime.task_vc(e.record_tasks[target - 1]))
        return call.ret

    def event_elapsed_time(self, start: int, end: int) -> tuple[float, int]:
        sim = self._sim
        ms = 0.0
        with sim.api("acl.rt.event_elapsed_time", sim.profile.host.api_call_us) as call:
            sim.require_device()
            e0 = sim.event(start, "event_elapsed_time")
            e1 = sim.event(end, "event_elapsed_time")
            sim.runtime.run_until_time(sim.host_now)
            for e in (e0, e1):
                if e.records_done == 0 or e.records_done < e.records_submitted:
                    raise AclError(
                        C.ACL_ERROR_INVALID_PARAM,
                        f"event_elapsed_time: {e.label} has not completed its last record yet; synchronize first",
                        f"event_elapsed_time: {e.label} 的最后一次 record 尚未完成，请先同步",
                    )
            ms = (e1.last_time - e0.last_time) / 1e9
        return ms, call.ret

    def destroy_event(self, event: int) -> int:
        sim = self._sim
        with sim.api("acl.rt.destroy_event", sim.profile.host.api_call_us) as call:
            e = sim.event(event, "destroy_event")
            e.destroyed = True
        return call.ret

    # -- kernels --------------------------------------------------------------------------------
    def launch_kernel(self, kernel: Any, block_dim: int, stream: int, *args: Any) -> int:
        """Queue ``kernel`` on ``stream`` with ``block_dim`` blocks (``aclrtLaunchKernel``).

        ``kernel`` is an ``@asc.jit`` function (its ``args`` are passed to every block) or an object
        implementing :class:`~engine.device.runtime.DeviceKernel`.
        """
        sim = self._sim
        with sim.api("acl.rt.launch_kernel", sim.profile.host.launch_call_us) as call:
            sim.require_device()
            s = sim.stream(stream, "launch_kernel")
            limit = sim.profile.limits.max_block_dim
            if not isinstance(block_dim, int) or not 1 <= block_dim <= limit:
                raise AclError(
                    C.ACL_ERROR_INVALID_PARAM,
                    f"launch_kernel: block_dim must be 1..{limit}, got {block_dim!r}",
                    f"launch_kernel: block_dim 必须在 1..{limit} 之间，实际为 {block_dim!r}",
                )
            if hasattr(kernel, "prepare"):
                kernel = kernel.prepare(sim, block_dim, args)
            else:
                kernel.block_dim = block_dim
            sim.enqueue_kernel(kernel, s, call)
        return call.ret


class Util:
    """``acl.util``: moving between numpy arrays and host pointers."""

    def __init__(self, sim: Simulation) -> None:
        self._sim = sim

    def numpy_to_ptr(self, array: np.ndarray) -> int:
        return self._sim.hostmem.register(array, self._sim.caller_src_text()).ptr

    def ptr_to_numpy(self, ptr: int, shape: tuple[int, ...] | int, dtype: Any) -> np.ndarray:
        """A numpy view of host memory at ``ptr`` (pinned or registered pageable)."""
        sim = self._sim
        dtype = np.dtype(dtype)
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        count = int(np.prod(shape)) * dtype.itemsize
        space = sim.hostmem.find_space(ptr)
        if space is None:
            on_device = bool(sim.devmem.space.find(ptr))
            where = "device memory, which the host cannot read" if on_device else "not host memory"
            where_zh = "位于设备内存，主机无法读取" if on_device else "不是主机内存"
            raise AclError(
                C.ACL_ERROR_INVALID_PARAM,
                f"ptr_to_numpy: 0x{ptr:x} is {where}",
                f"ptr_to_numpy: 地址 0x{ptr:x} {where_zh}",
            )
        alloc, off = space.resolve(ptr, count, "ptr_to_numpy")
        return sim.hostmem.view(alloc)[off : off + count].view(dtype).reshape(shape)


class Op:
    """``acl.op``: library operators (op level, costed by a roofline or a measured table)."""

    def __init__(self, sim: Simulation) -> None:
        self._sim = sim

    def matmul(self, a: int, b: int, c: int, m: int, n: int, k: int, stream: int, out_dtype: str = "fp16") -> int:
        """C[m, n] = A[m, k] @ B[k, n]: fp16 inputs, fp32 accumulation, fp16 or fp32 output."""
        sim = self._sim
        with sim.api("acl.op.matmul", sim.profile.host.launch_call_us) as call:
            sim.require_device()
            s = sim.stream(stream, "matmul")
            kernel = OpMatmul.plan(sim, a, b, c, m, n, k, out_dtype)
            sim.enqueue_kernel(kernel, s, call)
        return call.ret
