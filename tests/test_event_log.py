"""Exact event logs of the host/stream/copy-engine model, in the style of simpy's ``assert log == [...]``.

The round profile (tests/data/round.toml): every host call costs 1 us; a pinned copy of 1 MiB takes
1000 us, a pageable one 2000 us; a 64^3 op-level matmul takes 100 us; kernels start instantly.
The fixture has already spent 0-1 us in acl.init and 1-2 us in set_device.
"""

import numpy as np

from engine.host.acl_codes import ACL_MEMCPY_DEVICE_TO_HOST as D2H
from engine.host.acl_codes import ACL_MEMCPY_HOST_TO_DEVICE as H2D
from engine.trace.detail import Phase
from tests.conftest import MIB, dev_alloc, host_alloc


def device_log(result, process="Device 0 streams"):
    trace = result.trace
    lanes = [i for i, lane in enumerate(trace.lanes) if lane.process == process]
    return trace.log(np.isin(trace.lane, lanes))


def host_log(result):
    """The host thread's calls, waits and work (without the phase marks, which test_phase_marks checks)."""
    trace = result.trace
    phase = trace.rows_with(lambda d: isinstance(d, Phase))
    return trace.log((trace.lane == trace.lane_id("Host", "host thread")) & ~phase)


def test_fifo_order_in_one_stream(round_sim):
    acl = round_sim.acl
    s, _ = acl.rt.create_stream()  # 2-3
    d = dev_alloc(round_sim)  # 3-4
    h = host_alloc(round_sim)  # 4-5
    acl.rt.memcpy_async(d, MIB, h, MIB, H2D, s)  # call 5-6, copy 6-1006
    acl.rt.memcpy_async(h, MIB, d, MIB, D2H, s)  # call 6-7; D2H engine is free, but FIFO: 1006-2006
    acl.op.matmul(d, d, d, 64, 64, 64, s)  # call 7-8; after the copy: 2006-2106 (d is big enough)
    result = round_sim.finish()
    assert device_log(result) == [
        (6.0, 1006.0, "Device 0 streams/stream 1", "H2D copy"),
        (1006.0, 2006.0, "Device 0 streams/stream 1", "D2H copy"),
        (2006.0, 2106.0, "Device 0 streams/stream 1", "matmul 64x64x64"),
    ]


def test_streams_run_concurrently(round_sim):
    acl = round_sim.acl
    s1, _ = acl.rt.create_stream()  # 2-3
    s2, _ = acl.rt.create_stream()  # 3-4
    d = dev_alloc(round_sim)  # 4-5
    h = host_alloc(round_sim)  # 5-6
    acl.op.matmul(d, d, d, 64, 64, 64, s1)  # call 6-7, kernel 7-107
    acl.rt.memcpy_async(d, MIB, h, MIB, H2D, s2)  # call 7-8, copy 8-1008 overlaps the kernel
    result = round_sim.finish()
    assert device_log(result) == [
        (7.0, 107.0, "Device 0 streams/stream 1", "matmul 64x64x64"),
        (8.0, 1008.0, "Device 0 streams/stream 2", "H2D copy"),
    ]


def test_two_h2d_copies_on_two_streams_share_one_engine(round_sim):
    acl = round_sim.acl
    s1, _ = acl.rt.create_stream()  # 2-3
    s2, _ = acl.rt.create_stream()  # 3-4
    d1 = dev_alloc(round_sim)  # 4-5
    d2 = dev_alloc(round_sim)  # 5-6
    h = host_alloc(round_sim)  # 6-7
    acl.rt.memcpy_async(d1, MIB, h, MIB, H2D, s1)  # call 7-8, copy 8-1008
    acl.rt.memcpy_async(d2, MIB, h, MIB, H2D, s2)  # call 8-9, waits for the one H2D engine: 1008-2008
    result = round_sim.finish()
    assert device_log(result, "Device 0 copy engines") == [
        (8.0, 1008.0, "Device 0 copy engines/H2D engine 0", "H2D copy"),
        (1008.0, 2008.0, "Device 0 copy engines/H2D engine 0", "H2D copy"),
    ]
    assert device_log(result) == [
        (8.0, 1008.0, "Device 0 streams/stream 1", "H2D copy"),
        (1008.0, 2008.0, "Device 0 streams/stream 2", "H2D copy"),
    ]


