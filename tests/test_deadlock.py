"""Waits that can never end finish the run with a diagnosis of who waits for whom, never a hang."""

import time

from engine import Simulation
from engine.host import acl_codes as C
from tests.conftest import MIB, ROUND, dev_alloc, host_alloc


def setup():
    sim = Simulation(ROUND, numerics=False)
    sim.acl.init()
    sim.acl.rt.set_device(0)
    return sim


def test_wait_on_an_event_never_recorded():
    sim = setup()
    acl = sim.acl
    s, _ = acl.rt.create_stream()
    e, _ = acl.rt.create_event()
    acl.rt.stream_wait_event(s, e)
    t0 = time.perf_counter()
    assert acl.rt.synchronize_stream(s) == C.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    assert time.perf_counter() - t0 < 1.0
    deadlocks = [f for f in sim.findings if f.kind == "deadlock"]
    assert len(deadlocks) == 1
    text = deadlocks[0].message
    assert "stream 1 waits since" in text and "event 1, which is never recorded" in text
    assert "test_deadlock.py" in text  # the line of the wait
    chain = deadlocks[0].details["chains"][0]
    assert chain[0]["stream"] == "stream 1" and chain[0]["recorded_by"] is None


def test_cross_stream_wait_cycle():
    sim = setup()
    acl = sim.acl
    s1, _ = acl.rt.create_stream()
    s2, _ = acl.rt.create_stream()
    e1, _ = acl.rt.create_event()
    e2, _ = acl.rt.create_event()
    acl.rt.stream_wait_event(s1, e2)  # s1 waits for e2 ...
    acl.rt.record_event(e1, s1)  # ... before recording e1
    acl.rt.stream_wait_event(s2, e1)  # s2 waits for e1 ...
    acl.rt.record_event(e2, s2)  # ... before recording e2
    assert acl.rt.synchronize_device() == C.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    finding = next(f for f in sim.findings if f.kind == "deadlock")
    assert "cycle: stream 1 -> stream 2 -> stream 1" in finding.message
    assert "recorded by stream 2" in finding.message and "recorded by stream 1" in finding.message


def test_deadlock_found_at_the_end_of_a_run_without_sync():
    sim = setup()
    acl = sim.acl
    s, _ = acl.rt.create_stream()
    e, _ = acl.rt.create_event()
    d = dev_alloc(sim)
    h = host_alloc(sim)
    acl.rt.stream_wait_event(s, e)
    acl.rt.memcpy_async(d, MIB, h, MIB, C.ACL_MEMCPY_HOST_TO_DEVICE, s)
    result = sim.finish()
    kinds = [f.kind for f in result.findings]
    assert kinds == ["deadlock"]
    assert "the run reached its end" in result.findings[0].message


def test_event_sync_on_never_recorded_event():
    sim = setup()
    e, _ = sim.acl.rt.create_event()
    assert sim.acl.rt.synchronize_event(e) == C.ACL_ERROR_RT_EVENT_SYNC_TIMEOUT


def test_no_deadlock_reported_for_correct_waits():
    sim = setup()
    acl = sim.acl
    s1, _ = acl.rt.create_stream()
    s2, _ = acl.rt.create_stream()
    e, _ = acl.rt.create_event()
    acl.rt.record_event(e, s1)
    acl.rt.stream_wait_event(s2, e)
    assert acl.rt.synchronize_device() == 0
    assert sim.finish().findings == []
