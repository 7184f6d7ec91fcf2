"""The pipeline's host call log and the runtime's fast mode produce the call-by-call run's trace, task table
and task records, exactly."""

import dataclasses

import numpy as np
import pytest

from engine import Simulation, load_profile
from engine.device.consistency import stream_races
from engine.scenarios.pipeline import run as run_pipeline
from engine.trace import COLUMN_NAMES, TASK_DETAIL


def resolved(t):
    """Every stored column with ids turned into what they mean (ids depend on interning order)."""
    cols = {c: np.asarray(t.columns[c]) for c in COLUMN_NAMES}
    cols["name"] = np.array(t.names, dtype=object)[t.name]
    cols["lane"] = np.array([lane.label for lane in t.lanes], dtype=object)[t.lane]
    cols["src"] = np.array(["", *t.srcs], dtype=object)[t.src + 1]
    cols["detail"] = np.array([repr(t.detail_of(i)) for i in range(len(t))], dtype=object)
    return cols  # in the trace's order: rows, and the rows their causes point at, in the same places


def events(fast, profile, numerics=False, **params):
    sim = Simulation(profile, numerics=numerics, fast=fast)
    outcome = run_pipeline(sim, seed=0, **params)
    result = sim.finish()
    t = result.trace
    return outcome, result, resolved(t)


def shallow_profile():
    """910B1 with streams only 5 tasks deep, so the host blocks on full streams."""
    p = load_profile("ascend910b1")
    return dataclasses.replace(p, limits=dataclasses.replace(p.limits, stream_depth=5))


CASES = [
    ("ascend910b1", {"n": 64, "batches": 7, "streams": 3, "pageable": False}),
    ("ascend910b1", {"n": 512, "batches": 6, "streams": 2, "pageable": True}),
    ("measured-accelerator", {"n": 1024, "batches": 9, "streams": 4, "pageable": False}),
    ("measured-accelerator", {"n": 256, "batches": 5, "streams": 1, "pageable": True}),
    (shallow_profile(), {"n": 64, "batches": 12, "streams": 2, "pageable": False}),
    (shallow_profile(), {"n": 128, "batches": 8, "streams": 3, "pageable": True}),
    ("ascend910b1", {"n": 128, "batches": 5, "streams": 2, "pageable": False, "sync_each": True}),
]


@pytest.mark.parametrize(("profile", "params"), CASES)
def test_bulk_pipeline_equals_call_by_call(profile, params):
    slow_outcome, slow, slow_cols = events(False, profile, **params)
    fast_outcome, fast, fast_cols = events(True, profile, **params)
    assert fast_outcome.details.get("fast_path") is True and not slow_outcome.details.get("fast_path")
    assert len(slow.trace) == len(fast.trace)
    for c in COLUMN_NAMES:
        assert list(slow_cols[c]) == list(fast_cols[c]), c
    for name, column in slow.trace.tasks.items():
        np.testing.assert_array_equal(column, fast.trace.tasks[name], err_msg=name)
    assert slow.end_ps == fast.end_ps and slow.host_end_ps == fast.host_end_ps
    assert slow.findings == fast.findings == []
    # the task history: same records, names compared as text
    assert len(slow.tasks) == len(fast.tasks) == 4 * params["batches"]
    for a, b in zip(slow.tasks, fast.tasks, strict=True):
        da, db = dataclasses.asdict(a), dataclasses.asdict(b)
        assert slow.trace.names[da.pop("name")] == fast.trace.names[db.pop("name")]
        assert slow.trace.srcs[da.pop("src")] == fast.trace.srcs[db.pop("src")]
        assert da == db
    # every device event points at the host call that caused it, and the batch calls name their own lines
    for t in (slow.trace, fast.trace):
        device = np.flatnonzero(np.isin(t.kind, (2, 3)))  # COPY, KERNEL
        assert (t.cause[device] >= 0).all()
        host_lane = t.lane_id("Host", "host thread")
        assert (t.lane[t.cause[device]] == host_lane).all()
        assert (t.detail[device] >= TASK_DETAIL).all()
        lines = {t.srcs[s] for s in t.src[device]}
        assert len(lines) == 4 and all(line.startswith("engine/scenarios/pipeline.py:") for line in lines)


