"""Synchronisation inside a kernel: races are reported with both instructions and lines, deadlocks end
with a diagnosis, TQue implies the right flags, capacity and alignment rules hold."""

import numpy as np
import pytest

from engine import asc
from engine.host.acl_codes import ACL_ERROR_RT_AICORE_EXCEPTION, ACL_ERROR_RT_AICORE_TIMEOUT
from engine.kernels.scale import scale_kernel
from tests.kernel_helpers import device, empty_device, from_device, to_device

N = 1024  # fp16 elements: 2 KiB, 32-byte aligned


def run_scale(sync):
    sim, stream = device()
    x = np.arange(N, dtype=np.float16) / 64
    dx, dz = to_device(sim, x), empty_device(sim, x.nbytes)
    assert sim.acl.rt.launch_kernel(scale_kernel, 1, stream, asc.GlobalAddress(dx), asc.GlobalAddress(dz), N, sync) == 0
    ret = sim.acl.rt.synchronize_stream(stream)
    z = from_device(sim, dz, N, np.float16)
    return ret, z, x, sim.finish()


def test_removed_wait_flag_is_reported_as_a_race():
    _ret, z, x, result = run_scale(sync=False)
    races = [f for f in result.findings if f.kind == "race"]
    assert len(races) == 1
    msg = races[0].message
    assert "read-after-write race on UB" in msg
    assert "muls on VECTOR" in msg and "data_copy GM->UB on MTE2" in msg
    assert "engine/kernels/scale.py:27" in msg and "engine/kernels/scale.py:23" in msg  # both source lines
    assert "[0:2048)" in msg  # the byte range of UB both touch
    # the numbers happen to be right (computed in program order): exactly why the race must be reported
    np.testing.assert_array_equal(z, x * 2)


def test_with_the_wait_there_is_no_race():
    ret, z, x, result = run_scale(sync=True)
    assert ret == 0 and result.findings == []
    np.testing.assert_array_equal(z, x * 2)


def test_race_timing_shows_the_overlap():
    """Without the wait, the vector op starts before the copy has landed."""
    *_, result = run_scale(sync=False)
    rows = result.trace.rows()
    copy = next(r for r in rows if r["name"] == "data_copy GM->UB")
    muls = next(r for r in rows if r["name"] == "muls")
    assert muls["start"] < copy["end"]


@asc.jit
def never_set_kernel(x: asc.GlobalAddress):
    asc.wait_flag(asc.HardEvent.MTE2_V, 3)  # nobody sets it


@asc.jit
def cycle_kernel(x: asc.GlobalAddress):
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)  # V waits for MTE2 ...
    asc.set_flag(asc.HardEvent.V_MTE2, 1)
    asc.wait_flag(asc.HardEvent.V_MTE2, 1)  # ... MTE2 waits for V, set only after V's wait
    asc.set_flag(asc.HardEvent.MTE2_V, 0)


@asc.jit
def set_after_wait_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress):
    """Legal: the V pipe waits first in program order; MTE2 sets later. The hardware runs it fine."""
    x_gm, z_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x, N)
    z_gm.set_global_buffer(z, N)
    pipe = asc.TPipe()
    b = asc.TBuf(asc.TPosition.VECIN)
    pipe.init_buffer(buf=b, num=N * 2)
    t = b.get(asc.half)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.data_copy(t, x_gm, N)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.adds(t, t, 1.0, N)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(z_gm, t, N)


@asc.jit
def empty_deque_kernel(x: asc.GlobalAddress):
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(que=q, num=1, len=256)
    q.deque(asc.half)


@asc.jit
def never_freed_kernel(x: asc.GlobalAddress):
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 2)
    pipe.init_buffer(que=q, num=2, len=256)
    q.alloc_tensor(asc.half)
    q.alloc_tensor(asc.half)
    q.alloc_tensor(asc.half)


def launch_one(kernel, *extra):
    sim, stream = device()
    x = empty_device(sim, N * 2)
    args = [asc.GlobalAddress(x)] + [asc.GlobalAddress(empty_device(sim, N * 2)) for _ in extra]
    assert sim.acl.rt.launch_kernel(kernel, 1, stream, *args) == 0
    ret = sim.acl.rt.synchronize_stream(stream)
    return ret, sim.finish(), sim


@pytest.mark.parametrize(
    ("kernel", "needle"),
    [
        (never_set_kernel, "wait_flag MTE2_V on VECTOR"),
        (cycle_kernel, "these waits can never be satisfied"),
        (empty_deque_kernel, "deque on a VECIN TQue with nothing enqueued"),
        (never_freed_kernel, "every slot is still in use"),
    ],
)
def test_unsatisfiable_waits_end_with_a_diagnosis(kernel, needle):
    ret, result, _ = launch_one(kernel)
    assert ret == ACL_ERROR_RT_AICORE_TIMEOUT
    deadlocks = [f for f in result.findings if f.kind == "deadlock"]
    assert len(deadlocks) == 1 and needle in deadlocks[0].message
    assert "test_kernel_sync.py:" in deadlocks[0].message


def test_wait_before_set_in_program_order_is_legal():
    sim, stream = device()
    x = np.ones(N, np.float16)
    dx, dz = to_device(sim, x), empty_device(sim, x.nbytes)
    sim.acl.rt.launch_kernel(set_after_wait_kernel, 1, stream, asc.GlobalAddress(dx), asc.GlobalAddress(dz))
    assert sim.acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(from_device(sim, dz, N, np.float16), x + 1)
    assert sim.finish().findings == []


