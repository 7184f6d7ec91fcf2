"""What kernel code sees while one block runs: its core, buffers, program and race detector.

pyasc kernels call free functions (``asc.data_copy(...)``, ``asc.get_block_idx()``) with no
handle to a simulator. The running block is therefore found through a ``contextvars.ContextVar``
set only while that block's Python code runs and reset right after: nothing is shared between
simulations, and threads or async tasks each see their own (or none).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import numpy as np

from ..device.memory import Allocation
from ..host.acl_codes import (
    ACL_ERROR_RT_AICORE_EXCEPTION,
    ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW,
    ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW,
)
from ..trace.detail import GM, Instr, Rect
from .dispatch import KernelFault, PhysicalCore
from .layout import TagStore
from .pipes import LANE_NAMES, Pipe
from .program import Program
from .race import Race, check_races
from .running import RUNNING
from .tensor import Buffer, GlobalTensor, LocalTensor

if TYPE_CHECKING:
    from .launch import KernelLaunch


class KernelError(KernelFault):
    """Kernel code did something the hardware rejects; ``code`` is the ACL code the host would see, the
    message is in English and Chinese."""

    def __init__(self, code: int, message: str, message_zh: str):
        super().__init__(code, "kernel-error", message, message_zh)


class BlockContext:
    """One block's execution on one core."""

    def __init__(self, launch: KernelLaunch, block_idx: int, core: PhysicalCore, buffers: dict) -> None:
        self.launch = launch
        self.sim = launch.sim
        self.block_idx = block_idx
        self.block_num = launch.block_dim
        self.core = core
        self.core_type = launch.core_type_of(core)
        self.buffers = buffers  # Buffer -> numpy bytes (persist on the physical core)
        self.taken = dict.fromkeys(Buffer, 0)
        self.owners: dict[Buffer, list[str]] = {b: [] for b in Buffer}
        self.program = Program(block_idx)
        # per instruction recorded (stamped copies have none): (read Rects, written Rects, name, src) for the race check
        self.accesses: list[tuple] = []
        self.last_access = -1  # the last instruction recorded with its accesses
        self.numerics = launch.numerics
        self.queue_count = 0
        self.gm_writes: list[tuple] = []  # (alloc key, start byte, rows, row bytes, stride, src)
        self.tags = TagStore()  # where each fractal in L1 / L0 came from (engine.aicore.layout)
        self.group = None  # the GroupRecorder of a mixed kernel's block (AIC + 2 AIV), else None
        self.role = 0  # 0: the AIC of a group (or a lone core); 1, 2: its AIVs
        self.caller: tuple[str, int] | None = None  # the kernel line in progress, when a recorded program is replayed
        self._token = None
        self._src_cache: dict[tuple, tuple[int, str]] = {}
        self._pipes = frozenset(p for p in Pipe if launch.pipe_allowed(self.core_type, p))
        self._name_id = launch.device.name_id  # what launch.name_id and launch.detail_id call, bound once
        self._detail_id = launch.sim.trace.details

    # -- activation ---------------------------------------------------------------------------
    def __enter__(self) -> BlockContext:
        self._token = RUNNING.set(self)
        return self

    def __exit__(self, *exc) -> None:
        RUNNING.reset(self._token)

    # -- source lines -------------------------------------------------------------------------
    def src(self) -> tuple[int, str]:
        """(trace id, text) of the kernel line that issued the current instruction."""
        key = self.caller
        if key is None:
            frame = sys._getframe(2)
            internal = self.launch.internal_files
            while frame is not None and frame.f_code.co_filename in internal:
                frame = frame.f_back
            if frame is None:
                return -1, "?"
            key = (frame.f_code.co_filename, frame.f_lineno)
        found = self._src_cache.get(key)
        if found is None:
            found = self._src_cache[key] = self.launch.src_id(*key)
        return found

    # -- buffers ------------------------------------------------------------------------------
    def capacity(self, buffer: Buffer) -> int:
        return self.launch.capacity(buffer, self.core_type)

    def buffer_bytes(self, buffer: Buffer) -> np.ndarray:
        arr = self.buffers.get(buffer)
        if arr is None:
            arr = self.buffers[buffer] = np.zeros(self.capacity(buffer), dtype=np.uint8)
        return arr

    def local_array(self, t: LocalTensor, count: int | None = None) -> np.ndarray:
        n = t.count if count is None else count
        raw = self.buffer_bytes(t.buffer)
        return raw[t.offset : t.offset + n * t.dtype.sizeof()].view(t.dtype.np)

    def gm_allocation(self, ptr: int) -> Allocation:
        space = self.sim.devmem.space
        alloc = space.find(ptr)
        if alloc is None:
            raise KernelError(
                ACL_ERROR_RT_AICORE_EXCEPTION,
                f"GM address 0x{ptr:x} is not in any device allocation",
                f"GM 地址 0x{ptr:x} 不在任何设备分配之内",
            )
        if not alloc.live:
            raise KernelError(
                ACL_ERROR_RT_AICORE_EXCEPTION,
                f"GM address 0x{ptr:x} is in {alloc.label()}, freed at {alloc.freed_at} (use after free)",
                f"GM 地址 0x{ptr:x} 位于{alloc.label_zh()}，该分配已在 {alloc.freed_at} 释放（释放后使用）",
            )
        return alloc

    def gm_check(self, g: GlobalTensor, first: int, count: int, write: bool) -> tuple[int, int]:
        """Byte range [lo, hi) in the allocation of elements [first, first+count) of ``g``; bounds-checked."""
        size = g.dtype.sizeof()
        lo = g.byte_offset + first * size
        hi = lo + count * size
        alloc = g.alloc
        if not alloc.live:
            raise KernelError(
                ACL_ERROR_RT_AICORE_EXCEPTION,
                f"GM {alloc.label()} was freed at {alloc.freed_at} (use after free)",
                f"GM {alloc.label_zh()}已在 {alloc.freed_at} 释放（释放后使用）",
            )
        if first < 0 or hi > alloc.size or (g.size and first + count > g.size):
            code = ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW if write else ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW
            what = "write" if write else "read"
            raise KernelError(
                code,
                f"GM {what} out of bounds: elements [{first}, {first + count}) of a GlobalTensor of {g.size} "
                f"elements ({alloc.label()}, byte range [{lo}, {hi}) of {alloc.size})",
                f"GM {'写' if write else '读'}越界：访问了含 {g.size} 个元素的 GlobalTensor 的元素 [{first}, "
                f"{first + count})（{alloc.label_zh()}，字节范围 [{lo}, {hi})，共 {alloc.size} B）",
            )
        return lo, hi

    def gm_bytes(self, g: GlobalTensor) -> np.ndarray:
        return self.sim.devmem.view(g.alloc)

    # -- recording ----------------------------------------------------------------------------
    def emit(
        self,
        pipe: int,
        op: int,
        cost_ps: int,
        rate: float,
        key: int,
        nbytes: int,
        name: str,
        tkind: int,
        detail=None,
        extra_writes: tuple[Rect, ...] = (),
    ) -> str:
        """Append one instruction to the block's program; return the source line that issued it.

        ``detail`` is the instruction's typed meaning (:mod:`engine.trace.detail`); for an :class:`Instr` its
        source rectangles are the reads and its destination (plus ``extra_writes``) the writes the race
        check sees, and a GM destination is remembered for the cross-block write check.
        """
        if pipe not in self._pipes:
            raise KernelError(
                ACL_ERROR_RT_AICORE_EXCEPTION,
                f"{name}: pipe {LANE_NAMES[pipe]} does not exist on {self.core.label} ({self.core_type} core)",
                f"{name}: {self.core.label}（{self.core_type} 核）上没有 {LANE_NAMES[pipe]} 流水线",
            )
        if self.sim.instruction_probe is not None:  # a test looks at the buffers after each instruction
            self.sim.instruction_probe(self)
        src_id, src_text = self.src()
        name_id = self._name_id(name)
        if isinstance(detail, Instr):
            self.program.add(
                (pipe, op, cost_ps, rate, key, nbytes, detail.flops, name_id, src_id, tkind, self._detail_id(detail))
            )
            dst = detail.dst
            if dst is None:
                writes = extra_writes
            else:
                writes = (dst, *extra_writes) if extra_writes else (dst,)
                if dst.buf == GM:
                    self.gm_writes.append(
                        (("device", dst.owner), dst.start, dst.rows, dst.row_bytes, dst.stride, src_text)
                    )
            self.accesses.append((detail.srcs, writes, name, src_text))
        else:
            detail_id = -1 if detail is None else self._detail_id(detail)
            self.program.add((pipe, op, cost_ps, rate, key, nbytes, 0, name_id, src_id, tkind, detail_id))
            self.accesses.append(((), (), name, src_text))
        self.last_access = len(self.accesses) - 1
        return src_text

    def races(self, order: list[int] | None = None) -> list[Race]:
        """Check the block's accesses in execution order (program order unless a wait came first).

        Stamped template copies (the fast path) carry no accesses; each recorded run is checked on
        its own, which is how the templates were checked when they were recorded.
        """
        if self.last_access < 0:
            return []
        if order is not None:
            return check_races(self.program.instrs, self.aligned_accesses(), order)
        races: list[Race] = []
        at = 0
        for seg in self.program.segments:
            if seg[0] == "rec":
                n = len(seg[1])
                races += check_races(seg[1], self.accesses[at : at + n], None)
                at += n
        return races

    def aligned_accesses(self) -> list[tuple | None]:
        """The accesses instruction by instruction of the whole program (None for each stamped copy's)."""
        out: list[tuple | None] = []
        at = 0
        for seg in self.program.segments:
            if seg[0] == "rec":
                out += self.accesses[at : at + len(seg[1])]
                at += len(seg[1])
            else:
                out += [None] * len(seg[1].instrs)
        return out
