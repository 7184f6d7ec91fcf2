"""Lesson 1 exercise: the pyACL host program of a vector add, from acl.init to acl.finalize.

Write vector_add: it runs z = x + y on the device with the shipped add_kernel and returns
(z, ACL_SUCCESS). When a call fails it returns (None, code) with that call's ACL error code, after
releasing everything it had created (the check calls it once with device_id=1, which does not
exist). Check every return code; read z only after synchronizing; free what you allocate.
Check it with:  ascendsim lesson check 1

第 1 课练习：向量加法的 pyACL 主机程序，从 acl.init 到 acl.finalize。
实现 vector_add：用自带的 add_kernel 在设备上计算 z = x + y，返回 (z, ACL_SUCCESS)。某个调用失败时，
先释放已经创建的所有资源，再返回 (None, code)，code 为该调用的 ACL 错误码（检查程序会用不存在的
device_id=1 调用一次）。检查每个返回码；同步之后才读取 z；释放所有申请的内存。
检查：ascendsim lesson check 1
"""

import numpy as np  # noqa: F401  (you will need it)

from engine import asc  # noqa: F401
from engine.host.acl_codes import (  # noqa: F401
    ACL_MEM_MALLOC_HUGE_FIRST,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
)
from engine.kernels.vector_add import add_kernel  # noqa: F401  add_kernel(x, y, z, n, tile_length, buffer_num)

BLOCKS = 8  # vector cores to use
TILE = 2048  # elements per tile inside the kernel
BUFFER_NUM = 2  # queue slots inside the kernel


def vector_add(acl, x, y, device_id=0):
    """z = x + y (fp16) computed by add_kernel on the device; (z, ACL_SUCCESS) or (None, error code)."""
    ret = acl.init()
    if ret != ACL_SUCCESS:
        return None, ret
    ret = acl.rt.set_device(device_id)
    if ret != ACL_SUCCESS:
        # TODO (1 line): no device was set, but the runtime is up: undo what exists, then return.
        return None, ret
    # TODO (about 35 lines): compute z = x + y on the device and bring it back to the host.
    #   You need a stream, device memory for x, y and z, and pinned host memory to copy from and to; the
    #   inputs reach the device asynchronously on the stream, add_kernel runs on BLOCKS blocks with TILE and
    #   BUFFER_NUM, z comes back the same way, and the host may read it only once the stream has finished.
    #   Release everything in the reverse order of its creation, down to the runtime itself. Every call
    #   returns an ACL code: on a failure, release what exists and return (None, that code).
    #   Lesson 1's steps (ascendsim lesson show 1) walk through each call, and README's host example shows
    #   their arguments; acl.util.ptr_to_numpy gives a numpy view of pinned host memory.
    return None, ACL_SUCCESS


# Predict before you run: in this program, which takes longer, the set-up (acl.init + acl.rt.set_device)
# or the add kernel? "set-up" or "kernel".
PREDICTIONS = {"setup": None}  # TODO
