"""Device global memory (GM, the HBM) and host memory, as the ACL runtime hands them out.

``DeviceMemory`` follows ``aclrtMalloc``: start addresses aligned to the profile's ``malloc_align``,
sizes rounded up to ``malloc_round`` plus ``malloc_pad``, the profile's capacity enforced. Addresses
are never reused, so a pointer into a freed allocation is always recognised (use after free).

``HostMemory`` holds pinned buffers (``aclrtMallocHost``) and registered pageable numpy arrays.
Backing bytes are numpy arrays created on first touch; with numerics off they are never created.
Every failure raises :class:`~engine.host.acl_codes.AclError` with the real ACL code and a message.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

import numpy as np

from ..host.acl_codes import (
    ACL_ERROR_BAD_ALLOC,
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_MEMORY_ALLOCATION,
    ACL_ERROR_RT_MEMORY_FREE,
    MALLOC_POLICIES,
    AclError,
)
from ..trace.findings import where_zh

DEVICE_BASE = 0x12C0_0000_0000
HOST_PINNED_BASE = 0x7F00_0000_0000
HOST_PAGEABLE_BASE = 0x5500_0000_0000


def align_up(value: int, align: int) -> int:
    return (value + align - 1) // align * align


@dataclass(slots=True)
class Allocation:
    ident: int
    ptr: int
    size: int  # bytes the caller asked for
    reserved: int  # bytes actually reserved (rounded and padded)
    where: str  # "device", "pinned" or "pageable"
    src: str  # file:line of the allocating call
    freed_at: str = ""
    data: np.ndarray | None = field(default=None, repr=False)

    @property
    def live(self) -> bool:
        return not self.freed_at

    def label(self) -> str:
        return f"{self.where} allocation #{self.ident} at 0x{self.ptr:x} ({self.size} B, from {self.src})"

    def label_zh(self) -> str:
        return f"{where_zh(self.where)}分配 #{self.ident}（地址 0x{self.ptr:x}，{self.size} B，来自 {self.src}）"


class AddressSpace:
    """A set of allocations found by address (bisect over start addresses)."""

    def __init__(self, where: str) -> None:
        self.where = where
        self._starts: list[int] = []
        self._allocs: list[Allocation] = []
        self.by_ptr: dict[int, Allocation] = {}

    def add(self, alloc: Allocation) -> None:
        self._starts.append(alloc.ptr)
        self._allocs.append(alloc)
        self.by_ptr[alloc.ptr] = alloc

    def find(self, ptr: int) -> Allocation | None:
        i = bisect_right(self._starts, ptr) - 1
        if i < 0:
            return None
        alloc = self._allocs[i]
        if ptr < alloc.ptr + max(alloc.reserved, 1):
            return alloc
        return None

    def resolve(self, ptr: int, count: int, what: str) -> tuple[Allocation, int]:
        """Find the allocation holding ``[ptr, ptr + count)``; raise on a bad, freed or overrun range."""
        alloc = self.find(ptr)
        if alloc is None:
            raise AclError(
                ACL_ERROR_INVALID_PARAM,
                f"{what}: 0x{ptr:x} is not inside any {self.where} allocation",
                f"{what}: 0x{ptr:x} 不在任何{where_zh(self.where)}分配之内",
            )
        if not alloc.live:
            raise AclError(
                ACL_ERROR_INVALID_PARAM,
                f"{what}: use after free: 0x{ptr:x} is in {alloc.label()}, freed at {alloc.freed_at}",
                f"{what}: 释放后使用：0x{ptr:x} 位于{alloc.label_zh()}，该分配已在 {alloc.freed_at} 释放",
            )
        offset = ptr - alloc.ptr
        if offset + count > alloc.size:
            raise AclError(
                ACL_ERROR_INVALID_PARAM,
                f"{what}: {count} B at offset {offset} overruns {alloc.label()} "
                f"(limit {alloc.size - offset} B from this address)",
                f"{what}: 从偏移 {offset} 起的 {count} B 越过了{alloc.label_zh()}的末尾"
                f"（从该地址起最多 {alloc.size - offset} B）",
            )
        return alloc, offset

    def live(self) -> list[Allocation]:
        return [a for a in self._allocs if a.live]


class DeviceMemory:
    """GM of one device: allocation policy, capacity, bounds, and the bytes themselves."""

    def __init__(self, capacity: int, align: int, round_to: int, pad: int, numerics: bool) -> None:
        self.capacity = capacity
        self.align = align
        self.round_to = round_to
        self.pad = pad
        self.numerics = numerics
        self.space = AddressSpace("device")
        self.used = 0
        self.peak = 0
        self._next = DEVICE_BASE
        self._count = 0

    def malloc(self, size: int, policy: int, src: str) -> Allocation:
        if not isinstance(size, int) or size <= 0:
            raise AclError(
                ACL_ERROR_INVALID_PARAM,
                f"malloc: size must be a positive integer, got {size!r}",
                f"malloc: size 必须是正整数，实际为 {size!r}",
            )
        if policy not in MALLOC_POLICIES:
            raise AclError(
                ACL_ERROR_INVALID_PARAM,
                f"malloc: policy must be one of ACL_MEM_MALLOC_* (0..5), got {policy!r}",
                f"malloc: policy 必须是 ACL_MEM_MALLOC_* 之一（0..5），实际为 {policy!r}",
            )
        reserved = align_up(size, self.round_to) + self.pad
        if self.used + reserved > self.capacity:
            raise AclError(
                ACL_ERROR_RT_MEMORY_ALLOCATION,
                f"malloc: out of device memory: asked {size} B ({reserved} B reserved), "
                f"{self.used} B of {self.capacity} B already in use",
                f"malloc: 设备内存不足：申请 {size} B（预留 {reserved} B），{self.capacity} B 中已用 {self.used} B",
            )
        self._count += 1
        ptr = align_up(self._next, self.align)
        self._next = ptr + reserved
        alloc = Allocation(self._count, ptr, size, reserved, "device", src)
        self.space.add(alloc)
        self.used += reserved
        self.peak = max(self.peak, self.used)
        return alloc

    def free(self, ptr: int, src: str) -> Allocation:
        alloc = self.space.by_ptr.get(ptr) if isinstance(ptr, int) else None
        if alloc is None:
            inside = self.space.find(ptr) if isinstance(ptr, int) else None
            detail = f"it is inside {inside.label()}" if inside else "no allocation starts there"
            detail_zh = f"它位于{inside.label_zh()}内部" if inside else "没有分配从这里开始"
            raise AclError(
                ACL_ERROR_RT_MEMORY_FREE,
                f"free: {ptr!r} is not a device allocation ({detail})",
                f"free: {ptr!r} 不是一个设备分配（{detail_zh}）",
            )
        if not alloc.live:
            raise AclError(
                ACL_ERROR_RT_MEMORY_FREE,
                f"free: double free of {alloc.label()}, already freed at {alloc.freed_at}",
                f"free: 重复释放{alloc.label_zh()}，它已在 {alloc.freed_at} 释放",
            )
        alloc.freed_at = src
        alloc.data = None
        self.used -= alloc.reserved
        return alloc

    def view(self, alloc: Allocation) -> np.ndarray:
        """The allocation's bytes (created zeroed on first touch)."""
        if alloc.data is None:
            alloc.data = np.zeros(alloc.size, dtype=np.uint8)
        return alloc.data


