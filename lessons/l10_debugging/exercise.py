"""Lesson 10 exercise: a program that misbehaves. Find out why, and fix it.

run() uploads x on one stream and computes y = relu(0.5 * x - 0.25) with relu_axpb on another, then
copies y back; relu_tiling is its host tiling. Something is wrong with it: run `ascendsim lesson show 10`
to see the symptoms and `ascendsim lesson check 10` to read the debugger's findings and the profiler's
figures, then fix the code. The check demands no findings at all, the right y, and a kernel time within
1.25x of the fixed reference program's.
Check it with:  ascendsim lesson check 10

第 10 课练习：一个行为异常的程序。找出原因并修复它。
run() 在一个流上上传 x，在另一个流上用 relu_axpb 计算 y = relu(0.5 * x - 0.25)，然后拷回 y；relu_tiling 是它的主机
tiling。程序有问题：运行 `ascendsim lesson show 10` 查看症状，运行 `ascendsim lesson check 10` 阅读调试器的报告和
性能分析器的数据，然后修改代码。检查要求没有任何问题报告、y 正确，并且核函数耗时不超过修复后参考程序的 1.25 倍。
检查：ascendsim lesson check 10
"""

import numpy as np

from engine import TilingContext, asc
from engine.host.acl_codes import (
    ACL_MEM_MALLOC_HUGE_FIRST,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
    error_name,
)
from lessons.hostkit import split_cores

CORES = 1  # vector cores the host tiling spreads the work over
TILE = 8192
A, B = 0.5, -0.25


class ReluTilingData(asc.TilingData):  # BEGIN_TILING_DATA_DEF(ReluTilingData)
    former_num = asc.Field(asc.uint32)  # big cores first
    former_length = asc.Field(asc.uint32)
    tail_length = asc.Field(asc.uint32)
    tile_length = asc.Field(asc.uint32)
    former_tile_num = asc.Field(asc.uint32)
    former_last_tile = asc.Field(asc.uint32)
    tail_tile_num = asc.Field(asc.uint32)
    tail_last_tile = asc.Field(asc.uint32)
    a = asc.Field(asc.float32)
    b = asc.Field(asc.float32)


def relu_tiling(context: TilingContext, n, cores):
    """The host's tiling: the fp16 data split over ``cores`` vector cores, each share in tiles of TILE."""
    split = split_cores(n, 2, cores)
    tiling = ReluTilingData(former_num=split.former_num, former_length=split.former_length, tile_length=TILE)
    tiling.tail_length = split.tail_length
    for kind, length in (("former", split.former_length), ("tail", split.tail_length)):
        count = -(-length // TILE)
        setattr(tiling, f"{kind}_tile_num", count)
        setattr(tiling, f"{kind}_last_tile", length - (count - 1) * TILE)
    tiling.a, tiling.b = A, B
    context.set_block_dim(split.block_dim)
    tiling.save_to_buffer(context.get_raw_tiling_data())


@asc.jit(kernel_type=asc.KernelType.AIV_ONLY)
def relu_axpb(x: asc.GlobalAddress, y: asc.GlobalAddress, tiling: asc.TilingAddress):
    t = asc.get_tiling_data(tiling)
    idx = asc.get_block_idx()
    if idx < t.former_num:
        start, tiles, last = idx * t.former_length, t.former_tile_num, t.former_last_tile
    else:
        start = t.former_num * t.former_length + (idx - t.former_num) * t.tail_length
        tiles, last = t.tail_tile_num, t.tail_last_tile
    length = (tiles - 1) * t.tile_length + last
    x_gm, y_gm = asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, length)
    y_gm.set_global_buffer(y + start, length)
    pipe = asc.TPipe()
    in_q, out_q = asc.TQue(asc.TPosition.VECIN, 2), asc.TQue(asc.TPosition.VECOUT, 2)
    pipe.init_buffer(que=in_q, num=2, len=t.tile_length * 2)
    pipe.init_buffer(que=out_q, num=2, len=t.tile_length * 2)
    for i in range(tiles):
        count = t.tile_length if i < tiles - 1 else last
        copy_in(x_gm[i * t.tile_length :], in_q, count)
        compute(in_q, out_q, count, t.a, t.b)
        copy_out(y_gm[i * t.tile_length :], out_q, count)


