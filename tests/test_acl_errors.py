"""Every misuse returns the real ACL code and leaves a finding that says what was wrong."""

import numpy as np
import pytest

from engine import AclError, Simulation
from engine.host import acl_codes as C
from tests.conftest import MIB, ROUND, dev_alloc, host_alloc


@pytest.fixture
def sim():
    """Non-strict, like pyACL: failures come back as return codes."""
    s = Simulation(ROUND, numerics=True)
    assert s.acl.init() == 0
    assert s.acl.rt.set_device(0) == 0
    return s


def last_finding(sim):
    assert sim.findings, "expected a finding"
    return sim.findings[-1]


def test_use_after_free(sim):
    d = dev_alloc(sim, 64)
    h = host_alloc(sim, 64)
    assert sim.acl.rt.free(d) == 0
    ret = sim.acl.rt.memcpy(d, 64, h, 64, C.ACL_MEMCPY_HOST_TO_DEVICE)
    assert ret == C.ACL_ERROR_INVALID_PARAM
    msg = last_finding(sim).message
    assert "use after free" in msg and "freed at" in msg and "test_acl_errors.py" in msg


def test_double_free(sim):
    d = dev_alloc(sim, 64)
    assert sim.acl.rt.free(d) == 0
    assert sim.acl.rt.free(d) == C.ACL_ERROR_RT_MEMORY_FREE
    assert "double free" in last_finding(sim).message


def test_free_of_interior_pointer(sim):
    d = dev_alloc(sim, 4096)
    assert sim.acl.rt.free(d + 64) == C.ACL_ERROR_RT_MEMORY_FREE
    assert "inside device allocation" in last_finding(sim).message


def test_double_free_host(sim):
    h = host_alloc(sim, 64)
    assert sim.acl.rt.free_host(h) == 0
    assert sim.acl.rt.free_host(h) == C.ACL_ERROR_RT_MEMORY_FREE


def test_copy_overruns_the_allocation(sim):
    d = dev_alloc(sim, 100)
    h = host_alloc(sim, 4096)
    ret = sim.acl.rt.memcpy(d + 50, 4096, h, 51, C.ACL_MEMCPY_HOST_TO_DEVICE)
    assert ret == C.ACL_ERROR_INVALID_PARAM
    msg = last_finding(sim).message
    assert "51 B at offset 50 overruns" in msg and "limit 50 B" in msg


def test_count_larger_than_dst_max(sim):
    d = dev_alloc(sim, 4096)
    h = host_alloc(sim, 4096)
    ret = sim.acl.rt.memcpy_async(d, 1024, h, 2048, C.ACL_MEMCPY_HOST_TO_DEVICE, 0)
    assert ret == C.ACL_ERROR_INVALID_PARAM
    assert "count 2048 exceeds dst_max 1024" in last_finding(sim).message


def test_kind_that_contradicts_the_pointers(sim):
    d = dev_alloc(sim, 64)
    h = host_alloc(sim, 64)
    ret = sim.acl.rt.memcpy(d, 64, h, 64, C.ACL_MEMCPY_DEVICE_TO_HOST)
    assert ret == C.ACL_ERROR_INVALID_PARAM
    assert "does not match the pointers" in last_finding(sim).message


def test_out_of_device_memory(sim):
    capacity = sim.profile.chip.device_memory_bytes
    ptr, ret = sim.acl.rt.malloc(capacity, C.ACL_MEM_MALLOC_HUGE_FIRST)
    assert (ptr, ret) == (0, C.ACL_ERROR_RT_MEMORY_ALLOCATION)
    assert f"of {capacity} B already in use" in last_finding(sim).message


@pytest.mark.parametrize("size", [0, -5, 1.5])
def test_malloc_bad_size(sim, size):
    assert sim.acl.rt.malloc(size, C.ACL_MEM_MALLOC_HUGE_FIRST)[1] == C.ACL_ERROR_INVALID_PARAM
    assert "size must be a positive integer" in last_finding(sim).message


def test_malloc_bad_policy(sim):
    assert sim.acl.rt.malloc(64, 42)[1] == C.ACL_ERROR_INVALID_PARAM


def test_malloc_alignment_and_rounding(sim):
    before = sim.devmem.used
    ptrs = [dev_alloc(sim, size) for size in (1, 33, 64, 100)]
    assert all(p % 64 == 0 for p in ptrs)
    # rounded up to 32 B, plus 32 B: 64 + 96 + 96 + 160
    assert sim.devmem.used - before == 64 + 96 + 96 + 160


def test_calls_before_init():
    s = Simulation(ROUND)
    assert s.acl.rt.set_device(0) == C.ACL_ERROR_UNINITIALIZE
    assert s.acl.finalize() == C.ACL_ERROR_UNINITIALIZE


