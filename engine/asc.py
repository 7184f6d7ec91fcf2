"""``asc``: the kernel-side API, named after pyasc (Huawei's Python Ascend C).

Write kernels the way pyasc reads::

    from engine import asc

    @asc.jit
    def add_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n: int):
        offset = asc.get_block_idx() * n
        x_gm = asc.GlobalTensor(); x_gm.set_global_buffer(x + offset, n)
        ...
        pipe = asc.TPipe()
        q = asc.TQue(asc.TPosition.VECIN, 2)
        pipe.init_buffer(que=q, num=2, len=n * asc.half.sizeof())
        t = q.alloc_tensor(asc.half); asc.data_copy(t, x_gm, n); q.enque(t)

Tiling is the host's (:mod:`engine.host.tiling_data`): a host tiling function fills a ``TilingData``
struct, sets the block count and the tiling key on a ``TilingContext``, and the launch carries the raw
tiling buffer to the kernel, which reads it with ``get_tiling_data`` (Ascend C's ``GET_TILING_DATA``) and
branches on ``tiling_key_is`` (``TILING_KEY_IS``)::

    class ScaleTiling(asc.TilingData):                   # BEGIN_TILING_DATA_DEF(ScaleTiling)
        block_length = asc.Field(asc.uint32)             #   TILING_DATA_FIELD_DEF(uint32_t, blockLength)

    @asc.jit(tiling_keys=(1, 2))
    def scale(x: asc.GlobalAddress, z: asc.GlobalAddress, tiling: asc.TilingAddress):
        t = asc.get_tiling_data(tiling)                  # GET_TILING_DATA(t, tiling)
        if asc.tiling_key_is(1): ...                     # TILING_KEY_IS(1)

The Cube's data moves as CANN arranges it (:mod:`engine.aicore.layout`): ``data_copy(l1, gm[offset:],
Nd2NzParams(...))`` turns ND into NZ on the way into L1, ``load_data(l0, l1, LoadData2DParams(...))`` (or
``LoadData3DParamsV2``) makes ZZ in L0A and ZN in L0B, ``mmad`` writes NZ into L0C and ``fixpipe(gm[offset:],
l0c, FixpipeParamsV220(...))`` writes it back as ND; a wrong layout is an AI-core error naming the expected
and the given format.

Differences from pyasc, by design: kernels are launched with ``acl.rt.launch_kernel(kernel,
block_dim, stream, *args)``; row-major matrix copies (GM <-> UB) may take 2-D tile views (``gm.tile(...)``,
``local.reshape(r, c).tile(...)``) instead of ``DataCopyParams``; cross-core
flags take the mode and pipe as arguments (``cross_core_set_flag(id, mode=2, pipe=...)``) where
Ascend C has template parameters, and only mode 2 (AIC <-> AIV of one AI core) is modelled; a kernel
may name a fast path of its own (``@asc.jit(kernel_type=..., fast_path=fn)``: the same program,
recorded faster, run when the simulation allows it), as the shipped matmul kernels do.
"""

from .aicore.cube_fixpipe import fixpipe
from .aicore.cube_ops import load_data, mmad
from .aicore.cube_params import (
    CO2Layout,
    FixpipeConfig,
    FixpipeParamsV220,
    LoadData2DParams,
    LoadData3DParamsV2,
    MmadParams,
    Nd2NzParams,
    QuantModes,
)
from .aicore.instructions import data_copy, data_copy_pad
from .aicore.launch import JitKernel, KernelType, jit
from .aicore.pipes import HardEvent, PipeID
from .aicore.sync_ops import (
    ascend_is_aic,
    ascend_is_aiv,
    cross_core_set_flag,
    cross_core_wait_flag,
    get_block_idx,
    get_block_num,
    get_subblockidx,
    mark,
    pipe_barrier,
    scalar_work,
    set_flag,
    wait_flag,
)
from .aicore.tensor import (
    DType,
    GlobalAddress,
    GlobalTensor,
    LocalTensor,
    TPosition,
    float16,
    float32,
    half,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from .aicore.tiling_read import TilingAddress, get_tiling_data, tiling_key_is
from .aicore.tpipe import TBuf, TPipe, TQue
from .aicore.vector_ops import (
    add,
    adds,
    cast,
    div,
    duplicate,
    exp,
    ln,
    maxs,
    mins,
    mul,
    muls,
    reduce_sum,
    relu,
    sqrt,
    sub,
)
from .aicore.vector_ops import vabs as abs
from .aicore.vector_ops import vmax as max
from .aicore.vector_ops import vmin as min
from .host.tiling_data import Field, StructField, TilingData

__all__ = (
    "CO2Layout",
    "DType",
    "Field",
    "FixpipeConfig",
    "FixpipeParamsV220",
    "GlobalAddress",
    "GlobalTensor",
    "HardEvent",
    "JitKernel",
    "KernelType",
    "LoadData2DParams",
    "LoadData3DParamsV2",
    "LocalTensor",
    "MmadParams",
    "Nd2NzParams",
    "PipeID",
    "QuantModes",
    "StructField",
    "TBuf",
    "TPipe",
    "TPosition",
    "TQue",
    "TilingAddress",
    "TilingData",
    "abs",
    "add",
    "adds",
    "ascend_is_aic",
    "ascend_is_aiv",
    "cast",
    "cross_core_set_flag",
    "cross_core_wait_flag",
    "data_copy",
    "data_copy_pad",
    "div",
    "duplicate",
    "exp",
    "fixpipe",
    "float16",
    "float32",
    "get_block_idx",
    "get_block_num",
    "get_subblockidx",
    "get_tiling_data",
    "half",
    "int8",
    "int16",
    "int32",
    "int64",
    "jit",
    "ln",
    "load_data",
    "mark",
    "max",
    "maxs",
    "min",
    "mins",
    "mmad",
    "mul",
    "muls",
    "pipe_barrier",
    "reduce_sum",
    "relu",
    "scalar_work",
    "set_flag",
    "sqrt",
    "sub",
    "tiling_key_is",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "wait_flag",
)