def copy_in(x_gm, in_q, count):
    x_local = in_q.alloc_tensor(asc.half)
    asc.data_copy(x_local, x_gm, count)
    in_q.enque(x_local)


def compute(in_q, out_q, count, a, b):
    x_local = in_q.deque()
    y_local = out_q.alloc_tensor(asc.half)
    asc.muls(y_local, x_local, a, count)
    asc.adds(y_local, y_local, b, count)
    asc.relu(y_local, y_local, count)
    in_q.free_tensor(x_local)


def copy_out(y_gm, out_q, count):
    y_local = out_q.deque()
    asc.data_copy(y_gm, y_local, count)
    out_q.free_tensor(y_local)


def check(ret, what):
    if ret != ACL_SUCCESS:
        raise RuntimeError(f"{what} failed: {error_name(ret)} ({ret})")


# TODO: this program misbehaves in more than one way. The fixes take a few lines, in more than one place:
# let the symptoms, the debugger's findings and the profiler's figures tell you where.
def run(acl, x, cores=CORES):
    """y = relu(A * x + B) on the device: x is uploaded on one stream, the kernel runs on another."""
    n, nbytes = x.size, x.nbytes
    check(acl.init(), "acl.init")
    check(acl.rt.set_device(0), "set_device")
    upload, ret = acl.rt.create_stream()
    check(ret, "create_stream")
    work, ret = acl.rt.create_stream()
    check(ret, "create_stream")
    host_x, ret = acl.rt.malloc_host(nbytes)
    check(ret, "malloc_host")
    host_y, ret = acl.rt.malloc_host(nbytes)
    check(ret, "malloc_host")
    padded = -(-nbytes // 32) * 32  # the tiling pads every share to whole 32-byte data blocks
    dev_x, ret = acl.rt.malloc(padded, ACL_MEM_MALLOC_HUGE_FIRST)
    check(ret, "malloc")
    dev_y, ret = acl.rt.malloc(padded, ACL_MEM_MALLOC_HUGE_FIRST)
    check(ret, "malloc")
    uploaded, ret = acl.rt.create_event()
    check(ret, "create_event")
    acl.util.ptr_to_numpy(host_x, n, np.float16)[:] = x
    check(acl.rt.memcpy_async(dev_x, nbytes, host_x, nbytes, ACL_MEMCPY_HOST_TO_DEVICE, upload), "upload")
    context = TilingContext()
    relu_tiling(context, n, cores)
    args = (asc.GlobalAddress(dev_x), asc.GlobalAddress(dev_y), context.get_raw_tiling_data())
    check(acl.rt.launch_kernel(relu_axpb, context.get_block_dim(), work, *args), "launch_kernel")
    check(acl.rt.memcpy_async(host_y, nbytes, dev_y, nbytes, ACL_MEMCPY_DEVICE_TO_HOST, work), "download")
    ret = acl.rt.synchronize_stream(work)
    y = acl.util.ptr_to_numpy(host_y, n, np.float16).copy() if ret == ACL_SUCCESS else None
    check(acl.rt.synchronize_stream(upload), "synchronize_stream")
    check(acl.rt.destroy_event(uploaded), "destroy_event")
    for ptr in (dev_x, dev_y):
        check(acl.rt.free(ptr), "free")
    for ptr in (host_x, host_y):
        check(acl.rt.free_host(ptr), "free_host")
    for stream in (upload, work):
        check(acl.rt.destroy_stream(stream), "destroy_stream")
    check(acl.rt.reset_device(0), "reset_device")
    check(acl.finalize(), "finalize")
    return y


# Predict before you run: once the program is correct, is its kernel on 48 blocks "about 48x" faster than on
# 1 block, or "well under 48x"?
PREDICTIONS = {"blocks_speedup": None}  # TODO