def test_repeat_init_and_finalize():
    s = Simulation(ROUND)
    assert s.acl.init() == 0
    assert s.acl.init() == C.ACL_ERROR_REPEAT_INITIALIZE
    assert s.acl.finalize() == 0
    assert s.acl.finalize() == C.ACL_ERROR_REPEAT_FINALIZE


def test_runtime_call_without_device():
    s = Simulation(ROUND)
    s.acl.init()
    assert s.acl.rt.create_stream()[1] == C.ACL_ERROR_RT_CONTEXT_NULL
    assert s.acl.rt.malloc(64, 0)[1] == C.ACL_ERROR_RT_CONTEXT_NULL


def test_invalid_device_id(sim):
    assert sim.acl.rt.set_device(3) == C.ACL_ERROR_RT_INVALID_DEVICEID


def test_destroyed_stream_and_bad_handles(sim):
    s, _ = sim.acl.rt.create_stream()
    assert sim.acl.rt.destroy_stream(s) == 0
    assert sim.acl.rt.synchronize_stream(s) == C.ACL_ERROR_INVALID_RESOURCE_HANDLE
    assert "was destroyed" in last_finding(sim).message
    assert sim.acl.rt.synchronize_stream(12345) == C.ACL_ERROR_INVALID_RESOURCE_HANDLE
    assert sim.acl.rt.record_event(777, 0) == C.ACL_ERROR_INVALID_RESOURCE_HANDLE


def test_launch_with_bad_block_dim(sim):
    d = dev_alloc(sim, 64 * 64 * 2)

    class Kernel:
        name, core_type, block_dim = "k", "vector", 1

        def execute(self, runtime, task, start, cores):
            return start

    assert sim.acl.rt.launch_kernel(Kernel(), 0, 0) == C.ACL_ERROR_INVALID_PARAM
    assert "block_dim must be 1..65535, got 0" in last_finding(sim).message
    assert sim.acl.rt.launch_kernel(Kernel(), 70000, 0) == C.ACL_ERROR_INVALID_PARAM
    assert sim.acl.op.matmul(d, d, d, 64, 64, 0, 0) == C.ACL_ERROR_INVALID_PARAM


def test_host_cannot_read_device_memory(sim):
    d = dev_alloc(sim, 64)
    with pytest.raises(AclError) as info:
        sim.acl.util.ptr_to_numpy(d, 16, np.float32)
    assert info.value.code == C.ACL_ERROR_INVALID_PARAM
    assert "device memory" in str(info.value)


def test_strict_mode_raises_with_the_code():
    s = Simulation(ROUND, strict=True)
    with pytest.raises(AclError) as info:
        s.acl.rt.set_device(0)
    assert info.value.code == C.ACL_ERROR_UNINITIALIZE


def test_failed_call_is_in_the_trace(sim):
    sim.acl.rt.free(0x1234)
    trace = sim.finish().trace
    errors = [r for r in trace.rows() if r["kind"] == "ERROR"]
    assert errors and errors[-1]["name"] == "ACL_ERROR_RT_MEMORY_FREE"


def test_copies_really_move_bytes(sim):
    data = np.arange(MIB // 4, dtype=np.float32)
    d = dev_alloc(sim, MIB)
    back = np.zeros_like(data)
    assert sim.acl.rt.memcpy(d, MIB, data, MIB, C.ACL_MEMCPY_HOST_TO_DEVICE) == 0
    assert sim.acl.rt.memcpy(back, MIB, d, MIB, C.ACL_MEMCPY_DEVICE_TO_HOST) == 0
    np.testing.assert_array_equal(back, data)
    d2 = dev_alloc(sim, MIB)
    assert sim.acl.rt.memcpy(d2, MIB, d, MIB, C.ACL_MEMCPY_DEVICE_TO_DEVICE) == 0
    back[:] = 0
    assert sim.acl.rt.memcpy(back, MIB, d2, MIB, C.ACL_MEMCPY_DEFAULT) == 0
    np.testing.assert_array_equal(back, data)


def test_async_copy_lands_only_after_synchronize(sim):
    s, _ = sim.acl.rt.create_stream()
    d = dev_alloc(sim, 64)
    src = host_alloc(sim, 64)
    dst = host_alloc(sim, 64)
    sim.acl.util.ptr_to_numpy(src, 64, np.uint8)[:] = 7
    sim.acl.rt.memcpy_async(d, 64, src, 64, C.ACL_MEMCPY_HOST_TO_DEVICE, s)
    sim.acl.rt.memcpy_async(dst, 64, d, 64, C.ACL_MEMCPY_DEVICE_TO_HOST, s)
    view = sim.acl.util.ptr_to_numpy(dst, 64, np.uint8)
    assert view.sum() == 0  # reading before synchronising sees the old bytes, as on hardware
    sim.acl.rt.synchronize_stream(s)
    assert (view == 7).all()