def test_copy_in_and_copy_out_overlap(round_sim):
    acl = round_sim.acl
    s1, _ = acl.rt.create_stream()  # 2-3
    s2, _ = acl.rt.create_stream()  # 3-4
    d = dev_alloc(round_sim)  # 4-5
    h1 = host_alloc(round_sim)  # 5-6
    h2 = host_alloc(round_sim)  # 6-7
    acl.rt.memcpy_async(d, MIB, h1, MIB, H2D, s1)  # call 7-8, H2D engine 8-1008
    acl.rt.memcpy_async(h2, MIB, d, MIB, D2H, s2)  # call 8-9, D2H engine 9-1009 (its own engine)
    result = round_sim.finish()
    assert device_log(result, "Device 0 copy engines") == [
        (8.0, 1008.0, "Device 0 copy engines/H2D engine 0", "H2D copy"),
        (9.0, 1009.0, "Device 0 copy engines/D2H engine 0", "D2H copy"),
    ]


def test_event_orders_work_across_streams(round_sim):
    acl = round_sim.acl
    s1, _ = acl.rt.create_stream()  # 2-3
    s2, _ = acl.rt.create_stream()  # 3-4
    e, _ = acl.rt.create_event()  # 4-5
    d = dev_alloc(round_sim)  # 5-6
    h = host_alloc(round_sim)  # 6-7
    acl.rt.memcpy_async(d, MIB, h, MIB, H2D, s1)  # call 7-8, copy 8-1008
    acl.rt.record_event(e, s1)  # call 8-9, recorded when the copy ends: 1008
    acl.rt.stream_wait_event(s2, e)  # call 9-10, s2 blocked 10-1008
    acl.op.matmul(d, d, d, 64, 64, 64, s2)  # call 10-11, runs after the wait: 1008-1108
    result = round_sim.finish()
    assert device_log(result) == [
        (8.0, 1008.0, "Device 0 streams/stream 1", "H2D copy"),
        (10.0, 1008.0, "Device 0 streams/stream 2", "wait event 1"),
        (1008.0, 1008.0, "Device 0 streams/stream 1", "record event 1"),
        (1008.0, 1108.0, "Device 0 streams/stream 2", "matmul 64x64x64"),
    ]


def test_synchronize_blocks_the_host(round_sim):
    acl = round_sim.acl
    s, _ = acl.rt.create_stream()  # 2-3
    d = dev_alloc(round_sim)  # 3-4
    h = host_alloc(round_sim)  # 4-5
    acl.rt.memcpy_async(d, MIB, h, MIB, H2D, s)  # 5-6 returns at once; copy 6-1006
    acl.rt.synchronize_stream(s)  # call from 6; 1 us of call cost, then waits 7-1006
    acl.rt.free(d)  # the host resumes at 1006: 1006-1007
    result = round_sim.finish()
    assert host_log(result)[-5:] == [
        (4.0, 5.0, "Host/host thread", "acl.rt.malloc_host"),
        (5.0, 6.0, "Host/host thread", "acl.rt.memcpy_async"),
        (6.0, 1006.0, "Host/host thread", "acl.rt.synchronize_stream"),
        (7.0, 1006.0, "Host/host thread", "wait: stream 1 to drain"),
        (1006.0, 1007.0, "Host/host thread", "acl.rt.free"),
    ]


