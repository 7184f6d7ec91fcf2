"""Kernels: ``@asc.jit`` functions, and one launch of a kernel on the device's cores.

``@asc.jit(kernel_type=...)`` marks a Python function as an Ascend C kernel. The host queues it
with ``acl.rt.launch_kernel(kernel, block_dim, stream, *args)``; when the stream reaches it and
its cores are free, :class:`KernelLaunch` runs it: every block's code runs on the core that takes
the block (recording its program, doing the numerics), the scheduler times the programs, and
problems (a deadlock, a race, an error the core would trap on) become findings with their ACL code.
A Python exception inside kernel code is caught and reported; it never escapes the simulation.
"""

from __future__ import annotations

import inspect
import traceback
from enum import Enum
from typing import TYPE_CHECKING

from ..host.acl_codes import (
    ACL_ERROR_API_NOT_SUPPORT,
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_AICORE_EXCEPTION,
    ACL_ERROR_RT_AICORE_TIMEOUT,
    AclError,
)
from ..trace import Kind
from ..trace.detail import Block
from ..trace.findings import Finding
from ..trace.source_files import INTERNAL_FILES
from .context import BlockContext, KernelError
from .dispatch import KernelFault, KernelScheduler, PhysicalCore
from .group import GroupRecorder
from .memory_system import SharedMemorySystem
from .pipes import Pipe
from .program import Program, topological_order
from .race import check_group_races
from .scalar_unit import issue_table
from .tensor import Buffer, GlobalAddress
from .tiling_read import bind_tiling, check_keys

if TYPE_CHECKING:
    from ..device.runtime import CoreGrant, DeviceRuntime
    from ..device.stream import Task
    from ..simulation import Simulation


class KernelType(Enum):
    """Where a kernel runs (pyasc ``KernelType``)."""

    AIV_ONLY = "vector"
    AIC_ONLY = "cube"
    MIX_AIC_1_2 = "mix"


_AIC_PIPES = frozenset((Pipe.S, Pipe.M, Pipe.MTE1, Pipe.MTE2, Pipe.FIX))
_AIV_PIPES = frozenset((Pipe.S, Pipe.V, Pipe.MTE2, Pipe.MTE3))
_AIC_BUFFERS = frozenset((Buffer.L1, Buffer.L0A, Buffer.L0B, Buffer.L0C, Buffer.BT, Buffer.FB))


class JitKernel:
    """A kernel function, where it runs, and the fast path its author chose for it (or None).

    A fast path takes the kernel's arguments and records the same program as ``fn`` (faster: see
    :mod:`engine.kernels.stamp`); a simulation runs it instead of ``fn`` when it may
    (``Simulation(fast=True)``, the default). Nothing else attaches one.
    """

    def __init__(self, fn, kernel_type: KernelType, fast_path=None, tiling_keys: tuple[int, ...] = ()) -> None:
        self.fn = fn
        self.kernel_type = kernel_type
        self.fast_path = fast_path
        self.tiling_keys = tiling_keys  # the variants TILING_KEY_IS can select (empty: key 0 only)
        self.name = fn.__name__
        self.params = tuple(inspect.signature(fn).parameters)  # the views name GM buffers by these
        self.__doc__ = fn.__doc__

    def __call__(self, *args, **kwargs):
        raise TypeError(
            f"{self.name} is a device kernel: launch it with acl.rt.launch_kernel({self.name}, block_dim, stream, ...)"
        )

    def prepare(self, sim: Simulation, block_dim: int, args: tuple) -> KernelLaunch:
        return KernelLaunch(sim, self, block_dim, args)


def jit(fn=None, *, kernel_type: KernelType = KernelType.AIV_ONLY, fast_path=None, tiling_keys=None, **_options):
    """``@asc.jit``, ``@asc.jit(kernel_type=asc.KernelType.AIC_ONLY)``, with the kernel's fast path named
    (``fast_path=fn``, see :class:`JitKernel`) or its tiling keys declared (``tiling_keys=(1, 2)``)."""
    keys = () if tiling_keys is None else check_keys(tiling_keys)
    if fn is None:
        return lambda f: JitKernel(f, kernel_type, fast_path, keys)
    return JitKernel(fn, kernel_type, fast_path, keys)


