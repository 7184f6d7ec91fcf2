"""Lesson 1 check (runs in the grader): result, return codes, no leaks, read after synchronising, failure handled;
on the visible runs and on the hidden cases (another length; a device allocation that fails)."""

from __future__ import annotations

import numpy as np

from engine.device.stream import TaskKind
from engine.host.acl_codes import (
    ACL_ERROR_RT_INVALID_DEVICEID,
    ACL_ERROR_RT_MEMORY_ALLOCATION,
    ACL_SUCCESS,
    error_name,
)
from engine.trace import Kind
from lessons.checks import Criterion, bi, compare, d2h_from_kernel, kernel_flops
from lessons.selectors import trace_lane_facts

from .scenario import inputs

MAIN_RUN = "main"
SYNC_CALLS = ("acl.rt.synchronize_stream", "acl.rt.synchronize_device", "acl.rt.synchronize_event")
TEARDOWN_CALLS = ("acl.rt.free", "acl.rt.free_host", "acl.rt.destroy_stream", "acl.rt.reset_device", "acl.finalize")


def _leaks(state: dict) -> list[str]:
    out = []
    if state.get("device_live"):
        out.append(f"{state['device_live']} device buffer(s) not freed")
    if state.get("pinned_live"):
        out.append(f"{state['pinned_live']} pinned host buffer(s) not freed")
    if state.get("streams_open"):
        out.append(f"{state['streams_open']} stream(s) not destroyed")
    if state.get("device_set"):
        out.append("the device was not reset")
    if state.get("initialized"):
        out.append("acl.finalize was not called")
    return out


def _host_rows(run, kind: Kind, names: tuple[str, ...] | None = None) -> np.ndarray:
    t = run.trace
    facts = trace_lane_facts(t)
    host = [i for i, f in enumerate(facts) if f.kind == "host"]
    keep = np.isin(t.lane, host) & (t.kind == kind)
    if names is not None:
        keep &= np.isin(t.name, [i for i, n in enumerate(t.names) if n in names])
    return np.flatnonzero(keep)


def synchronized(run, reads: list) -> tuple[bool, str]:
    """Did the host wait for the device-to-host copy of the result before it read that memory
    (acl.util.ptr_to_numpy of the copy's destination) or started tearing down?"""
    copies = [k for k in run.tasks if k.kind == TaskKind.COPY and k.end >= 0 and k.reads and k.writes]
    copies = [k for k in copies if k.reads[0][0][0] == "device" and k.writes[0][0][0] != "device"]
    if not copies:
        return False, "no device-to-host copy"
    copy = max(copies, key=lambda k: k.submit)
    t = run.trace
    teardown = [int(t.start[i]) for i in _host_rows(run, Kind.CALL, TEARDOWN_CALLS) if t.start[i] >= copy.submit]
    dest = list(copy.writes[0][0])
    looked = [int(r[0]) for r in reads if [r[1], r[2]] == dest and r[0] >= copy.submit]
    deadline = min(teardown + looked) if teardown + looked else run.host_end_ps
    what = "reads the result" if looked and min(looked) == deadline else "starts tearing down"
    waits = [*_host_rows(run, Kind.CALL, SYNC_CALLS), *_host_rows(run, Kind.WAIT)]
    for i in waits:
        if t.start[i] >= copy.submit and t.end[i] >= copy.end and t.end[i] <= deadline:
            return True, f"{t.names[int(t.name[i])]} at {t.start[i] / 1e6:.2f} us"
    return False, (
        f"the copy back ends at {copy.end / 1e6:.2f} us; the host {what} at {deadline / 1e6:.2f} us without "
        "waiting for it"
    )


def _success(data, name: str, x, y) -> list[Criterion]:
    """The criteria of a run on device 0 that must succeed: the result, the code, no leak, the wait, the device."""
    out = [compare("result", data.output(f"z_{name}"), x + y)]
    ret = data.value(f"ret_{name}")
    out.append(
        Criterion(
            "return_codes",
            ret == ACL_SUCCESS,
            f"{ret}" if not isinstance(ret, int) else f"{error_name(ret)} ({ret})",
            "ACL_SUCCESS (0)",
        )
    )
    leaks = _leaks(data.observed(f"state_{name}") or {})
    out.append(
        Criterion(
            "no_leaks",
            not leaks,
            "; ".join(leaks) or bi("nothing left", "无残留"),
            bi(
                "every buffer freed, stream destroyed, device reset, acl finalized",
                "释放全部内存、销毁流、复位设备、调用 finalize",
            ),
        )
    )
    ok, how = synchronized(data.run(name), data.observed(f"reads_{name}") or [])
    out.append(
        Criterion(
            "synchronized",
            ok,
            how,
            bi(
                "a synchronize (or blocking copy) that waits for the copy back, before teardown",
                "在释放资源之前，有一次等待结果拷贝完成的同步（或阻塞拷贝）",
            ),
        )
    )
    run = data.run(name)
    flops, back = kernel_flops(run), d2h_from_kernel(run)
    out.append(
        Criterion(
            "on_device",
            flops >= x.size and back >= x.nbytes,
            f"{flops} kernel flops; {back} B copied back from kernel output",
            f">= {x.size} flops (one add per element); >= {x.nbytes} B copied back from what the kernel wrote",
        )
    )
    return out


def _failure(data, name: str, code: int) -> Criterion:
    """The criterion of a run in which one call fails with ``code``: (None, code), that one failure, nothing left."""
    bad = data.run(name)
    errors = int((bad.trace.kind == Kind.ERROR).sum())
    ret = data.value(f"ret_{name}")
    leaks = _leaks(data.observed(f"state_{name}") or {})
    handled = ret == code and data.output(f"z_{name}") is None and not leaks and errors == 1
    shown = f"{error_name(ret)} ({ret})" if isinstance(ret, int) else str(ret)
    detail = [f"returned {shown}", f"{errors} failing call(s)", *leaks]
    return Criterion(
        "failure_handled",
        handled,
        "; ".join(detail),
        f"(None, {error_name(code)} ({code})), 1 failing call, acl finalized",
    )


def judge(data, ctx) -> list[Criterion]:
    main = _success(data, "main", *inputs())
    return [*main[:4], _failure(data, "bad_device", ACL_ERROR_RT_INVALID_DEVICEID), main[4]]


def judge_hidden(data, ctx, case) -> list[Criterion]:
    if case.kind == "alloc_fails":
        return [_failure(data, case.run, ACL_ERROR_RT_MEMORY_ALLOCATION)]
    return _success(data, case.run, *inputs(case.params["n"], case.params["seed"]))