def test_bulk_tasks_are_checked_for_cross_stream_races():
    """The bulk path keeps the task history, so the cross-stream check has something to check: a copy
    out of a buffer that another stream's batch overwrites is found on both paths."""
    found = []
    for fast in (False, True):
        sim = Simulation("ascend910b1", numerics=False, fast=fast)
        run_pipeline(sim, seed=0, n=64, batches=4, streams=2, pageable=False)
        result = sim.finish()
        assert len(result.tasks) == 16
        # a stream-local program has no race; pretend stream 2's device C buffer is stream 1's
        records = list(result.tasks)
        c1 = records[2].writes[0]  # batch 0's matmul writes its stream's C
        target = next(i for i, r in enumerate(records) if r.stream != records[2].stream and r.kind == 1)
        records[target] = dataclasses.replace(records[target], writes=(c1,))
        found.append(len(stream_races(result.trace, records)))
    assert found[0] == found[1] > 0


def _section_with_errors(host, handles, dev):
    """A batch section where some calls fail: bad sizes, pointers, kinds, handles, a double free."""
    from engine.host.acl_codes import ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE
    from engine.scenarios.pipeline import host_buffers, submit_batch

    s = handles[0]
    rets = []
    ins, out = host_buffers(host, 64, False, None)
    rets.append(host.rt.memcpy_async(dev[0][0], 100, ins[0], 8192, ACL_MEMCPY_HOST_TO_DEVICE, s))  # count > dst_max
    rets.append(host.rt.memcpy_async(dev[0][0], 8192, ins[0] + 16, 8192, ACL_MEMCPY_HOST_TO_DEVICE, s))  # overrun
    submit_batch(host, s, dev[0], ins, out, 64)
    rets.append(host.rt.memcpy_async(dev[0][0], 8192, ins[0], 8192, ACL_MEMCPY_DEVICE_TO_HOST, s))  # wrong kind
    rets.append(host.rt.memcpy_async(dev[0][0], 4096, ins[0], 4096, ACL_MEMCPY_HOST_TO_DEVICE, handles[1]))  # fine
    rets.append(host.rt.synchronize_stream(0x1234))  # not a stream
    rets.append(host.op.matmul(dev[0][0], dev[0][1], dev[0][2], 64, 64, 65, s))  # B too small
    submit_batch(host, handles[1], dev[1], ins, out, 64)
    for p in (*ins, out):
        rets.append(host.rt.free_host(p))
    rets.append(host.rt.free_host(ins[0]))  # double free
    rets.append(host.rt.malloc_host(0)[1])
    for h in handles:
        rets.append(host.rt.synchronize_stream(h))
    return rets


def _run_section(bulk, strict=False):
    from engine.host.call_log import HostCallLog
    from engine.scenarios.pipeline import open_device

    sim = Simulation("ascend910b1", numerics=False, strict=strict, fast=bulk)
    handles, dev = open_device(sim.acl, 2, 64 * 64 * 2)
    host = HostCallLog(sim) if bulk else sim.acl
    rets = _section_with_errors(host, handles, dev)
    if bulk:
        host.finish()
    return rets, sim.finish()


def test_failing_calls_give_the_same_codes_rows_and_findings_on_both_hosts():
    slow_rets, slow = _run_section(False)
    fast_rets, fast = _run_section(True)
    assert slow_rets == fast_rets and sum(1 for r in slow_rets if r) == 7
    cols_slow, cols_fast = resolved(slow.trace), resolved(fast.trace)
    for c in COLUMN_NAMES:
        assert list(cols_slow[c]) == list(cols_fast[c]), c
    assert slow.findings == fast.findings
    kinds = [f.kind for f in slow.findings]
    # seven failed calls, and the cross-stream check finds the two streams sharing host buffers unordered
    assert kinds.count("acl-error") == 7 and kinds.count("race") == 3 and len(kinds) == 10
    assert [dataclasses.replace(t, name=0, src=0) for t in slow.tasks] == [
        dataclasses.replace(t, name=0, src=0) for t in fast.tasks
    ]
    # the columnar footprints pick the same tasks as the records do, and only the ones that can race
    from engine.device.stream import TaskRecords

    shared = fast.tasks.shared_tasks()
    assert shared == TaskRecords(list(fast.tasks)).shared_tasks() == slow.tasks.shared_tasks()
    assert 0 < len(shared) < len(fast.tasks)


def test_a_failing_call_raises_on_both_hosts_when_strict():
    from engine.host.acl_codes import AclError

    for bulk in (False, True):
        with pytest.raises(AclError, match="exceeds dst_max"):
            _run_section(bulk, strict=True)


def test_bulk_task_records_are_built_when_read_and_pickle():
    import pickle

    sim = Simulation("ascend910b1", numerics=False, fast=True)
    run_pipeline(sim, seed=0, n=64, batches=6, streams=2, pageable=True)
    result = sim.finish()
    assert type(result.tasks).__name__ == "TaskRecords" and len(result.tasks) == 24
    again = pickle.loads(pickle.dumps(result))
    assert again.tasks == result.tasks == list(result.tasks)
    assert result.tasks[-1] == list(result.tasks)[-1] and result.tasks[3:5] == list(result.tasks)[3:5]
    assert all(r.end > r.start >= r.submit for r in result.tasks)


