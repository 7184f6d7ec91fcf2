"""Lesson 12 exercise: the AddCustom operator project's host side and its two-phase aclnn call.

A CANN operator project (msOpGen) has an operator definition (OpDef: inputs, outputs, InferShape, the AI Core's
tiling function), the kernel, and a generated aclnn API. Here the definition and the kernel are given. Write:

1. infer_shape: the output's shape from the inputs' (x and y must have the same shape; no broadcasting);
2. tiling_func: the split over the chip's vector cores, the tiling key (ALIGNED when the length fills whole
   data blocks, PADDED otherwise), AddCustomTilingData, and the workspace the launch needs;
3. in add_custom_host, the two phases: aclnnAddCustomGetWorkspaceSize, then aclnnAddCustom.
Check it with:  ascendsim lesson check 12

第 12 课练习：AddCustom 算子工程的主机侧与两段式 aclnn 调用。
CANN 算子工程（msOpGen）包括算子定义（OpDef：输入、输出、InferShape、AI Core 的 tiling 函数）、核函数和生成的
aclnn 接口。这里算子定义和核函数已给出。请实现：
1. infer_shape：根据输入形状推导输出形状（x 与 y 形状必须相同，不做广播）；
2. tiling_func：按芯片的向量核切分、tiling key（长度正好是整数个数据块时为 ALIGNED，否则为 PADDED）、
   AddCustomTilingData，以及这次下发需要的 workspace；
3. 在 add_custom_host 中完成两段调用：先 aclnnAddCustomGetWorkspaceSize，再 aclnnAddCustom。
检查：ascendsim lesson check 12
"""

import numpy as np

from engine import TilingContext, asc
from engine.host.acl_codes import (
    ACL_MEM_MALLOC_HUGE_FIRST,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
)
from engine.host.aclnn import AclTensor
from engine.host.op_def import (
    GRAPH_FAILED,  # noqa: F401 (yours to use)
    GRAPH_SUCCESS,
    InferShapeContext,
    OpDef,
    PlatformAscendC,  # noqa: F401 (yours to use)
    aclnn_get_workspace_size,  # noqa: F401 (yours to use)
)

BLOCK_BYTES = 32  # DataCopy moves whole 32-byte data blocks between GM and UB
ALIGN = BLOCK_BYTES // 2  # fp16 elements per data block
ALIGNED, PADDED = 1, 2  # tiling keys: the length fills whole data blocks / the last data block is partly filled
USER_WORKSPACE = 0  # bytes of workspace AddCustom's kernel needs for itself: none


class AddCustomTilingData(asc.TilingData):  # BEGIN_TILING_DATA_DEF(AddCustomTilingData)
    total_length = asc.Field(asc.uint32)  # elements of x (and y, and z)
    former_num = asc.Field(asc.uint32)  # big cores: blocks 0 .. former_num - 1
    former_length = asc.Field(asc.uint32)  # elements of a big core
    tail_length = asc.Field(asc.uint32)  # elements of a small core


