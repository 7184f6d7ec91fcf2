"""Lesson 8 reference solution: the batched copy -> matmul -> copy pipeline on two streams ordered by events."""

import numpy as np

from engine.host.acl_codes import (
    ACL_MEM_MALLOC_HUGE_FIRST,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
    error_name,
)

SLOTS = 2  # device buffer sets: batch i uses set i % 2, so batch i + 1 can load while batch i computes


def check(ret, what):
    if ret != ACL_SUCCESS:
        raise RuntimeError(f"{what} failed: {error_name(ret)} ({ret})")


def pipeline(acl, a_batches, b_batches):
    """C_i = A_i @ B_i (fp16 in, fp16 out) for every batch; returns the C_i as numpy arrays."""
    n = a_batches[0].shape[0]
    nbytes = n * n * 2
    count = len(a_batches)
    check(acl.init(), "acl.init")
    check(acl.rt.set_device(0), "acl.rt.set_device")

    def malloc_host():
        ptr, ret = acl.rt.malloc_host(nbytes)
        check(ret, "acl.rt.malloc_host")
        return ptr

    def malloc():
        ptr, ret = acl.rt.malloc(nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
        check(ret, "acl.rt.malloc")
        return ptr

    host_a = [malloc_host() for _ in range(count)]
    host_b = [malloc_host() for _ in range(count)]
    host_c = [malloc_host() for _ in range(count)]
    for i in range(count):
        acl.util.ptr_to_numpy(host_a[i], (n, n), np.float16)[:] = a_batches[i]
        acl.util.ptr_to_numpy(host_b[i], (n, n), np.float16)[:] = b_batches[i]
    dev_a = [malloc() for _ in range(SLOTS)]
    dev_b = [malloc() for _ in range(SLOTS)]
    dev_c = [malloc() for _ in range(SLOTS)]

    copy_stream, ret = acl.rt.create_stream()
    check(ret, "create_stream")
    compute_stream, ret = acl.rt.create_stream()
    check(ret, "create_stream")
    loaded, consumed = [], []  # per batch: A and B are on the device / the matmul has read them
    for _ in range(count):
        for events in (loaded, consumed):
            event, ret = acl.rt.create_event()
            check(ret, "create_event")
            events.append(event)

    for i in range(count):
        s = i % SLOTS
        if i >= SLOTS:  # the slot's previous batch must have been read before it is overwritten
            check(acl.rt.stream_wait_event(copy_stream, consumed[i - SLOTS]), "stream_wait_event")
        check(
            acl.rt.memcpy_async(dev_a[s], nbytes, host_a[i], nbytes, ACL_MEMCPY_HOST_TO_DEVICE, copy_stream), "copy A"
        )
        check(
            acl.rt.memcpy_async(dev_b[s], nbytes, host_b[i], nbytes, ACL_MEMCPY_HOST_TO_DEVICE, copy_stream), "copy B"
        )
        check(acl.rt.record_event(loaded[i], copy_stream), "record_event")
        check(acl.rt.stream_wait_event(compute_stream, loaded[i]), "stream_wait_event")
        check(acl.op.matmul(dev_a[s], dev_b[s], dev_c[s], n, n, n, compute_stream), "acl.op.matmul")
        check(acl.rt.record_event(consumed[i], compute_stream), "record_event")
        check(
            acl.rt.memcpy_async(host_c[i], nbytes, dev_c[s], nbytes, ACL_MEMCPY_DEVICE_TO_HOST, compute_stream),
            "copy C",
        )
    check(acl.rt.synchronize_stream(compute_stream), "synchronize_stream")
    results = [acl.util.ptr_to_numpy(host_c[i], (n, n), np.float16).copy() for i in range(count)]

    for event in loaded + consumed:
        check(acl.rt.destroy_event(event), "destroy_event")
    for ptr in dev_a + dev_b + dev_c:
        check(acl.rt.free(ptr), "acl.rt.free")
    for ptr in host_a + host_b + host_c:
        check(acl.rt.free_host(ptr), "acl.rt.free_host")
    for stream in (copy_stream, compute_stream):
        check(acl.rt.destroy_stream(stream), "destroy_stream")
    check(acl.rt.reset_device(0), "reset_device")
    check(acl.finalize(), "finalize")
    return results


PREDICTIONS = {"third_stream": "no"}