def test_phase_marks(round_sim):
    """Work begins when the first copy is queued (6 us) and teardown when the last one ended (1006 us)."""
    acl = round_sim.acl
    s, _ = acl.rt.create_stream()
    d = dev_alloc(round_sim)
    h = host_alloc(round_sim)
    acl.rt.memcpy_async(d, MIB, h, MIB, H2D, s)
    acl.rt.synchronize_stream(s)
    acl.rt.free(d)
    trace = round_sim.finish().trace
    phase = trace.rows_with(lambda d: isinstance(d, Phase))
    assert trace.log(phase) == [
        (6.0, 6.0, "Host/host thread", "phase: work"),
        (1006.0, 1006.0, "Host/host thread", "phase: teardown"),
    ]


def test_pinned_versus_pageable_timing(round_sim):
    acl = round_sim.acl
    s, _ = acl.rt.create_stream()  # 2-3
    d = dev_alloc(round_sim)  # 3-4
    pinned = host_alloc(round_sim)  # 4-5
    pageable = np.zeros(MIB, dtype=np.uint8)
    acl.rt.memcpy_async(d, MIB, pinned, MIB, H2D, s)  # call 5-6 returns at once; copy 6-1006
    acl.rt.memcpy_async(d, MIB, pageable, MIB, H2D, s)  # call 6-7; pageable: 2000 us after the first,
    # 1006-3006, and the host is held until it is done
    acl.rt.free(d)  # 3006-3007
    result = round_sim.finish()
    assert device_log(result) == [
        (6.0, 1006.0, "Device 0 streams/stream 1", "H2D copy"),
        (1006.0, 3006.0, "Device 0 streams/stream 1", "H2D copy"),
    ]
    assert host_log(result)[-4:] == [
        (5.0, 6.0, "Host/host thread", "acl.rt.memcpy_async"),
        (6.0, 3006.0, "Host/host thread", "acl.rt.memcpy_async"),
        (7.0, 3006.0, "Host/host thread", "wait: a pageable copy (staged through a pinned buffer)"),
        (3006.0, 3007.0, "Host/host thread", "acl.rt.free"),
    ]


def test_sync_memcpy_waits_on_default_stream(round_sim):
    acl = round_sim.acl
    d = dev_alloc(round_sim)  # 2-3
    h = host_alloc(round_sim)  # 3-4
    acl.rt.memcpy(d, MIB, h, MIB, H2D)  # call 4-5, copy on the default stream 5-1005, host waits
    acl.rt.free(d)  # 1005-1006
    result = round_sim.finish()
    assert device_log(result) == [(5.0, 1005.0, "Device 0 streams/default stream", "H2D copy")]
    assert host_log(result)[-1] == (1005.0, 1006.0, "Host/host thread", "acl.rt.free")


def test_higher_priority_stream_gets_the_engine_first(round_sim):
    acl = round_sim.acl
    low1, _ = acl.rt.create_stream_with_config(5, 0)  # 2-3
    low2, _ = acl.rt.create_stream_with_config(5, 0)  # 3-4
    high, _ = acl.rt.create_stream_with_config(0, 0)  # 4-5 (0 is the highest priority)
    d = dev_alloc(round_sim)  # 5-6
    h = host_alloc(round_sim)  # 6-7
    acl.rt.memcpy_async(d, MIB, h, MIB, H2D, low1)  # 7-8: takes the idle engine, 8-1008
    acl.rt.memcpy_async(d, MIB, h, MIB, H2D, low2)  # 8-9: waits for the engine
    acl.rt.memcpy_async(d, MIB, h, MIB, H2D, high)  # 9-10: waits too, submitted later, but goes first
    result = round_sim.finish()
    assert device_log(result) == [
        (8.0, 1008.0, "Device 0 streams/stream 1", "H2D copy"),
        (1008.0, 2008.0, "Device 0 streams/stream 3", "H2D copy"),
        (2008.0, 3008.0, "Device 0 streams/stream 2", "H2D copy"),
    ]
