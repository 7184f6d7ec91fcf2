"""Playing the bulk host's log: the host clock, the device, the rows, the task table.

:class:`LogPlayer` is the second half of :class:`~engine.scenarios.pipeline_fast.BulkHost`: at the end
of the section (and before a call that fails, and with numerics at each synchronize) it plays the
calls logged since the last time. Host-only calls advance the host clock by their profile cost (numpy
prefix sums); the calls that meet the device go through :class:`~engine.scenarios.lean_device.LeanDevice`
in order, lazily, the host waiting for room in a full stream, a pageable copy or a stream to drain,
exactly as ``Simulation.host_block_until`` makes it wait; runs of plain submissions whose waits are
already decided (the device was stamped ahead) are played in numpy, the host's lateness as a running
maximum. Then every call and wait becomes its row, every task its task-table entry, its two rows
(stream lane and engine / kernel lane) at the end, and with numerics its bytes or its matmul in the
order the device finished them.
"""

from __future__ import annotations

import numpy as np

from ..copy_engine import D2H, H2D
from ..detail import HostWait
from ..stream import merge_clock
from ..trace import Kind
from .bulk_log import (
    CODE_BITS,
    DRAIN,
    MEMCPY,
    MIN_RUN,
    P_BYTES,
    P_DIR,
    P_FLOPS,
    P_KIND,
    P_NAME,
    P_RES,
    P_RUN,
    P_STREAM,
    P_WHERE,
    PAGEABLE,
    PLAN_SHIFT,
    RES_CORES,
    RES_D2H,
    RES_H2D,
    ROOM,
    SYNC,
    task_clock,
)