@pytest.mark.parametrize(("profile", "params"), [CASES[0], CASES[1], CASES[4], CASES[6]])
def test_bulk_pipeline_with_numerics_equals_call_by_call(profile, params):
    """With numerics the bulk host moves each copy's bytes and computes each matmul in the order the device
    finished them: the same trace, and the program finds the same numbers."""
    slow_outcome, slow, slow_cols = events(False, profile, numerics=True, **params)
    fast_outcome, fast, fast_cols = events(True, profile, numerics=True, **params)
    assert fast_outcome.details.pop("fast_path") is True
    assert slow_outcome.correct is fast_outcome.correct is True
    assert slow_outcome.details == fast_outcome.details  # the worst error over every batch, to the bit
    for c in COLUMN_NAMES:
        assert list(slow_cols[c]) == list(fast_cols[c]), c
    assert records(slow) == records(fast) and slow.findings == fast.findings == []


def records(result):
    """The task records with their name and source line as text (ids depend on interning order)."""
    t = result.trace
    return [dataclasses.replace(r, name=t.names[r.name], src=t.srcs[r.src]) for r in result.tasks]


def test_bulk_host_outputs_are_the_call_by_call_outputs_after_each_synchronize():
    """Outputs read right after a synchronize (before the section ends) hold the same bytes on both hosts."""
    from engine.host.call_log import HostCallLog
    from engine.scenarios.pipeline import batch_inputs, host_buffers, open_device, submit_batch

    outputs = []
    for bulk in (False, True):
        sim = Simulation("ascend910b1", numerics=True, fast=bulk)
        handles, dev = open_device(sim.acl, 2, 64 * 64 * 2)
        host = HostCallLog(sim) if bulk else sim.acl
        rng = np.random.default_rng(1)
        a, b = (rng.uniform(-1, 1, (64, 64)).astype(np.float16) for _ in range(2))
        seen = []
        for i in range(5):
            ins, out = host_buffers(host, 64, i % 2 == 1, batch_inputs(a, b, i))
            submit_batch(host, handles[i % 2], dev[i % 2], ins, out, 64)
            assert host.rt.synchronize_stream(handles[i % 2]) == 0
            seen.append(np.array(out if i % 2 else host.util.ptr_to_numpy(out, (64, 64), np.float16)))
        if bulk:
            host.finish()
        outputs.append(seen)
    for slow, fast in zip(*outputs, strict=True):
        assert slow.tobytes() == fast.tobytes() and np.abs(fast).max() > 0


def _two_h2d_engines():
    p = load_profile("ascend910b1")
    return dataclasses.replace(p, host=dataclasses.replace(p.host, copy_engines_h2d=2))


def _depth(profile, depth):
    p = load_profile(profile)
    return dataclasses.replace(p, limits=dataclasses.replace(p.limits, stream_depth=depth))


@pytest.mark.parametrize(
    ("profile", "params"),
    [
        (_depth("ascend910b1", 64), {"n": 64, "batches": 600, "streams": 4, "pageable": False}),
        (_two_h2d_engines(), {"n": 256, "batches": 400, "streams": 3, "pageable": False}),
        (_depth("measured-accelerator", 64), {"n": 128, "batches": 500, "streams": 1, "pageable": False}),
        (_depth("ascend910b1", 64), {"n": 64, "batches": 600, "streams": 4, "pageable": False, "numerics": True}),
    ],
)
def test_long_pipelines_stamped_ahead_equal_call_by_call(profile, params, monkeypatch):
    """Hundreds of identical batches: the device repeats itself and the runtime's fast mode stamps it ahead;
    every row, task record and the device's event count stay those of the call-by-call run."""
    from engine.host import call_log as host_log

    stamped = []
    finish = host_log.HostCallLog.finish

    def counted(host):
        finish(host)
        stamped.append(host.sim.runtime.stamper.stamped)

    monkeypatch.setattr(host_log.HostCallLog, "finish", counted)
    slow_outcome, slow, slow_cols = events(False, profile, **params)
    fast_outcome, fast, fast_cols = events(True, profile, **params)
    assert stamped and stamped[0] > params["batches"]  # most of the run's tasks
    fast_outcome.details.pop("fast_path")
    assert slow_outcome == fast_outcome  # with numerics: the same worst error, to the bit
    for c in COLUMN_NAMES:
        assert list(slow_cols[c]) == list(fast_cols[c]), c
    assert records(slow) == records(fast)
    assert (slow.end_ps, slow.device_events) == (fast.end_ps, fast.device_events)