HOST_LIMIT = 1 << 40  # bytes one malloc_host may ask for (the simulator's limit)


def _bad_host_size(size) -> None:
    """Raise the error a ``malloc_host`` of ``size`` gets (anything but an int in 1 .. HOST_LIMIT)."""
    if not isinstance(size, int) or size <= 0:
        raise AclError(
            ACL_ERROR_INVALID_PARAM,
            f"malloc_host: size must be a positive integer, got {size!r}",
            f"malloc_host: size 必须是正整数，实际为 {size!r}",
        )
    if size > HOST_LIMIT:
        raise AclError(
            ACL_ERROR_BAD_ALLOC,
            f"malloc_host: {size} B exceeds the 1 TiB host limit",
            f"malloc_host: {size} B 超过了主机 1 TiB 的上限",
        )


class HostMemory:
    """Pinned host buffers (``malloc_host``) and pageable numpy arrays registered by pointer."""

    def __init__(self, numerics: bool) -> None:
        self.numerics = numerics
        self.pinned = AddressSpace("pinned host")
        self.pageable = AddressSpace("pageable host")
        self._next_pinned = HOST_PINNED_BASE
        self._next_pageable = HOST_PAGEABLE_BASE
        self._count = 0
        self._pageable_ids: dict[int, tuple[np.ndarray, Allocation]] = {}

    def malloc_host(self, size: int, src: str) -> Allocation:
        if type(size) is not int or not 0 < size <= HOST_LIMIT:  # (bulk hosts call this a lot: the checks in one)
            _bad_host_size(size)
        self._count += 1
        ptr = self._next_pinned  # page-aligned: the base is, and every allocation takes whole pages
        self._next_pinned = ptr - (-size // 4096) * 4096
        alloc = Allocation(self._count, ptr, size, size, "pinned", src)
        pinned = self.pinned  # AddressSpace.add, inline
        pinned._starts.append(ptr)
        pinned._allocs.append(alloc)
        pinned.by_ptr[ptr] = alloc
        return alloc

    def free_host(self, ptr: int, src: str) -> Allocation:
        alloc = self.pinned.by_ptr.get(ptr) if isinstance(ptr, int) else None
        if alloc is None:
            raise AclError(
                ACL_ERROR_RT_MEMORY_FREE,
                f"free_host: {ptr!r} is not a pinned host allocation",
                f"free_host: {ptr!r} 不是锁页主机分配",
            )
        if alloc.freed_at:  # not alloc.live (no property call: bulk hosts call this a lot)
            raise AclError(
                ACL_ERROR_RT_MEMORY_FREE,
                f"free_host: double free of {alloc.label()}, already freed at {alloc.freed_at}",
                f"free_host: 重复释放{alloc.label_zh()}，它已在 {alloc.freed_at} 释放",
            )
        alloc.freed_at = src
        alloc.data = None
        return alloc

    def register(self, array: np.ndarray, src: str) -> Allocation:
        """Give a pageable numpy array a host pointer (``acl.util.numpy_to_ptr``)."""
        if not isinstance(array, np.ndarray):
            raise AclError(
                ACL_ERROR_INVALID_PARAM,
                f"expected a numpy array, got {type(array).__name__}",
                f"需要 numpy 数组，实际为 {type(array).__name__}",
            )
        if not array.flags.c_contiguous:
            raise AclError(
                ACL_ERROR_INVALID_PARAM,
                "host numpy arrays must be C-contiguous to be copied",
                "主机上的 numpy 数组必须是 C 连续的才能拷贝",
            )
        known = self._pageable_ids.get(id(array))
        if known is not None and known[0] is array:
            return known[1]
        self._count += 1
        ptr = align_up(self._next_pageable, 4096)
        self._next_pageable = ptr + align_up(max(array.nbytes, 1), 4096)
        alloc = Allocation(self._count, ptr, array.nbytes, array.nbytes, "pageable", src)
        alloc.data = array.reshape(-1).view(np.uint8)
        self.pageable.add(alloc)
        self._pageable_ids[id(array)] = (array, alloc)  # holding the array keeps its id unique
        return alloc

    def find_space(self, ptr: int) -> AddressSpace | None:
        for space in (self.pinned, self.pageable):
            if space.find(ptr) is not None:
                return space
        return None

    def view(self, alloc: Allocation) -> np.ndarray:
        if alloc.data is None:
            alloc.data = np.zeros(alloc.size, dtype=np.uint8)
        return alloc.data