class LogPlayer:
    """The playing half of the bulk host (its state is the host's: see ``BulkHost.__init__``)."""

    # -- playing the log ----------------------------------------------------------------------------
    def flush(self) -> None:
        """Play the calls logged since the last flush: host clock, device, rows, task table."""
        sim = self.sim
        trace = sim.trace
        k0, k1 = self._played, len(self._log)
        if k0 == k1:
            return
        log = np.asarray(self._log[k0:k1], dtype=np.int64)
        ops = log & ((1 << CODE_BITS) - 1)
        src = ((log >> CODE_BITS) & ((1 << PLAN_SHIFT) - 1)) - 1
        cost = np.asarray(self._cost, dtype=np.int64)[ops]
        # the calls that meet the device (tasks and synchronizes), with their plans
        dev = np.flatnonzero((ops >= MEMCPY) & (ops <= SYNC))
        plans = log[dev] >> (CODE_BITS + PLAN_SHIFT)
        ready = sim.host_now + np.cumsum(cost)[dev]  # each one's cost paid, if nothing before it waited
        is_copy = ops[dev] == MEMCPY
        copies = np.full(len(dev), -1, dtype=np.int64)
        copies[is_copy] = np.arange(self._played_copies, self._played_copies + int(is_copy.sum()))
        self._played_copies += int(is_copy.sum())
        waits, extra = self._play(k0 + dev, plans, ready, copies)
        # the host rows: every call, stretched by its waits, and the waits
        stretch = np.zeros(len(ops), dtype=np.int64)
        stretch[dev] = extra
        end = sim.host_now + np.cumsum(cost + stretch)
        n = len(ops)
        first = trace.extend(
            start=end - cost - stretch,
            end=end,
            lane=np.full(n, sim.host_lane, dtype=np.int16),
            kind=np.full(n, Kind.CALL, dtype=np.uint8),
            name=np.asarray(self._call_names, dtype=np.int16)[ops],
            src=src.astype(np.int32),
        )
        self._played_rows.append((k0, first))
        self._played_src.append(src)
        if waits:
            calls, w_start, w_end, w_name, w_detail = (np.asarray(c, dtype=np.int64) for c in zip(*waits, strict=True))
            calls -= k0
            trace.extend(
                start=w_start,
                end=w_end,
                lane=np.full(len(calls), sim.host_lane, dtype=np.int16),
                kind=np.full(len(calls), Kind.WAIT, dtype=np.uint8),
                name=w_name.astype(np.int16),
                src=src[calls].astype(np.int32),
                cause=(calls + first).astype(np.int32),
                detail=w_detail.astype(np.int32),
            )
        sim.host_now = int(end[-1])
        self._played = k1

    def _play(self, calls: np.ndarray, plans: np.ndarray, ready: np.ndarray, copies: np.ndarray):
        """Run the logged calls that meet the device: their call numbers, plans, when each one's cost is
        paid if nothing waited before it, and copy entries (-1: not a copy). Return the host's waits
        ``(call, start, end, name, detail)`` and each call's total wait."""
        sim = self.sim
        lean = self._device
        table = self._plan_table()
        n = len(plans)
        stream = table["stream"][plans]
        self._calls, self._run_streams = calls.tolist(), stream
        is_sync = table["res"][plans] < 0
        on_dev = np.flatnonzero(~is_sync)  # the tasks, by position
        first_task = len(self.t_plan)
        n_new = len(on_dev)
        task_of = np.full(n, -1, dtype=np.int64)
        task_of[on_dev] = np.arange(first_task, first_task + n_new)
        new_plans = plans[on_dev]
        self.t_plan.extend(new_plans.tolist())
        self.t_call.extend(calls[on_dev].tolist())
        self.t_copy.extend(copies[on_dev].tolist())
        lean.add_tasks(
            new_plans.tolist(),
            stream[on_dev].tolist(),
            table["res"][new_plans].tolist(),
            table["run"][new_plans].tolist(),
        )
        # per call, the task the host must see finished before going on: for a task, the one ``depth``
        # places back on its stream (a full stream); for a synchronize, its stream's last one
        target = np.full(n, -1, dtype=np.int64)
        count = np.zeros(n_new, dtype=np.int64)
        depth = self._depth
        for s, mine in enumerate(self.s_tasks):
            here = np.flatnonzero(stream == s)
            if not len(here):
                continue
            tasks = here[~is_sync[here]]
            known = len(mine)
            mine.extend(task_of[tasks].tolist())
            ids = np.asarray(mine, dtype=np.int64)
            place = known + np.arange(len(tasks))  # each task's place on its stream
            count[task_of[tasks] - first_task] = self.s_count[s] + place + 1
            full = place >= depth
            target[tasks[full]] = ids[place[full] - depth]
            syncs = here[is_sync[here]]
            before = known + np.searchsorted(tasks, syncs)  # tasks of the stream before each synchronize
            target[syncs] = np.where(before > 0, ids[before - 1], -1)
        self.t_count.extend(count.tolist())
        version = first_version = len(self.host_vc) - 1
        self.t_version.extend([version] * n_new)
        staged_mask = table["pageable"][plans]
        pageable = staged_mask.tolist()
        queues, running, t_end, t_submit = lean.queues, lean.running, lean.t_end, lean.t_submit
        run_to = lean.run_to
        t_version = self.t_version
        waits: list[tuple] = []
        extra = [0] * n
        shift = 0  # waits so far in this flush
        submitted = first_task
        # runs of plain submissions (pinned tasks) whose waits are decided are played in numpy
        special = np.flatnonzero(is_sync | staged_mask)
        reach = np.maximum.accumulate(target) if n else target  # the furthest task waited for so far
        targets, tasks, paid_at, streams = target.tolist(), task_of.tolist(), ready.tolist(), stream.tolist()
        j = 0
        # per call: the task the host waits for first, the task it submits, when its cost is paid, its stream.
        # A wait lasts until the task's end: the device reaches it now, or reached it already (stamping)
        while j < n:
            x, t, s = targets[j], tasks[j], streams[j]
            if t >= 0 and not pageable[j]:
                stop = self._plain_run(j, special, reach)
                if stop - j >= MIN_RUN:
                    shift, submitted = self._submit_run(j, stop, target, task_of, ready, stream, shift, waits, extra)
                    if version != first_version:
                        t_version[tasks[j] : submitted] = [version] * (submitted - tasks[j])
                    j = stop
                    continue
            h = paid_at[j] + shift
            if x >= 0:
                if t_end[x] < 0:
                    run_to(x, submitted)
                end = t_end[x]
                if end > h:
                    waits.append((calls[j], h, end, *self._wait_row(ROOM if t >= 0 else DRAIN, s, x)))
                    extra[j] = end - h
                    shift += end - h
                    h = end
            j += 1
            if t < 0:  # synchronize_stream: the host now knows everything its stream did
                if self._learn(self._vc(x) if x >= 0 else self.base_vc[s]):
                    version += 1
                continue
            if version != first_version:
                t_version[t] = version
            if running[s] < 0 and not queues[s]:
                lean.submit(t, h)  # an idle stream: the task arrives at h
            else:
                t_submit[t] = h
                queues[s].append(t)
            submitted = t + 1
            if pageable[j - 1]:  # staged through a pinned buffer: the host waits for the copy
                if t_end[t] < 0:
                    run_to(t, submitted)
                end = t_end[t]
                if end > h:
                    waits.append((calls[j - 1], h, end, *self._wait_row(PAGEABLE, s, t)))
                    extra[j - 1] += end - h
                    shift += end - h
                if self._learn(self._vc(t)):
                    version += 1
        # the task table: one entry per task submitted in this flush
        if n_new:
            first = sim.trace.extend_tasks(
                seq=np.arange(self._first_seq + first_task, self._first_seq + first_task + n_new),
                stream=table["ident"][new_plans],
                kind=table["kind"][new_plans],
                submit=np.asarray(t_submit[first_task:], dtype=np.int64),
                event=np.full(n_new, -1),
                direction=table["dir"][new_plans],
                flops=table["flops"][new_plans],
            )
            self.t_detail.extend(range(first, first + n_new))
        sim.runtime._seq = self._first_seq + first_task + n_new - 1
        return waits, extra

    def _plan_table(self) -> dict[str, np.ndarray]:
        """The plans' columns as arrays (per plan id)."""
        plans = self._plans
        if self._table is None or len(self._table["stream"]) != len(plans):
            idents = [st.ident for st in self._streams]
            self._table = {
                "stream": np.array([p[P_STREAM] for p in plans], dtype=np.int64),
                "ident": np.array([idents[p[P_STREAM]] for p in plans], dtype=np.int64),
                "res": np.array([p[P_RES] for p in plans], dtype=np.int64),
                "run": np.array([p[P_RUN] for p in plans], dtype=np.int64),
                "kind": np.array([p[P_KIND] for p in plans], dtype=np.int64),
                "name": np.array([p[P_NAME] for p in plans], dtype=np.int16),
                "bytes": np.array([p[P_BYTES] for p in plans], dtype=np.int64),
                "dir": np.array([p[P_DIR] for p in plans], dtype=np.int64),
                "flops": np.array([p[P_FLOPS] for p in plans], dtype=np.int64),
                "pageable": np.array([p[P_WHERE] is not None and not p[P_WHERE][2] for p in plans], dtype=bool),
            }
        return self._table

    def _plain_run(self, j: int, special: np.ndarray, reach: np.ndarray) -> int:
        """End of the run of plain submissions from call ``j`` (pinned tasks, no synchronize) whose waits are
        decided (every task they wait for has ended) and whose streams are busy (no task arrives at an
        idle stream)."""
        lean = self._device
        stop = len(reach)
        i = np.searchsorted(special, j)
        if i < len(special):
            stop = int(special[i])
        stop = min(stop, int(np.searchsorted(reach, lean.ended_below())))  # reach[k] < ended_below before it
        idle = [s for s, r in enumerate(lean.running) if r < 0 and not lean.queues[s]]
        if idle and stop > j:
            first = np.flatnonzero(np.isin(self._run_streams[j:stop], idle))
            if len(first):
                stop = j + int(first[0])
        return stop

    def _submit_run(self, j, stop, target, task_of, ready, stream, shift, waits, extra) -> tuple[int, int]:
        """Calls ``j..stop`` (a plain run): each waits for its task's end if that is after it paid its cost,
        then submits its task. Returns the waits so far and the tasks submitted."""
        lean = self._device
        t_end = lean.t_end
        xs = target[j:stop]
        ends = np.array([t_end[x] if x >= 0 else -1 for x in xs.tolist()], dtype=np.int64)
        paid = ready[j:stop]
        after = np.maximum.accumulate(np.maximum(ends - paid, shift))  # the host's lateness after each call
        before = np.empty_like(after)
        before[0] = shift
        before[1:] = after[:-1]
        ss = stream[j:stop]
        waited = np.flatnonzero(after > before)
        calls, wait_row = self._calls, self._wait_row
        for i, start, end, s, x, extra_i in zip(
            waited.tolist(),
            (paid + before)[waited].tolist(),
            ends[waited].tolist(),
            ss[waited].tolist(),
            xs[waited].tolist(),
            (after - before)[waited].tolist(),
            strict=True,
        ):
            waits.append((calls[j + i], start, end, *wait_row(ROOM, s, x)))
            extra[j + i] = extra_i
        first, last = int(task_of[j]), int(task_of[stop - 1]) + 1  # consecutive tasks
        lean.t_submit[first:last] = (paid + after).tolist()
        queues = lean.queues
        for s in np.unique(ss).tolist():
            queues[s].extend(task_of[j:stop][ss == s].tolist())
        return int(after[-1]), last

    def _wait_row(self, phase: int, s: int, x: int) -> tuple[int, int]:
        """(name id, detail id) of a host wait's row (on lean stream ``s``, for task ``x``)."""
        if phase != PAGEABLE:  # the same for every wait of its kind on its stream
            found = self._wait_rows.get((phase, s))
            if found is None:
                found = self._wait_rows[(phase, s)] = self._new_wait_row(phase, s, x)
            return found
        return self._new_wait_row(phase, s, x)

    def _new_wait_row(self, phase: int, s: int, x: int) -> tuple[int, int]:
        stream = self._streams[s]
        if phase == ROOM:
            what, on = f"room in {stream.label} (depth {self._depth})", HostWait("room", stream.ident)
        elif phase == PAGEABLE:
            what, on = "a pageable copy (staged through a pinned buffer)", HostWait("pageable", self._first_seq + x)
        else:
            what, on = f"{stream.label} to drain", HostWait("stream", stream.ident)
        return self._name(f"wait: {what}"), self.sim.trace.detail(on)

    def _vc(self, t: int) -> dict:
        """Task ``t``'s vector clock (what ``DeviceRuntime.submit`` gives it)."""
        s = self._plans[self.t_plan[t]][P_STREAM]
        return task_clock(self.base_vc[s], self.host_vc[self.t_version[t]], self._streams[s].ident, self.t_count[t])

    def _learn(self, vc: dict) -> bool:
        """The host synchronised with work of clock ``vc``; True if that taught it something new."""
        known = self.host_vc[-1]
        if all(known.get(k, 0) >= v for k, v in vc.items()):
            return False
        merged = dict(known)
        merge_clock(merged, vc)
        self.host_vc.append(merged)
        return True

    def _move_data(self) -> None:
        """With numerics: the tasks that finished since the last call move their bytes (a copy) or compute
        their result (a matmul), in the order the device finished them, as the runtime does at each task's
        end."""
        sim = self.sim
        finished = self._device.finished
        copies, allocs, plans = self._copies, self._copy_allocs, self._plans
        for t in finished[self._moved :]:
            c = self.t_copy[t]
            if c < 0:
                self._plan_kernels[self.t_plan[t]].finish()
                continue
            src, dst = allocs[2 * c], allocs[2 * c + 1]
            s_off, d_off, n = copies[4 * c + 1], copies[4 * c + 3], plans[self.t_plan[t]][P_BYTES]
            d_mem = sim.devmem if dst.where == "device" else sim.hostmem
            s_mem = sim.devmem if src.where == "device" else sim.hostmem
            d_mem.view(dst)[d_off : d_off + n] = s_mem.view(src)[s_off : s_off + n]
        self._moved = len(finished)

    def _device_rows(self) -> None:
        """Two rows per task, in the order tasks finished: its stream's lane, and its engine or the
        AI-core array (a kernel's row there starts after the launch overhead)."""
        sim = self.sim
        rt = sim.runtime
        lean = self._device
        order = np.asarray(lean.finished, dtype=np.int64)
        table = self._plan_table()
        plan = np.asarray(self.t_plan, dtype=np.int64)[order]
        res = table["res"][plan]
        start = np.asarray(lean.t_start, dtype=np.int64)[order]
        end = np.asarray(lean.t_end, dtype=np.int64)[order]
        unit = np.asarray(lean.t_unit, dtype=np.int64)[order]
        stream_lanes = np.array([s.lane for s in self._streams], dtype=np.int16)
        stream_lane = stream_lanes[table["stream"][plan]]
        calls = np.asarray(self.t_call, dtype=np.int64)[order]
        first_calls, first_rows = (np.array(c, dtype=np.int64) for c in zip(*self._played_rows, strict=True))
        played = np.searchsorted(first_calls, calls, side="right") - 1
        cause = (first_rows[played] + calls - first_calls[played]).astype(np.int32)
        src = np.concatenate(self._played_src)[calls].astype(np.int32)
        second_lane = np.full(len(order), rt.op_lane(), dtype=np.int16)
        for r, direction in ((RES_H2D, H2D), (RES_D2H, D2H)):
            sel = res == r
            second_lane[sel] = np.array(rt.pools[direction].lanes, dtype=np.int16)[unit[sel]]
        is_kernel = res == RES_CORES
        kind = np.where(is_kernel, Kind.KERNEL, Kind.COPY).astype(np.uint8)
        second_start = np.where(is_kernel, start + self._kernel_start, start)
        name = table["name"][plan]
        nbytes = table["bytes"][plan]
        detail = np.asarray(self.t_detail, dtype=np.int32)[order]

        def twice(x: np.ndarray) -> np.ndarray:
            return np.concatenate([x, x])

        sim.trace.extend(
            start=np.concatenate([start, second_start]),
            end=twice(end),
            lane=np.concatenate([stream_lane, second_lane]),
            kind=twice(kind),
            name=twice(name),
            nbytes=twice(nbytes),
            cause=twice(cause),
            src=twice(src),
            detail=twice(detail),
        )
