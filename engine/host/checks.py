"""The checks every host call makes of its state and arguments, and the planning of a copy from its
pointers: each failure an :class:`~engine.host.acl_codes.AclError` with the real ACL code and the message in
English and Chinese. A mixin of :class:`~engine.simulation.Simulation` (it uses its state, runtime and memories).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import numpy as np

from ..device.copy_engine import D2D, D2H, H2D, H2H
from ..device.memory import Allocation
from ..device.runtime import CopyPlan
from ..device.stream import AclEvent, Stream
from ..trace.findings import event_zh, stream_zh, where_zh
from . import acl_codes as C
from .acl import EVENT_HANDLE_BASE, STREAM_HANDLE_BASE
from .acl_codes import AclError


class HostChecks:
    # -- state checks ---------------------------------------------------------------------------
    def require_init(self) -> None:
        if not self.state.initialized:
            raise AclError(C.ACL_ERROR_UNINITIALIZE, "call acl.init() first", "请先调用 acl.init()")

    def require_device(self) -> None:
        self.require_init()
        if self.state.device is None:
            raise AclError(
                C.ACL_ERROR_RT_CONTEXT_NULL,
                "no current context: call acl.rt.set_device(0) first",
                "没有当前上下文：请先调用 acl.rt.set_device(0)",
            )

    def stream(self, handle: Any, what: str, allow_default: bool = True) -> Stream:
        if handle in (None, 0):
            if not allow_default:
                raise AclError(
                    C.ACL_ERROR_INVALID_PARAM,
                    f"{what}: the default stream cannot be used here",
                    f"{what}: 此处不能使用默认流",
                )
            return self.state.default_stream
        stream = self.runtime.streams.get(handle - STREAM_HANDLE_BASE) if isinstance(handle, int) else None
        if stream is None:
            raise AclError(
                C.ACL_ERROR_INVALID_RESOURCE_HANDLE,
                f"{what}: {handle!r} is not a stream handle",
                f"{what}: {handle!r} 不是流句柄",
            )
        if stream.closed:
            raise AclError(
                C.ACL_ERROR_INVALID_RESOURCE_HANDLE,
                f"{what}: {stream.label} was destroyed (created at {stream.created_src})",
                f"{what}: {stream_zh(stream.ident)} 已被销毁（创建于 {stream.created_src}）",
            )
        return stream

    def event(self, handle: Any, what: str) -> AclEvent:
        event = self.runtime.events.get(handle - EVENT_HANDLE_BASE) if isinstance(handle, int) else None
        if event is None:
            raise AclError(
                C.ACL_ERROR_INVALID_RESOURCE_HANDLE,
                f"{what}: {handle!r} is not an event handle",
                f"{what}: {handle!r} 不是事件句柄",
            )
        if event.destroyed:
            raise AclError(
                C.ACL_ERROR_INVALID_RESOURCE_HANDLE,
                f"{what}: {event.label} was destroyed",
                f"{what}: {event_zh(event.ident)} 已被销毁",
            )
        return event

    # -- copies ---------------------------------------------------------------------------------
    def _host_side(self, ptr: Any, count: int, what: str) -> tuple[Allocation, int, Any] | None:
        if isinstance(ptr, np.ndarray):
            alloc = self.hostmem.register(ptr, self.caller_src_text())
            return (*self.hostmem.pageable.resolve(alloc.ptr, count, what), self.hostmem)
        if not isinstance(ptr, int | np.integer):
            raise AclError(
                C.ACL_ERROR_INVALID_PARAM,
                f"{what}: expected a pointer (int) or numpy array, got {type(ptr).__name__}",
                f"{what}: 需要指针（int）或 numpy 数组，实际为 {type(ptr).__name__}",
            )
        space = self.hostmem.find_space(int(ptr))
        if space is None:
            return None
        return (*space.resolve(int(ptr), count, what), self.hostmem)

    def _device_side(self, ptr: Any, count: int, what: str) -> tuple[Allocation, int, Any] | None:
        if not isinstance(ptr, int | np.integer) or self.devmem.space.find(int(ptr)) is None:
            return None
        return (*self.devmem.space.resolve(int(ptr), count, what), self.devmem)

    def plan_copy(self, dst: Any, dst_max: int, src: Any, count: int, kind: int, what: str):
        if not isinstance(count, int | np.integer) or count <= 0:
            raise AclError(
                C.ACL_ERROR_INVALID_PARAM,
                f"{what}: count must be a positive integer, got {count!r}",
                f"{what}: count 必须是正整数，实际为 {count!r}",
            )
        if not isinstance(dst_max, int | np.integer) or count > dst_max:
            raise AclError(
                C.ACL_ERROR_INVALID_PARAM,
                f"{what}: count {count} exceeds dst_max {dst_max}",
                f"{what}: count {count} 超过了 dst_max {dst_max}",
            )
        if kind not in C.MEMCPY_KIND_NAMES:
            raise AclError(
                C.ACL_ERROR_INVALID_PARAM,
                f"{what}: kind must be an ACL_MEMCPY_* value (0..4), got {kind!r}",
                f"{what}: kind 必须是 ACL_MEMCPY_* 之一（0..4），实际为 {kind!r}",
            )
        d_dev = self._device_side(dst, count, f"{what} dst")
        s_dev = self._device_side(src, count, f"{what} src")
        d = d_dev or self._host_side(dst, count, f"{what} dst")
        s = s_dev or self._host_side(src, count, f"{what} src")
        for side, name, ptr in ((d, "dst", dst), (s, "src", src)):
            if side is None:
                p = f"0x{int(ptr):x}" if isinstance(ptr, int | np.integer) else repr(ptr)
                raise AclError(
                    C.ACL_ERROR_INVALID_PARAM,
                    f"{what}: {name} {p} is not in any allocation",
                    f"{what}: {name} {p} 不在任何已分配的内存中",
                )
        actual = {(True, False): H2D, (False, True): D2H, (True, True): D2D, (False, False): H2H}[
            (d_dev is not None, s_dev is not None)
        ]
        expected = _KIND_DIRECTION.get(kind)
        if expected is not None and expected != actual:
            raise AclError(
                C.ACL_ERROR_INVALID_PARAM,
                f"{what}: kind {C.MEMCPY_KIND_NAMES[kind]} does not match the pointers "
                f"(dst is {d[0].where} memory, src is {s[0].where} memory)",
                f"{what}: kind {C.MEMCPY_KIND_NAMES[kind]} 与指针不符"
                f"（dst 是{where_zh(d[0].where)}内存，src 是{where_zh(s[0].where)}内存）",
            )
        host_alloc = d[0] if actual == D2H else s[0]
        pinned = actual in (D2D, H2H) or host_alloc.where == "pinned"
        d_alloc, d_off, d_mem = d
        s_alloc, s_off, s_mem = s
        plan = CopyPlan(actual, pinned, int(count), (s_mem, s_alloc, s_off), (d_mem, d_alloc, d_off))
        return plan, (d_alloc, d_off), (s_alloc, s_off)


_KIND_DIRECTION = MappingProxyType(
    {
        C.ACL_MEMCPY_HOST_TO_DEVICE: H2D,
        C.ACL_MEMCPY_DEVICE_TO_HOST: D2H,
        C.ACL_MEMCPY_DEVICE_TO_DEVICE: D2D,
        C.ACL_MEMCPY_HOST_TO_HOST: H2H,
    }
)
