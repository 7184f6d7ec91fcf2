"""Lesson 8 exercise: the batched copy -> matmul -> copy pipeline on two streams, ordered by events.

pipeline() below is correct but runs everything on one stream, so batch i + 1's copies wait for
batch i's matmul. Rewrite the loop with two streams: a copy stream for the host-to-device copies and
a compute stream for the matmul and the copy back, so that the next batch loads while this one
computes. Two device buffer sets (SLOTS) make that possible; events make it safe: between two streams
there is no order but the events you put there. The check finds any missing order as a cross-stream
race, and also runs hidden cases (other numbers of batches, other sizes).
Check it with:  ascendsim lesson check 8

第 8 课练习：用两个流和事件实现批量的“拷入 -> 矩阵乘 -> 拷出”流水线。
下面的 pipeline() 是正确的，但所有任务都在一个流上，所以第 i + 1 批的拷贝要等第 i 批的矩阵乘完成。请用两个流重写
这个循环：拷贝流负责主机到设备的拷贝，计算流负责矩阵乘和拷回，使下一批在当前批计算时就开始搬入。两套设备缓冲区
（SLOTS）让这成为可能，事件保证它是安全的：两个流之间除了你放置的事件之外没有任何顺序。检查程序会把任何缺失的顺序
约束报告为跨流数据竞争，并且还会运行隐藏用例（其他批数、其他矩阵大小）。
检查：ascendsim lesson check 8
"""

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

    # TODO (about 20 lines): put the copies in on one stream and the matmul and the copy back on another,
    #   so that batch i + 1 loads while batch i computes. Order them with events only (no waiting on the host
    #   inside the loop): a task of one stream that reads what the other wrote, or overwrites what the other
    #   still has to read, must come after it. Any number of batches, any size. Release the streams and
    #   events you create. Lesson 8's text names the event calls.
    stream, ret = acl.rt.create_stream()
    check(ret, "create_stream")
    for i in range(count):
        s = i % SLOTS
        check(acl.rt.memcpy_async(dev_a[s], nbytes, host_a[i], nbytes, ACL_MEMCPY_HOST_TO_DEVICE, stream), "copy A")
        check(acl.rt.memcpy_async(dev_b[s], nbytes, host_b[i], nbytes, ACL_MEMCPY_HOST_TO_DEVICE, stream), "copy B")
        check(acl.op.matmul(dev_a[s], dev_b[s], dev_c[s], n, n, n, stream), "acl.op.matmul")
        check(acl.rt.memcpy_async(host_c[i], nbytes, dev_c[s], nbytes, ACL_MEMCPY_DEVICE_TO_HOST, stream), "copy C")
    check(acl.rt.synchronize_stream(stream), "synchronize_stream")
    results = [acl.util.ptr_to_numpy(host_c[i], (n, n), np.float16).copy() for i in range(count)]

    for ptr in dev_a + dev_b + dev_c:
        check(acl.rt.free(ptr), "acl.rt.free")
    for ptr in host_a + host_b + host_c:
        check(acl.rt.free_host(ptr), "acl.rt.free_host")
    check(acl.rt.destroy_stream(stream), "destroy_stream")
    check(acl.rt.reset_device(0), "reset_device")
    check(acl.finalize(), "finalize")
    return results


# Predict before you run: would a third stream, just for the copies back (device to host), make your
# two-stream pipeline at least 5 % faster? "yes" or "no".
PREDICTIONS = {"third_stream": None}  # TODO
