"""The simulation object: it owns every piece of state of one simulated host + device.

Nothing lives in module globals, so any number of simulations run side by side (tests, the grader,
one per web session). The host thread is the user's Python code calling ``sim.acl``; its clock
(``host_now``) advances by each call's cost. The device is driven lazily by the event core: only
as far as a blocking call needs, and to the end in :meth:`Simulation.finish`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from .clock import EventCore
from .device.consistency import stream_races
from .device.copy_engine import H2H, LinkModel
from .device.deadlock import diagnose_stuck
from .device.memory import DeviceMemory, HostMemory
from .device.runtime import CopyPlan, DeviceRuntime
from .device.stream import Stream, TaskKind, TaskRecord
from .host import acl_codes as C
from .host.acl import Acl
from .host.acl_codes import AclError
from .host.checks import HostChecks
from .profiles.profile import Profile, load_profile
from .trace import Kind, LaneKind, Trace, TraceData
from .trace.detail import HostWait, HostWork, Mark, Phase
from .trace.findings import Finding, stream_zh
from .trace.source_files import INTERNAL_FILES, short_path


class ApiCall:
    """One host API call in flight: its trace row, source line and return code."""

    __slots__ = ("cost", "name", "ret", "row", "sim", "src", "start")

    def __init__(self, sim: Simulation, name: str, cost_ps: int) -> None:
        self.sim = sim
        self.name = name
        self.cost = cost_ps
        self.ret = C.ACL_SUCCESS

    @property
    def src_text(self) -> str:
        return self.sim.trace.srcs.items[self.src] if self.src >= 0 else ""

    def __enter__(self) -> ApiCall:
        sim = self.sim
        self.src = sim.caller_src(2)
        self.start = sim.host_now
        sim.host_now += self.cost
        self.row = sim.trace.add(
            self.start, sim.host_now, sim.host_lane, Kind.CALL, sim.trace.name(self.name), src=self.src
        )
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        sim = self.sim
        if sim.host_now != self.start + self.cost:
            sim.trace.set_end(self.row, sim.host_now)
        if exc_type is None:
            return False
        if issubclass(exc_type, AclError):
            self.ret = exc.code
            if not exc.reported:
                sim.report(
                    Finding(
                        "acl-error",
                        f"{self.name}: {exc.detail}",
                        exc.code,
                        sim.host_now,
                        self.src_text,
                        message_zh=f"{self.name}: {exc.detail_zh}",
                    )
                )
            sim.trace.add(
                sim.host_now,
                sim.host_now,
                sim.host_lane,
                Kind.ERROR,
                sim.trace.name(C.error_name(exc.code)),
                cause=self.row,
                src=self.src,
            )
            return not sim.strict
        return False


@dataclass
class RunResult:
    """What a finished simulation hands to analysis, exports and UIs: plain data (it pickles, and it
    keeps nothing of the simulation alive)."""

    profile: Profile
    trace: TraceData
    findings: list[Finding]
    end_ps: int  # when the last thing (host or device) finished
    host_end_ps: int
    device_events: int  # events the event core processed
    extra: dict
    tasks: Sequence[TaskRecord]  # every device task submitted (with vector clocks), for the memory-consistency check
    gm: dict = field(default_factory=dict)  # device allocation ident -> GmTensor (what the program named it)
    gm_labels: dict = field(default_factory=dict)  # device allocation ident -> kernel parameter name (unnamed ones)

    @property
    def simulated_us(self) -> float:
        return self.end_ps / 1e6


class Simulation(HostChecks):
    """One host thread driving one simulated Ascend device (its calls' argument checks: :class:`HostChecks`)."""

    def __init__(
        self,
        profile: str | Profile = "ascend910b1",
        *,
        numerics: bool = True,
        strict: bool = False,
        fast: bool = True,
        steady: bool = True,
        verify: bool = True,
        progress: Callable[[int], None] | None = None,
    ):
        self.profile = load_profile(profile) if isinstance(profile, str | Path) else profile
        self.numerics = numerics
        self.strict = strict
        self.fast = fast  # let kernels with a fast path use it (identical programs, tested)
        self.steady = steady  # place repeated stretches of stamped steps by shifting (engine.aicore.steady; tested)
        # with numerics: the host programs of engine.scenarios compare their results with numpy (Outcome.correct);
        # off for a caller that shows no verdict (the checks make no API call: the trace is the same)
        self.verify = verify
        self.clock = EventCore()
        self.trace = Trace()
        self.trace.on_progress = progress  # called with the trace rows so far, now and then (never prints)
        self.link = LinkModel(self.profile)
        self.host_now = 0
        self.host_lane = self.trace.lane("Host", "host thread", 0, LaneKind.HOST)
        self.gm_tensors: dict[int, GmTensor] = {}
        self.gm_labels: dict[int, str] = {}  # allocation ident -> the kernel parameter it was first passed as
        limits = self.profile.limits
        self.devmem = DeviceMemory(
            self.profile.chip.device_memory_bytes, limits.malloc_align, limits.malloc_round, limits.malloc_pad, numerics
        )
        self.hostmem = HostMemory(numerics)
        self.runtime = DeviceRuntime(self)
        self.findings: list[Finding] = []
        self.state = SimpleNamespace(initialized=False, finalized=False, device=None, default_stream=None)
        self.deadlocked = False
        self._src_cache: dict[tuple[str, int], int] = {}
        self._finished: RunResult | None = None
        self.acl = Acl(self)
        self.extra: dict[str, Any] = {}
        # called with the BlockContext before each kernel instruction is recorded and once after the block's
        # code returns (the previous instruction's numbers are then in place): for tests comparing state
        self.instruction_probe: Callable | None = None
        # called as probe(task seq, CopyPlan, "before" | "after") around every copy's bytes moving (seq -1: a
        # host-to-host copy the host thread does itself): how a recorded program's host data is captured and replayed
        self.copy_probe: Callable | None = None
        # the user's file and line of the host call in progress, when a recorded program is replayed (the stack then
        # holds the replayer, not the program); None: found on the stack
        self.caller: tuple[str, int] | None = None

    # -- time and source ------------------------------------------------------------------------
    def us(self, microseconds: float) -> int:
        return round(microseconds * 1e6)

    def caller_src(self, depth: int = 1) -> int:
        """Trace id of the first ``file:line`` outside the simulator's own modules, or -1."""
        return self.src_from(sys._getframe(depth + 1))

    def src_from(self, frame) -> int:
        """Trace id of the first ``file:line`` outside the simulator's own modules, from ``frame`` outwards."""
        if self.caller is not None:
            return self.src_at(*self.caller)
        internal = INTERNAL_FILES
        while frame is not None and frame.f_code.co_filename in internal:
            frame = frame.f_back
        return -1 if frame is None else self.src_at(frame.f_code.co_filename, frame.f_lineno)

    def src_at(self, filename: str, lineno: int) -> int:
        """Trace id of ``file:line`` (interned once per simulation)."""
        key = (filename, lineno)
        ident = self._src_cache.get(key)
        if ident is None:
            ident = self._src_cache[key] = self.trace.src(f"{short_path(filename)}:{lineno}")
        return ident

    def caller_src_text(self) -> str:
        ident = self.caller_src(2)
        return self.trace.srcs.items[ident] if ident >= 0 else ""

    def api(self, name: str, cost_us: float, blocking: bool = False) -> ApiCall:
        return ApiCall(self, name, round(cost_us * 1e6))

    def host_compute(self, name: str, microseconds: float, what: str = "", name_zh: str = "") -> None:
        """Host-side work the program does between API calls (``what``: "tiling", "check", ...; ``name_zh``: its
        name in Chinese, for the views)."""
        start = self.host_now
        self.host_now += round(microseconds * 1e6)
        detail = self.trace.detail(HostWork(what, name_zh))
        name_id = self.trace.name(name)
        self.trace.add(
            start, self.host_now, self.host_lane, Kind.HOST_WORK, name_id, src=self.caller_src(1), detail=detail
        )

    def report(self, finding: Finding) -> None:
        self.findings.append(finding)

    def mark(self, label: str) -> None:
        """A user's mark on the host timeline (no cost): trace viewers show it, the replay can stop at it."""
        detail = self.trace.detail(Mark(str(label)))
        name = self.trace.name(f"mark {label}")
        self.trace.add(
            self.host_now, self.host_now, self.host_lane, Kind.MARK, name, src=self.caller_src(1), detail=detail
        )

    def name_tensor(self, ptr: int, name: str, shape: tuple[int, ...], dtype: str) -> None:
        """Say what a device buffer holds (e.g. "A", (m, k), "float16"): views then draw it as that matrix."""
        alloc = self.devmem.space.find(int(ptr))
        if alloc is None:
            raise ValueError(f"name_tensor: 0x{int(ptr):x} is not a device allocation")
        self.gm_tensors[alloc.ident] = GmTensor(
            name, tuple(int(x) for x in shape), str(dtype), alloc.ptr, int(ptr) - alloc.ptr
        )

    def label_gm(self, ident: int, name: str) -> None:
        """Remember the kernel parameter a device allocation was first passed as (``x``): views name its tiles
        by it when the program never named the buffer. A name another allocation already has gets ``#2``,
        ``#3``... so a label always points at one allocation."""
        if ident in self.gm_labels or ident in self.gm_tensors:
            return
        taken = set(self.gm_labels.values()) | {g.name for g in self.gm_tensors.values()}
        label, k = name, 1
        while label in taken:
            k += 1
            label = f"{name}#{k}"
        self.gm_labels[ident] = label

    def host_copy(self, plan: CopyPlan, call: ApiCall) -> None:
        duration = self.link.duration(H2H, True, plan.count)
        self.trace.add(
            self.host_now,
            self.host_now + duration,
            self.host_lane,
            Kind.COPY,
            self.trace.name("host memcpy"),
            plan.count,
            cause=call.row,
            src=call.src,
        )
        self.host_now += duration
        if self.numerics:
            if self.copy_probe is not None:
                self.copy_probe(-1, plan, "before")
            plan.perform()
            if self.copy_probe is not None:
                self.copy_probe(-1, plan, "after")

    def enqueue_copy(self, plan: CopyPlan, dst: tuple, src: tuple, stream: Stream, call: ApiCall) -> int:
        """Queue a copy on ``stream`` (the host waits for room first); returns its task."""
        (d_alloc, d_off), (s_alloc, s_off) = dst, src
        rt = self.runtime
        task_plan = rt.copy_plan(stream, plan.direction, plan.pinned, plan.count, s_alloc.where, d_alloc.where)
        at = self._room(stream, call)
        copy = [s_alloc.ident, s_off, d_alloc.ident, d_off]
        return rt.submit(stream, task_plan, call.row, call.src, at, payload=plan, copy=copy)

    def enqueue_kernel(self, kernel: Any, stream: Stream, call: ApiCall) -> int:
        """Queue a kernel on ``stream`` (the host waits for room first); returns its task."""
        rt = self.runtime
        plan = rt.kernel_plan(stream, kernel)
        at = self._room(stream, call)
        footprint = None
        if getattr(kernel, "duration_ps", None) is None:  # it runs its own code: what it touches is its own
            footprint = (tuple(getattr(kernel, "reads", ())), tuple(getattr(kernel, "writes", ())))
        return rt.submit(stream, plan, call.row, call.src, at, payload=kernel, footprint=footprint)

    def _room(self, stream: Stream, call: ApiCall) -> int:
        """A stream holds at most ``stream_depth`` tasks: the host waits until the one that many places back
        has finished. Returns when the task is then submitted."""
        depth = self.profile.limits.stream_depth
        tasks = stream.tasks
        if len(tasks) >= depth:
            self.host_block_until(
                [tasks[len(tasks) - depth]],
                f"room in {stream.label} (depth {depth})",
                call,
                on=HostWait("room", stream.ident),
                what_zh=f"{stream_zh(stream.ident)} 腾出空间（队列深度 {depth}）",
            )
        return self.host_now

    # -- blocking -------------------------------------------------------------------------------
    def host_block_until(
        self,
        tasks: list[int] | None,
        what: str,
        call: ApiCall,
        timeout_code: int = C.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
        *,
        on: HostWait,
        what_zh: str,
    ) -> bool:
        """Advance the device until every task of ``tasks`` has finished (None: something no task can do);
        the host waits until the last of them ends (``on`` says for what, as data; ``what_zh``: ``what`` in
        Chinese, for the diagnosis). A wait that can never end is a deadlock. Returns False when the host
        knew them finished already (nothing to wait for)."""
        rt = self.runtime
        if tasks is not None and all(rt.seen_ended(t) for t in tasks):
            return False
        start = self.host_now
        if not rt.wait_for(tasks):
            if self.deadlocked:  # already diagnosed: the same stuck work, asked for again
                raise AclError(
                    timeout_code,
                    f"{call.name} waits for {what}: the device is deadlocked",
                    f"{call.name} 等待{what_zh}：设备已死锁",
                    reported=True,
                )
            finding = diagnose_stuck(
                self,
                f"the host ({call.name} at {call.src_text}) waits for {what}",
                start,
                f"主机（{call.name}，位于 {call.src_text}）等待{what_zh}",
            )
            self.deadlocked = True
            self.report(finding)
            raise AclError(timeout_code, finding.message, finding.message_zh, reported=True)
        end = max(start, *(rt.store.end[t] for t in tasks))
        if end > start:
            self.trace.add(
                start,
                end,
                self.host_lane,
                Kind.WAIT,
                self.trace.name(f"wait: {what}"),
                cause=call.row,
                src=call.src,
                detail=self.trace.detail(on),
            )
            self.host_now = end
        return True

    def raise_stream_error(self, stream: Stream, what: str) -> None:
        """Report (once) the first failure of a task on ``stream`` as the call's return code."""
        if stream.error:
            code, stream.error = stream.error, 0
            raise AclError(
                code,
                f"{what}: a task on {stream.label} failed (see the kernel's finding)",
                f"{what}: {stream_zh(stream.ident)} 上的一个任务失败了（见该核函数的报告）",
            )

    def rt_reset_device(self) -> None:
        self.runtime.run_to_idle()
        self._report_stuck("reset_device", "运行到达 reset_device 时")
        for stream in self.runtime.streams.values():
            stream.closed = True
        self.state.device = None
        self.state.default_stream = None

    def _report_stuck(self, when: str, when_zh: str) -> None:
        """``when_zh``: the whole phrase in Chinese ("运行到达终点时")."""
        if self.runtime.blocked() and not self.deadlocked:
            self.deadlocked = True
            self.report(diagnose_stuck(self, f"the run reached {when}", self.host_now, when_zh))

    # -- stepping and the end -------------------------------------------------------------------
    def step(self) -> bool:
        """Process the next device event; False when nothing is pending."""
        return self.runtime.step()

    def _check_streams(self, trace: TraceData, records: list[TaskRecord]) -> None:
        """The cross-stream memory-consistency check, on every run (its findings join the run's)."""
        self.findings.extend(stream_races(trace, records))

    def _mark_phases(self) -> None:
        """Phase marks on the host lane: work begins when the first copy or kernel is queued, teardown when
        the last one has ended (set-up before: init, device, streams, memory; teardown after: frees, reset)."""
        tasks = self.trace.task_table()
        work = np.isin(tasks["kind"], (TaskKind.COPY, TaskKind.KERNEL))
        if not work.any():
            return
        begin = int(tasks["submit"][work].min())
        last = self.trace.last_end((Kind.COPY, Kind.KERNEL))
        end = begin if last is None else max(begin, last)
        for name, at in (("work", begin), ("teardown", end)):
            detail = self.trace.detail(Phase(name))
            self.trace.add(at, at, self.host_lane, Kind.MARK, self.trace.name(f"phase: {name}"), detail=detail)

    def finish(self) -> RunResult:
        """Run the device to the end and freeze the trace (idempotent)."""
        if self._finished is not None:
            return self._finished
        self.runtime.drain()
        self._report_stuck("its end", "运行到达终点时")
        records = self.runtime.records()
        self._mark_phases()
        trace = self.trace.freeze()
        self._check_streams(trace, records)
        end = int(max(self.host_now, trace.end.max() if len(trace) else 0))
        self._finished = RunResult(
            profile=self.profile,
            trace=trace,
            findings=list(self.findings),
            end_ps=end,
            host_end_ps=self.host_now,
            device_events=self.clock.processed,
            extra=self.extra,
            tasks=records,
            gm=dict(self.gm_tensors),
            gm_labels=dict(self.gm_labels),
        )
        return self._finished


@dataclass(frozen=True)
class GmTensor:
    """What a device buffer holds, as the program named it: a matrix ``shape`` of ``dtype`` at ``offset``."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    ptr: int  # the allocation's device address
    offset: int = 0  # bytes from the allocation's start