def core_split(total: int, cores: int) -> tuple[int, int, int, int]:
    """Lesson 2's split of ``total`` fp16 elements, in whole data blocks, over at most ``cores`` blocks (big
    cores first): (block_dim, former_num, former_length, tail_length)."""
    blocks = max(1, -(-total // ALIGN))
    block_dim = min(cores, blocks)
    return block_dim, blocks % block_dim, -(-blocks // block_dim) * ALIGN, blocks // block_dim * ALIGN


def infer_shape(context: InferShapeContext) -> int:
    """InferShape: z has the shape of x, which must be the shape of y (no broadcasting)."""
    # TODO (about 5 lines): read both inputs' shapes; if they differ, fail (GRAPH_FAILED); otherwise give output 0
    # the shape of input 0 and succeed.
    return GRAPH_SUCCESS


def tiling_func(context: TilingContext) -> int:
    """TilingFunc: the split over the chip's vector cores, the tiling key, the struct and the workspace."""
    # TODO (about 15 lines): the length from input 0's shape; the vector core count from the platform
    # (PlatformAscendC); core_split; fill and save AddCustomTilingData; set the block count and the tiling key
    # (ALIGNED when the length is a whole number of data blocks, PADDED otherwise); ask for one workspace of the
    # library's system workspace plus USER_WORKSPACE bytes.
    return GRAPH_SUCCESS


def add_custom_def() -> OpDef:
    """The operator definition (class AddCustom : public OpDef in op_host/add_custom.cpp)."""
    op = OpDef("AddCustom")
    op.input("x").data_type([asc.half])
    op.input("y").data_type([asc.half])
    op.output("z").data_type([asc.half])
    op.set_infer_shape(infer_shape)
    op.aicore().set_tiling(tiling_func)
    op.aicore().add_config("ascend910b")
    return op


TILE = 4096  # elements per UB tile


@asc.jit(kernel_type=asc.KernelType.AIV_ONLY, tiling_keys=(ALIGNED, PADDED))
def add_custom(
    x: asc.GlobalAddress,
    y: asc.GlobalAddress,
    z: asc.GlobalAddress,
    workspace: asc.GlobalAddress,
    tiling: asc.TilingAddress,
):
    """z = x + y on this block's range of the host's tiling (op_kernel/add_custom.cpp)."""
    t = asc.get_tiling_data(tiling)
    idx = asc.get_block_idx()
    if idx < t.former_num:
        start, length = idx * t.former_length, t.former_length
    else:
        start = t.former_num * t.former_length + (idx - t.former_num) * t.tail_length
        length = t.tail_length
    length = max(0, min(length, t.total_length - start))  # the last block stops at the length
    if length == 0:
        return
    x_gm, y_gm, z_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + start, length)
    y_gm.set_global_buffer(y + start, length)
    z_gm.set_global_buffer(z + start, length)
    pipe = asc.TPipe()
    x_q, y_q = asc.TQue(asc.TPosition.VECIN, 2), asc.TQue(asc.TPosition.VECIN, 2)
    z_q = asc.TQue(asc.TPosition.VECOUT, 2)
    pipe.init_buffer(que=x_q, num=2, len=TILE * asc.half.sizeof())
    pipe.init_buffer(que=y_q, num=2, len=TILE * asc.half.sizeof())
    pipe.init_buffer(que=z_q, num=2, len=TILE * asc.half.sizeof())
    for offset in range(0, length, TILE):
        count = min(TILE, length - offset)
        partial = asc.tiling_key_is(PADDED) and count % ALIGN != 0
        x_local, y_local = x_q.alloc_tensor(asc.half), y_q.alloc_tensor(asc.half)
        if partial:
            asc.data_copy_pad(x_local, x_gm[offset:], count)  # the last, partly filled data block
            asc.data_copy_pad(y_local, y_gm[offset:], count)
        else:
            asc.data_copy(x_local, x_gm[offset:], count)  # whole 32-byte data blocks only
            asc.data_copy(y_local, y_gm[offset:], count)
        x_q.enque(x_local)
        y_q.enque(y_local)
        x_local, y_local = x_q.deque(), y_q.deque()
        z_local = z_q.alloc_tensor(asc.half)
        asc.add(z_local, x_local, y_local, count)
        z_q.enque(z_local)
        x_q.free_tensor(x_local)
        y_q.free_tensor(y_local)
        z_local = z_q.deque()
        if partial:
            asc.data_copy_pad(z_gm[offset:], z_local, count)
        else:
            asc.data_copy(z_gm[offset:], z_local, count)
        z_q.free_tensor(z_local)


class HostError(RuntimeError):
    """A host call failed."""


def _ok(ret: int, what: str) -> None:
    if ret != ACL_SUCCESS:
        raise HostError(f"{what} failed with {ret}")


def add_custom_host(sim, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The application: x and y to the device, AddCustom through its two aclnn phases, z back."""
    acl = sim.acl
    _ok(acl.init(), "acl.init")
    _ok(acl.rt.set_device(0), "acl.rt.set_device")
    stream, ret = acl.rt.create_stream()
    _ok(ret, "acl.rt.create_stream")
    size = -(-x.nbytes // BLOCK_BYTES) * BLOCK_BYTES  # whole data blocks: the padding is computed, never copied back
    dev, host = [], []
    for name in ("x", "y", "z"):
        d, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
        _ok(ret, "acl.rt.malloc")
        sim.name_tensor(d, name, x.shape, "float16")
        h, ret = acl.rt.malloc_host(size)
        _ok(ret, "acl.rt.malloc_host")
        dev.append(d)
        host.append(h)
    for array, h, d in ((x, host[0], dev[0]), (y, host[1], dev[1])):
        if sim.numerics:
            acl.util.ptr_to_numpy(h, x.size, np.float16)[:] = array.reshape(-1)
        _ok(acl.rt.memcpy_async(d, size, h, x.nbytes, ACL_MEMCPY_HOST_TO_DEVICE, stream), "acl.rt.memcpy_async")
    x_t = AclTensor(x.shape, asc.half, dev[0])  # noqa: F841 (aclCreateTensor: the tensors of the two phases)
    y_t = AclTensor(y.shape, asc.half, dev[1])  # noqa: F841
    z_t = AclTensor(x.shape, asc.half, dev[2])  # noqa: F841
    workspace = None
    # TODO (about 8 lines): phase 1, aclnnAddCustomGetWorkspaceSize (aclnn_get_workspace_size with the operator's
    # definition, its kernel, the input tensors and the output tensor): it returns the workspace size, the executor
    # and a return code. Then a device workspace of that size (when it is not 0), and phase 2, aclnnAddCustom
    # (acl.nn.launch) on the stream. Check every return code.
    _ok(acl.rt.memcpy_async(host[2], x.nbytes, dev[2], x.nbytes, ACL_MEMCPY_DEVICE_TO_HOST, stream), "memcpy_async")
    _ok(acl.rt.synchronize_stream(stream), "acl.rt.synchronize_stream")
    z = np.zeros(x.shape, np.float16)
    if sim.numerics:
        z[:] = acl.util.ptr_to_numpy(host[2], x.size, np.float16).reshape(x.shape)
    if workspace is not None:
        _ok(acl.rt.free(workspace), "acl.rt.free")
    for d, h in zip(dev, host, strict=True):
        _ok(acl.rt.free(d), "acl.rt.free")
        _ok(acl.rt.free_host(h), "acl.rt.free_host")
    _ok(acl.rt.destroy_stream(stream), "acl.rt.destroy_stream")
    _ok(acl.rt.reset_device(0), "acl.rt.reset_device")
    _ok(acl.finalize(), "acl.finalize")
    return z


# Predict before you run: on the 910B1 (48 vector cores), how many blocks does your tiling launch for x of 200
# elements (13 data blocks of 16)? "48", "13" or "1"?
PREDICTIONS = {"blocks_for_200": None}  # TODO
