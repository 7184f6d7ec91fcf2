"""Lesson 12 reference solution: the AddCustom operator project's host side (InferShape, the tiling function)
and the two-phase aclnn call."""

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
    GRAPH_FAILED,
    GRAPH_SUCCESS,
    InferShapeContext,
    OpDef,
    PlatformAscendC,
    aclnn_get_workspace_size,
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
    x_shape = context.get_input_shape(0)
    y_shape = context.get_input_shape(1)
    if x_shape != y_shape:
        return GRAPH_FAILED
    context.get_output_shape(0).copy_from(x_shape)
    return GRAPH_SUCCESS


def tiling_func(context: TilingContext) -> int:
    """TilingFunc: the split over the chip's vector cores, the tiling key, the struct and the workspace."""
    total = context.get_input_shape(0).get_shape_size()
    platform = PlatformAscendC(context.get_platform_info())
    block_dim, former_num, former_length, tail_length = core_split(total, platform.get_core_num_aiv())
    tiling = AddCustomTilingData()
    tiling.set_total_length(total)
    tiling.set_former_num(former_num)
    tiling.set_former_length(former_length)
    tiling.set_tail_length(tail_length)
    context.set_block_dim(block_dim)
    context.set_tiling_key(ALIGNED if total % ALIGN == 0 else PADDED)
    tiling.save_to_buffer(context.get_raw_tiling_data())
    workspace = context.get_workspace_sizes(1)
    workspace[0] = platform.get_lib_api_work_space_size() + USER_WORKSPACE
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
    x_t = AclTensor(x.shape, asc.half, dev[0])  # aclCreateTensor
    y_t = AclTensor(y.shape, asc.half, dev[1])
    z_t = AclTensor(x.shape, asc.half, dev[2])
    workspace_size, executor, ret = aclnn_get_workspace_size(sim, add_custom_def(), add_custom, (x_t, y_t), (z_t,))
    _ok(ret, "aclnnAddCustomGetWorkspaceSize")
    workspace = None
    if workspace_size > 0:
        workspace, ret = acl.rt.malloc(workspace_size, ACL_MEM_MALLOC_HUGE_FIRST)
        _ok(ret, "acl.rt.malloc workspace")
    _ok(acl.nn.launch(workspace, workspace_size, executor, stream), "aclnnAddCustom")
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


PREDICTIONS = {"blocks_for_200": "13"}
