"""Lesson 1 reference solution: the complete pyACL host program of a vector add."""

import numpy as np

from engine import asc
from engine.host.acl_codes import (
    ACL_MEM_MALLOC_HUGE_FIRST,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
)
from engine.kernels.vector_add import add_kernel

BLOCKS = 8  # vector cores to use
TILE = 2048  # elements per tile inside the kernel
BUFFER_NUM = 2  # queue slots inside the kernel


def vector_add(acl, x, y, device_id=0):
    """z = x + y (fp16) computed by add_kernel on the device.

    Returns (z, ACL_SUCCESS), or (None, code) with the ACL code of the first call that failed, after
    releasing everything that had been created.
    """
    undo = []  # how to release what exists, in creation order

    def fail(code):
        for release in reversed(undo):
            release()
        return None, code

    ret = acl.init()
    if ret != ACL_SUCCESS:
        return None, ret
    undo.append(acl.finalize)
    ret = acl.rt.set_device(device_id)
    if ret != ACL_SUCCESS:
        return fail(ret)
    undo.append(lambda: acl.rt.reset_device(device_id))
    stream, ret = acl.rt.create_stream()
    if ret != ACL_SUCCESS:
        return fail(ret)
    undo.append(lambda: acl.rt.destroy_stream(stream))

    n, nbytes = x.size, x.nbytes
    dev, host = [], []
    for _ in range(3):  # x, y, z
        ptr, ret = acl.rt.malloc(nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
        if ret != ACL_SUCCESS:
            return fail(ret)
        undo.append(lambda ptr=ptr: acl.rt.free(ptr))
        dev.append(ptr)
        ptr, ret = acl.rt.malloc_host(nbytes)
        if ret != ACL_SUCCESS:
            return fail(ret)
        undo.append(lambda ptr=ptr: acl.rt.free_host(ptr))
        host.append(ptr)

    acl.util.ptr_to_numpy(host[0], n, np.float16)[:] = x
    acl.util.ptr_to_numpy(host[1], n, np.float16)[:] = y
    for i in (0, 1):
        ret = acl.rt.memcpy_async(dev[i], nbytes, host[i], nbytes, ACL_MEMCPY_HOST_TO_DEVICE, stream)
        if ret != ACL_SUCCESS:
            return fail(ret)
    args = [asc.GlobalAddress(p, asc.half) for p in dev]
    ret = acl.rt.launch_kernel(add_kernel, BLOCKS, stream, *args, n, TILE, BUFFER_NUM)
    if ret != ACL_SUCCESS:
        return fail(ret)
    ret = acl.rt.memcpy_async(host[2], nbytes, dev[2], nbytes, ACL_MEMCPY_DEVICE_TO_HOST, stream)
    if ret != ACL_SUCCESS:
        return fail(ret)
    ret = acl.rt.synchronize_stream(stream)  # the copy back is complete only after this returns
    if ret != ACL_SUCCESS:
        return fail(ret)
    z = acl.util.ptr_to_numpy(host[2], n, np.float16).copy()

    first_error = ACL_SUCCESS
    for release in reversed(undo):
        ret = release()
        if ret != ACL_SUCCESS and first_error == ACL_SUCCESS:
            first_error = ret
    return (z, ACL_SUCCESS) if first_error == ACL_SUCCESS else (None, first_error)


PREDICTIONS = {"setup": "set-up"}