class DeviceCores:
    """Per-device AI-core state that outlives a kernel: trace lanes, buffer contents, L2."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.memory = SharedMemorySystem(sim.profile)
        self._cores: dict[str, PhysicalCore] = {}
        self._buffers: dict[str, dict] = {}
        self._names: dict[str, int] = {}

    def core(self, kind: str, ident: int, coupled: bool) -> PhysicalCore:
        label = f"{kind} {ident}"
        found = self._cores.get(label)
        if found is None:
            pipes = tuple(Pipe) if coupled else tuple(sorted(_AIC_PIPES if kind == "AIC" else _AIV_PIPES))
            if coupled and not self.sim.profile.buffers.fb:
                pipes = tuple(p for p in pipes if p != Pipe.FIX)
            sort = 10 + ident if kind == "AIC" else 100 + ident
            found = self._cores[label] = PhysicalCore(self.sim.trace, kind, ident, pipes, sort)
            self._buffers[label] = {}
        return found

    def buffers(self, core: PhysicalCore) -> dict:
        return self._buffers[core.label]

    def name_id(self, name: str) -> int:
        ident = self._names.get(name)
        if ident is None:
            ident = self._names[name] = self.sim.trace.name(name)
        return ident


class KernelLaunch:
    """One queued launch of a ``@asc.jit`` kernel (implements the runtime's ``DeviceKernel``)."""

    def __init__(self, sim: Simulation, jit_kernel: JitKernel, block_dim: int, args: tuple) -> None:
        self.sim = sim
        self.jit = jit_kernel
        self.name = jit_kernel.name
        self.core_type = jit_kernel.kernel_type.value
        self.block_dim = block_dim
        self.args, self.tiling, self.tiling_key = bind_tiling(self.name, jit_kernel.tiling_keys, args)
        self.numerics = sim.numerics
        self.internal_files = INTERNAL_FILES
        profile = sim.profile
        self.coupled = profile.chip.architecture == "coupled"
        self.has_fix = profile.buffers.fb > 0
        self.ps_per_cycle = profile.ps_per_cycle
        c = profile.compute
        paths = profile.paths
        self.rate = {
            name: getattr(paths, name) * 1e9 / 1e12
            for name in (
                "gm_to_l1",
                "gm_to_ub",
                "ub_to_gm",
                "l1_to_gm",
                "l0c_to_gm",
                "l0c_to_l1",
                "l1_to_l0a",
                "l1_to_l0b",
                "ub_to_ub",
            )
        }
        self.mte_startup_ps = self.ps(c.mte_startup_cycles)
        self.vec_startup = c.vector_startup_cycles
        self.cube_startup = c.cube_startup_cycles
        self.repeat_bytes = c.vector_repeat_bytes
        self.slow_divisor = c.vector_slow_divisor
        self.cube = (c.cube_m, c.cube_n, c.cube_k)
        self.fp32_divisor = c.cube_fp32_divisor
        self.flag_ids = profile.limits.flag_event_ids
        self.cross_flag_ids = profile.limits.cross_flag_ids
        self.flag_ps = max(1, self.ps(c.flag_cycles))
        b = profile.buffers
        self._capacity = {
            Buffer.L1: b.l1,
            Buffer.L0A: b.l0a,
            Buffer.L0B: b.l0b,
            Buffer.L0C: b.l0c,
            Buffer.UB: b.ub,
            Buffer.BT: b.bt,
            Buffer.FB: b.fb,
            Buffer.GM: 0,
        }
        self._granularity = {
            Buffer.L1: b.l1_align,
            Buffer.L0A: b.l0a_align,
            Buffer.L0B: b.l0b_align,
            Buffer.L0C: b.l0c_align,
            Buffer.UB: b.ub_align,
            Buffer.BT: 32,
            Buffer.FB: 32,
            Buffer.GM: 1,
        }
        self._flag_keys: dict[tuple, int] = {}
        self.flops = 0
        self.nbytes = 0
        self.cores: list[PhysicalCore] = []
        self.groups: list[tuple[PhysicalCore, ...]] = []  # per group: its cores (one, or AIC + 2 AIV)
        self.reads: tuple = ()
        self.writes: tuple = ()
        self.fault: KernelFault | None = None
        self._gm_writes: list[tuple] = []
        self.scratch: dict = {}  # per-launch caches a fast path may keep (templates, the launch's product)
        self.after_blocks: list = []  # what a fast path completes once every block has run (background numerics)
        self.body = jit_kernel.fast_path if (sim.fast and jit_kernel.fast_path) else jit_kernel.fn
        self._block_names: dict[int, tuple[int, int]] = {}
        self._device: DeviceCores | None = None  # set when the launch executes
        self._check_args()
        self.reads = self._gm_reads()

    # -- costs and capacities (used by instructions) --------------------------------------------
    def ps(self, cycles: float) -> int:
        return round(cycles * self.ps_per_cycle)

    def capacity(self, buffer: Buffer, core_type: str) -> int:
        if core_type == "aic" and buffer not in _AIC_BUFFERS:
            return 0
        if core_type == "aiv" and buffer != Buffer.UB:
            return 0
        return self._capacity[buffer]

    def granularity(self, buffer: Buffer) -> int:
        return self._granularity[buffer]

    def pipe_allowed(self, core_type: str, pipe: int) -> bool:
        if core_type == "aic":
            return pipe in _AIC_PIPES
        if core_type == "aiv":
            return pipe in _AIV_PIPES
        return pipe != Pipe.FIX or self.has_fix

    def core_type_of(self, core: PhysicalCore) -> str:
        if self.coupled:
            return "coupled" if core.kind == "AIC" else "aiv"
        return "aic" if core.kind == "AIC" else "aiv"

    def flag_key(self, src: Pipe, dst: Pipe, ident: tuple) -> int:
        spec = (int(src), int(dst), ident)
        key = self._flag_keys.get(spec)
        if key is None:
            key = self._flag_keys[spec] = len(self._flag_keys)
        return key

    @property
    def device(self) -> DeviceCores:
        """The device's AI-core state this launch runs on (its shared memory system, its names)."""
        if self._device is None:
            raise RuntimeError(f"{self.name}: the launch has not started executing")
        return self._device

    def tile_key(self, alloc, offset: int, rows: int, row_bytes: int, stride: int) -> int:
        return self._device.memory.tile_key((alloc.where, alloc.ident), offset, rows, row_bytes, stride)

    def name_id(self, name: str) -> int:
        return self._device.name_id(name)

    def detail_id(self, record) -> int:
        return self.sim.trace.detail(record)

    def src_id(self, filename: str, lineno: int) -> tuple[int, str]:
        """(trace id, text) of a kernel source line (``Simulation.src_at``)."""
        ident = self.sim.src_at(filename, lineno)
        return ident, self.sim.trace.srcs.items[ident]

    # -- launch checks ------------------------------------------------------------------------------
    def _gm_reads(self) -> tuple:
        """What the kernel may read: every GM buffer passed to it, from the address given to its end."""
        out = []
        for arg in self.args:
            if isinstance(arg, GlobalAddress):
                alloc = self.sim.devmem.space.find(arg.ptr)
                if alloc is not None:
                    out.append(((alloc.where, alloc.ident), arg.ptr - alloc.ptr, alloc.size))
        return tuple(out)

    def _check_args(self) -> None:
        if self.core_type == "mix" and self.coupled:
            raise AclError(
                ACL_ERROR_API_NOT_SUPPORT,
                f"launch_kernel: {self.name} is a mixed (MIX_AIC_1_2) kernel, but {self.sim.profile.name} has coupled "
                "AI cores (Cube and Vector in one core, no AIC/AIV groups); launch it as AIV_ONLY or AIC_ONLY",
                f"launch_kernel: {self.name} 是混合（MIX_AIC_1_2）核函数，但 {self.sim.profile.name} 的 AI Core "
                "是耦合的（Cube 与 Vector 在同一个核内，没有 AIC/AIV 组）；请以 AIV_ONLY 或 AIC_ONLY 方式启动",
            )
        for i, arg in enumerate(self.args):
            if isinstance(arg, GlobalAddress):
                alloc = self.sim.devmem.space.find(arg.ptr)
                if alloc is None or not alloc.live:
                    state = "freed" if alloc is not None else "not a device allocation"
                    state_zh = "已被释放" if alloc is not None else "不是设备分配"
                    raise AclError(
                        ACL_ERROR_INVALID_PARAM,
                        f"launch_kernel: argument {i} (0x{arg.ptr:x}) is {state}",
                        f"launch_kernel: 第 {i} 个参数（0x{arg.ptr:x}）{state_zh}",
                    )
                if i < len(self.jit.params):
                    self.sim.label_gm(alloc.ident, self.jit.params[i])

    # -- execution ------------------------------------------------------------------------------
    def execute(self, runtime: DeviceRuntime, task: Task, start: int, grant: CoreGrant) -> int:
        device = runtime.ai_cores()
        self._device = device
        if self.core_type == "vector":
            self.cores = [device.core("AIC", i, True) for i in grant.aic] if self.coupled else []
            self.cores += [device.core("AIV", i, self.coupled) for i in grant.aiv]
        else:
            self.cores = [device.core("AIC", i, self.coupled) for i in grant.aic]
        if self.core_type == "mix":  # AI core i = AIC i + AIV 2i, 2i+1 (the runtime grants whole groups)
            aiv = [device.core("AIV", i, False) for i in grant.aiv]
            self.groups = [(aic, aiv[2 * g], aiv[2 * g + 1]) for g, aic in enumerate(self.cores)]
            self.cores = [core for group in self.groups for core in group]
        else:
            self.groups = [(core,) for core in self.cores]
        profile = self.sim.profile
        scheduler = KernelScheduler(
            self.sim.trace,
            device.memory,
            profile.ps_per_cycle,
            {
                "AIC": issue_table(profile.scalar, profile.ps_per_cycle, gm_to_l1=self.core_type != "vector"),
                "AIV": issue_table(profile.scalar, profile.ps_per_cycle, gm_to_l1=False),
            },
            profile.compute.flag_cycles,
            profile.compute.cross_flag_cycles,
            profile.limits.cross_flag_max_count,
            self.groups,
            self.block_dim,
            self._record_block,
            task.cause,
            self._block_name,
            memo=self.sim.steady,
        )
        before = device.memory.stats()
        try:
            end = scheduler.run(start)
        except KernelFault as fault:
            self.fault = fault
            end = max([start, *[s[3] for s in scheduler.block_spans]])
            code = fault.code or ACL_ERROR_RT_AICORE_TIMEOUT
            self.sim.report(
                Finding(
                    fault.kind,
                    f"kernel {self.name}: {fault}",
                    code,
                    end,
                    "",
                    fault.details,
                    message_zh=f"核函数 {self.name}: {fault.message_zh}",
                )
            )
            task.error = code
        finally:
            for complete in self.after_blocks:
                complete()
            scheduler.let_go()
        self._check_block_overlaps(end)
        self.writes = _spans(self._gm_writes)
        after = device.memory.stats()
        self.sim.extra.setdefault("kernel_memory", []).append(
            {
                "kernel": self.name,
                "start_ps": start,
                "end_ps": end,
                **{k: after[k] - before[k] for k in ("l2_hit_bytes", "hbm_read_bytes", "hbm_write_bytes")},
            }
        )
        for alloc_key in {w[0] for w in self._gm_writes}:
            device.memory.invalidate(alloc_key)
        runtime.trace.add(
            start,
            end,
            runtime.op_lane(),
            Kind.KERNEL,
            task.name,
            self.nbytes,
            task.cause,
            task.src,
            task.detail,
        )
        return end

    def _block_name(self, block: int) -> tuple[int, int]:
        """(trace name id, detail id) of a block's row."""
        found = self._block_names.get(block)
        if found is None:
            found = self._block_names[block] = (self._device.name_id(f"block {block}"), self.detail_id(Block(block)))
        return found

    def _record_block(self, block: int, group: int) -> list[Program]:
        """Run the kernel code of ``block`` on its core (or its AIC and two AIVs); return their programs."""
        ctxs = [BlockContext(self, block, core, self._device.buffers(core)) for core in self.groups[group]]
        try:
            if len(ctxs) == 1:
                with ctxs[0]:
                    self.body(*self.args)
            else:
                GroupRecorder(ctxs, self.body, self.args).run()
        except KernelFault:
            raise
        except Exception as exc:  # user kernel code failed: report where, never crash the simulation
            # the line to blame: the one the exception names (a replayed recording's), else the last user frame
            origin = getattr(exc, "source_line", None)
            if origin is None:
                frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename not in self.internal_files]
                origin = (frames[-1].filename, frames[-1].lineno) if frames else None
            where = f" at {self.src_id(*origin)[1]}" if origin else ""
            where_zh = f"（位于 {self.src_id(*origin)[1]}）" if origin else ""
            raise KernelError(
                ACL_ERROR_RT_AICORE_EXCEPTION,
                f"block {block}: {type(exc).__name__}: {exc}{where}",
                f"块 {block}: 核函数代码抛出 {type(exc).__name__}: {getattr(exc, 'message_zh', exc)}{where_zh}",
            ) from exc
        if self.sim.instruction_probe is not None:
            for ctx in ctxs:
                self.sim.instruction_probe(ctx)
        # execution order: program order, unless a wait comes before its set
        orders = [topological_order(c.program.instrs)[0] if c.program.forward_waits else None for c in ctxs]
        if len(ctxs) == 1:
            races = ctxs[0].races(orders[0])
        else:
            members = [(c.program.instrs, c.aligned_accesses(), order) for c, order in zip(ctxs, orders, strict=True)]
            races = check_group_races(members, [c.core.label for c in ctxs])
        for race in races:
            self.sim.report(
                Finding(
                    "race",
                    f"kernel {self.name}, block {block}: {race.message()}",
                    None,
                    0,
                    race.second_src,
                    {"block": block, "race": race.__dict__},
                    message_zh=f"核函数 {self.name}，块 {block}: {race.message_zh()}",
                )
            )
        for ctx in ctxs:
            flops, gm_bytes = ctx.program.totals()
            self.flops += flops
            self.nbytes += gm_bytes
            self._gm_writes.extend((*w, block) for w in ctx.gm_writes)
        return [ctx.program for ctx in ctxs]

    def _check_block_overlaps(self, when: int) -> None:
        """Two blocks writing the same GM bytes race (which value survives depends on timing)."""
        by_alloc: dict[tuple, list[tuple]] = {}
        for alloc, start, rows, row_bytes, stride, src, block in self._gm_writes:
            by_alloc.setdefault(alloc, []).append(
                (start, start + (rows - 1) * stride + row_bytes, rows, row_bytes, stride, block, src)
            )
        for alloc, writes in by_alloc.items():
            writes.sort()
            active: list[tuple] = []
            for w in writes:
                active = [a for a in active if a[1] > w[0]]
                for a in active:
                    if a[5] != w[5] and _rects_overlap(a, w):
                        self.sim.report(
                            Finding(
                                "race",
                                f"kernel {self.name}: blocks {a[5]} and {w[5]} both write GM#{alloc[1]} around byte "
                                f"{w[0]} ({a[6]} and {w[6]}); which value survives depends on which core writes last",
                                None,
                                when,
                                w[6],
                                {"blocks": [a[5], w[5]]},
                                message_zh=f"核函数 {self.name}: 块 {a[5]} 和块 {w[5]} 都写了 GM#{alloc[1]} 第 {w[0]} "
                                f"字节附近（{a[6]} 与 {w[6]}）；最终留下哪个值取决于哪个核最后写入",
                            )
                        )
                        return
                active.append(w)


def _rects_overlap(a: tuple, b: tuple) -> bool:
    """Do two row-major GM writes ``(lo, hi, rows, row_bytes, stride, ...)`` share a byte?"""
    stride = a[4]
    if stride == b[4] and a[0] % stride + a[3] <= stride and b[0] % stride + b[3] <= stride:
        # same row-major matrix, neither wrapping past a row end: compare as rectangles
        ar, ac = divmod(a[0], stride)
        br, bc = divmod(b[0], stride)
        rows = ar < br + b[2] and br < ar + a[2]
        cols = ac < bc + b[3] and bc < ac + a[3]
        return rows and cols
    return a[0] < b[1] and b[0] < a[1]  # different shapes: compare byte spans (conservative)


def _spans(writes: list[tuple]) -> tuple:
    """Per allocation, the byte span ``[first, last)`` a kernel's GM writes covered."""
    spans: dict[tuple, list[int]] = {}
    for alloc, start, rows, row_bytes, stride, *_ in writes:
        end = start + (rows - 1) * stride + row_bytes
        span = spans.setdefault(alloc, [start, end])
        span[0] = min(span[0], start)
        span[1] = max(span[1], end)
    return tuple((alloc, lo, hi) for alloc, (lo, hi) in spans.items())