@asc.jit
def too_big_kernel(x: asc.GlobalAddress):
    pipe = asc.TPipe()
    a, b = asc.TQue(asc.TPosition.VECIN, 2), asc.TQue(asc.TPosition.VECOUT, 2)
    pipe.init_buffer(que=a, num=2, len=64 * 1024)
    pipe.init_buffer(que=b, num=2, len=64 * 1024)


@asc.jit
def misaligned_kernel(x: asc.GlobalAddress):
    x_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, N)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(que=q, num=1, len=N * 2)
    t = q.alloc_tensor(asc.half)
    asc.data_copy(t, x_gm, 15)  # 30 bytes


@asc.jit
def misaligned_address_kernel(x: asc.GlobalAddress):
    x_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, N)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(que=q, num=1, len=N * 2)
    t = q.alloc_tensor(asc.half)
    asc.data_copy(t[1:], x_gm, 16)  # UB address +2 B


@asc.jit
def out_of_bounds_kernel(x: asc.GlobalAddress):
    x_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x, N)
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(que=q, num=1, len=N * 4)
    t = q.alloc_tensor(asc.half)
    asc.data_copy(t, x_gm, 2 * N)


@asc.jit
def crashing_kernel(x: asc.GlobalAddress):
    raise ZeroDivisionError("oops")


@pytest.mark.parametrize(
    ("kernel", "code", "needle"),
    [
        (
            too_big_kernel,
            ACL_ERROR_RT_AICORE_EXCEPTION,
            "init_buffer: UB holds 196608 B; 131072 B are already taken (VECIN TQue: 2 x 65536 B); asked 2 x 65536 B",
        ),
        (misaligned_kernel, ACL_ERROR_RT_AICORE_EXCEPTION, "length 30 B is not a multiple of 32 B"),
        (misaligned_address_kernel, ACL_ERROR_RT_AICORE_EXCEPTION, "UB address +2 B is not 32-byte aligned"),
        (out_of_bounds_kernel, 507042, "GM read out of bounds: elements [0, 2048) of a GlobalTensor of 1024"),
        (crashing_kernel, ACL_ERROR_RT_AICORE_EXCEPTION, "ZeroDivisionError: oops at tests/test_kernel_sync.py"),
    ],
)
def test_kernel_errors_carry_the_acl_code_and_the_reason(kernel, code, needle):
    ret, result, _ = launch_one(kernel)
    assert ret == code
    errors = [f for f in result.findings if f.kind == "kernel-error"]
    assert len(errors) == 1 and needle in errors[0].message, result.findings


def test_a_failed_kernel_does_not_poison_the_next_launch():
    sim, stream = device()
    x = np.ones(N, np.float16)
    dx, dz = to_device(sim, x), empty_device(sim, x.nbytes)
    sim.acl.rt.launch_kernel(crashing_kernel, 1, stream, asc.GlobalAddress(dx))
    assert sim.acl.rt.synchronize_stream(stream) == ACL_ERROR_RT_AICORE_EXCEPTION
    sim.acl.rt.launch_kernel(scale_kernel, 1, stream, asc.GlobalAddress(dx), asc.GlobalAddress(dz), N, True)
    assert sim.acl.rt.synchronize_stream(stream) == 0
    np.testing.assert_array_equal(from_device(sim, dz, N, np.float16), x * 2)


def test_tque_flags_follow_the_position_table():
    """GM -> VECIN enque is MTE2_V; its free is V_MTE2; VECOUT -> GM is V_MTE3 / MTE3_V."""
    from engine.kernels.vector_add import add_kernel

    sim, stream = device()
    x = np.ones(4096, np.float16)
    d = [to_device(sim, x), to_device(sim, x), empty_device(sim, x.nbytes)]
    sim.acl.rt.launch_kernel(add_kernel, 1, stream, *[asc.GlobalAddress(p) for p in d], 4096, 1024, 2)
    assert sim.acl.rt.synchronize_stream(stream) == 0
    flags = {(r["lane"].split("/")[1], r["name"]) for r in sim.finish().trace.rows() if "flag" in r["name"]}
    assert flags == {
        ("MTE2", "set_flag MTE2_V (VECIN data)"),
        ("VECTOR", "wait_flag MTE2_V (VECIN data)"),
        ("VECTOR", "set_flag V_MTE2 (VECIN free slot)"),
        ("MTE2", "wait_flag V_MTE2 (VECIN free slot)"),
        ("VECTOR", "set_flag V_MTE3 (VECOUT data)"),
        ("MTE3", "wait_flag V_MTE3 (VECOUT data)"),
        ("MTE3", "set_flag MTE3_V (VECOUT free slot)"),
        ("VECTOR", "wait_flag MTE3_V (VECOUT free slot)"),
    }


def test_event_id_range():
    @asc.jit
    def bad_id(x: asc.GlobalAddress):
        asc.set_flag(asc.HardEvent.MTE2_V, 8)

    ret, result, _ = launch_one(bad_id)
    assert ret == ACL_ERROR_RT_AICORE_EXCEPTION
    assert "event_id must be 0..7, got 8" in result.findings[0].message
