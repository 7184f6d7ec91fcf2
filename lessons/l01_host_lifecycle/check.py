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


def _leaks(state: dict) -> list[dict]:
    out = []
    if state.get("device_live"):
        n = state["device_live"]
        out.append(bi(f"{n} device buffer(s) not freed", f"{n} 个设备缓冲区未释放"))
    if state.get("pinned_live"):
        n = state["pinned_live"]
        out.append(bi(f"{n} pinned host buffer(s) not freed", f"{n} 个锁页主机缓冲区未释放"))
    if state.get("streams_open"):
        n = state["streams_open"]
        out.append(bi(f"{n} stream(s) not destroyed", f"{n} 个流未销毁"))
    if state.get("device_set"):
        out.append(bi("the device was not reset", "设备未复位"))
    if state.get("initialized"):
        out.append(bi("acl.finalize was not called", "未调用 acl.finalize"))
    return out


def _joined(parts: list[dict]) -> dict:
    return bi("; ".join(p["en"] for p in parts), "；".join(p["zh"] for p in parts))


def _host_rows(run, kind: Kind, names: tuple[str, ...] | None = None) -> np.ndarray:
    t = run.trace
    facts = trace_lane_facts(t)
    host = [i for i, f in enumerate(facts) if f.kind == "host"]
    keep = np.isin(t.lane, host) & (t.kind == kind)
    if names is not None:
        keep &= np.isin(t.name, [i for i, n in enumerate(t.names) if n in names])
    return np.flatnonzero(keep)


def synchronized(run, reads: list) -> tuple[bool, dict]:
    """Did the host wait for the device-to-host copy of the result before it read that memory
    (acl.util.ptr_to_numpy of the copy's destination) or started tearing down?"""
    copies = [k for k in run.tasks if k.kind == TaskKind.COPY and k.end >= 0 and k.reads and k.writes]
    copies = [k for k in copies if k.reads[0][0][0] == "device" and k.writes[0][0][0] != "device"]
    if not copies:
        return False, bi("no device-to-host copy", "没有设备到主机的拷贝")
    copy = max(copies, key=lambda k: k.submit)
    t = run.trace
    teardown = [int(t.start[i]) for i in _host_rows(run, Kind.CALL, TEARDOWN_CALLS) if t.start[i] >= copy.submit]
    dest = list(copy.writes[0][0])
    looked = [int(r[0]) for r in reads if [r[1], r[2]] == dest and r[0] >= copy.submit]
    deadline = min(teardown + looked) if teardown + looked else run.host_end_ps
    reading = looked and min(looked) == deadline
    what = bi("reads the result", "读取结果") if reading else bi("starts tearing down", "开始释放资源")
    waits = [*_host_rows(run, Kind.CALL, SYNC_CALLS), *_host_rows(run, Kind.WAIT)]
    for i in waits:
        if t.start[i] >= copy.submit and t.end[i] >= copy.end and t.end[i] <= deadline:
            call, at = t.names[int(t.name[i])], f"{t.start[i] / 1e6:.2f}"
            return True, bi(f"{call} at {at} us", f"{call}，于 {at} us")
    end, when = f"{copy.end / 1e6:.2f}", f"{deadline / 1e6:.2f}"
    return False, bi(
        f"the copy back ends at {end} us; the host {what['en']} at {when} us without waiting for it",
        f"拷回在 {end} us 结束；主机在 {when} us {what['zh']}，没有等待它",
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
            _joined(leaks) if leaks else bi("nothing left", "无残留"),
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
            bi(
                f"{flops} kernel flops; {back} B copied back from kernel output",
                f"核函数 {flops} 次运算；从核函数输出拷回 {back} B",
            ),
            bi(
                f">= {x.size} flops (one add per element); >= {x.nbytes} B copied back from what the kernel wrote",
                f">= {x.size} 次运算（每个元素一次加法）；从核函数写出的数据拷回 >= {x.nbytes} B",
            ),
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
    detail = [
        bi(f"returned {shown}", f"返回 {shown}"),
        bi(f"{errors} failing call(s)", f"{errors} 个失败的调用"),
        *leaks,
    ]
    return Criterion(
        "failure_handled",
        handled,
        _joined(detail),
        bi(
            f"(None, {error_name(code)} ({code})), 1 failing call, acl finalized",
            f"(None, {error_name(code)} ({code}))，1 个失败的调用，已调用 acl.finalize",
        ),
    )


def judge(data, ctx) -> list[Criterion]:
    main = _success(data, "main", *inputs())
    return [*main[:4], _failure(data, "bad_device", ACL_ERROR_RT_INVALID_DEVICEID), main[4]]


def judge_hidden(data, ctx, case) -> list[Criterion]:
    if case.kind == "alloc_fails":
        return [_failure(data, case.run, ACL_ERROR_RT_MEMORY_ALLOCATION)]
    return _success(data, case.run, *inputs(case.params["n"], case.params["seed"]))
