"""The one mapping table: each Python API the lessons and shipped kernels call, and its C++ (ACL / Ascend C).

One :class:`Entry` a line: the Python key, the C++ template, and optionally what the value's C++ type is, an
out-parameter, a note (what differs from CANN, in both languages: ``cpp.note.<note>`` in
:mod:`app.present.messages_cpp`) and the condition (``when``) that picks one form among several of a key.

Keys: ``acl.rt.malloc`` (pyACL, :mod:`engine.host.acl`), ``asc.data_copy`` (:mod:`engine.asc`), ``TQue.enque``
(a method of an API class, :data:`CLASSES`), ``engine.aicore.tiling.balanced_tiling`` (a name imported from an
engine module). Templates: ``{param}`` is the C++ of the call's argument for the Python parameter ``param``
(bound through the Python signature, so a renamed parameter fails a test); ``{param:conv}`` converts it
(``type``: a dtype as a C++ type, ``id``: an event id as ``EVENT_IDn``, ``raw``: a string's text, ``name``: a
name as it is spelt, ``gm``: a GM address cast to the element type, ``scalar``: a scalar cast to a half element
type); ``{param.field}`` reads a
2-D tile's ``rows``/``cols``/``ld`` or a params struct's field. Specials: ``{@recv}`` the object of a method call,
``{@T}`` the element type, ``{@out}`` the out-parameter, ``{@name}`` the variable a constructor declares,
``{@fields}`` keyword arguments as designated initialisers, ``{@at}`` a tile's first element; ``{p.base}`` and
``{p.plus}`` are a tile argument's tensor and its offset followed by `` + `` (nothing when it has none). A template
line ``// ...`` renders as a comment.

Sources (``SOURCES``): the ACL C prototypes are CANN's application-development API reference (aclcppdevg,
which lists pyACL's C prototypes beside the Python); the Ascend C prototypes are pyasc's "对应的Ascend C函数原型"
(hicann/pyasc docs/python-api) and CANN's asc-devkit headers and samples (include/basic_api/kernel_struct_*.h,
examples/01_simd_cpp_api/00_introduction: add_tpipe_tque, matmul_basic_api, matmul_leakyrelu_*).
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from functools import cache

from engine import asc
from engine.aicore.matmul_tiling import TCubeTiling
from engine.host.acl import Acl, Op, Rt, Util
from engine.host.dynamic_shapes import ShapeHistory
from engine.host.tiling_data import TilingContext
from engine.kernels.matmul_api import Matmul


@dataclass(frozen=True)
class Entry:
    key: str  # the Python API: "acl.rt.malloc", "asc.data_copy", "TQue.enque", "engine.aicore.tiling.balanced_tiling"
    cpp: str  # the C++ template (see the module's docstring)
    result: str = ""  # the C++ type of the value ("aclError", "LocalTensor<{@T}>"); "" when it is not declared
    out: str = ""  # pyACL returns (value, ret): the C++ type of the value written through the first pointer
    note: str = ""  # what differs from CANN: cpp.note.<note> in messages_cpp
    when: str = ""  # the condition under which this form is the one (app.present.cpp.expr.FORMS)
    decl: bool = False  # a constructor: ``x = Ctor(...)`` declares x with ``cpp`` as its type (or lines)
    src: str = ""  # a key of SOURCES; "" means by its prefix (acl.* -> acl, asc.* and classes -> pyasc)
    pre: str = ""  # a statement that goes before the one the call is in (a template too)
    void: bool = False  # the C++ call has no value: as a statement only ``pre`` is written


E = Entry
VEC2 = "({dst}, {src0}, {src1}, {count})"  # Add / Sub / Mul / Div / Max / Min(dst, src0, src1, count)
VEC1 = "({dst}, {src}, {count})"  # Exp / Ln / Sqrt / Relu / Abs(dst, src, count)
VECS = "({dst}, {src}, {scalar:scalar}, {count})"  # Adds / Muls / Maxs / Mins(dst, src, scalarValue, count)
PAD = "DataCopyExtParams{1, static_cast<uint32_t>({count} * sizeof({@T})), 0, 0, 0}"

# One entry a line (adding an API is adding a line), so the formatter leaves the table alone.
# fmt: off
TABLE: tuple[Entry, ...] = (
    # -- host: pyACL (engine/host/acl.py) -> ACL C (acl/acl.h) ---------------------------------------------------
    E("acl.init", "aclInit({config_path})", "aclError"),
    E("acl.finalize", "aclFinalize()", "aclError"),
    E("acl.rt.set_device", "aclrtSetDevice({device_id})", "aclError"),
    E("acl.rt.reset_device", "aclrtResetDevice({device_id})", "aclError"),
    E("acl.rt.create_stream", "aclrtCreateStream(&{@out})", "aclError", out="aclrtStream", note="out_param"),
    E("acl.rt.create_stream_with_config", "aclrtCreateStreamWithConfig(&{@out}, {priority}, {flag})", "aclError",
      out="aclrtStream", note="out_param"),
    E("acl.rt.destroy_stream", "aclrtDestroyStream({stream})", "aclError"),
    E("acl.rt.malloc", "aclrtMalloc(&{@out}, {size}, {policy})", "aclError", out="void *", note="out_param"),
    E("acl.rt.free", "aclrtFree({ptr})", "aclError"),
    E("acl.rt.malloc_host", "aclrtMallocHost(&{@out}, {size})", "aclError", out="void *", note="out_param"),
    E("acl.rt.free_host", "aclrtFreeHost({ptr})", "aclError"),
    E("acl.rt.memset", "aclrtMemset({dev_ptr}, {max_count}, {value}, {count})", "aclError"),
    E("acl.rt.memcpy", "aclrtMemcpy({dst}, {dst_max}, {src}, {count}, {kind})", "aclError"),
    E("acl.rt.memcpy_async", "aclrtMemcpyAsync({dst}, {dst_max}, {src}, {count}, {kind}, {stream})", "aclError"),
    E("acl.rt.synchronize_stream", "aclrtSynchronizeStream({stream})", "aclError"),
    E("acl.rt.synchronize_device", "aclrtSynchronizeDevice()", "aclError"),
    E("acl.rt.create_event", "aclrtCreateEvent(&{@out})", "aclError", out="aclrtEvent", note="out_param"),
    E("acl.rt.record_event", "aclrtRecordEvent({event}, {stream})", "aclError"),
    E("acl.rt.stream_wait_event", "aclrtStreamWaitEvent({stream}, {event})", "aclError"),
    E("acl.rt.synchronize_event", "aclrtSynchronizeEvent({event})", "aclError"),
    E("acl.rt.event_elapsed_time", "aclrtEventElapsedTime(&{@out}, {start}, {end})", "aclError", out="float",
      note="out_param"),
    E("acl.rt.destroy_event", "aclrtDestroyEvent({event})", "aclError"),
    E("acl.rt.launch_kernel", "aclrtGetLastError(ACL_RT_THREAD_LEVEL)", "aclError", note="launch", void=True,
      pre="{kernel:name}<<<{block_dim}, nullptr, {stream}>>>({args})"),
    E("acl.util.numpy_to_ptr", "{array}.data()", note="numpy_ptr"),
    E("acl.util.ptr_to_numpy", "static_cast<{dtype:type} *>({ptr})", note="numpy_ptr"),
    E("acl.op.matmul", "aclnnMatmul(workspace, workspaceSize, executor, {stream})", "aclnnStatus", note="op_matmul",
      src="aclnn", pre="aclnnMatmulGetWorkspaceSize(tensorA, tensorB, tensorC, 1, &workspaceSize, &executor)"),
    # -- kernel: pyasc (engine/asc.py) -> Ascend C (kernel_operator.h) --------------------------------------------
    E("asc.jit", "KERNEL_TASK_TYPE_DEFAULT({kernel_type})", note="jit"),
    E("asc.TPipe", "TPipe", decl=True),
    E("asc.TQue", "TQue<{position}, {depth}>", decl=True),
    E("asc.TBuf", "TBuf<{position}>", decl=True),
    E("asc.GlobalTensor", "GlobalTensor<{@T}>", decl=True),
    E("asc.GlobalAddress", "{ptr}", note="gm_address"),
    E("asc.Nd2NzParams", "Nd2NzParams{{nd_num}, {n_value}, {d_value}, {src_nd_matrix_stride}, {src_d_value}, "
      "{dst_nz_c0_stride}, {dst_nz_n_stride}, {dst_nz_matrix_stride}}", note="nd2nz", src="devkit"),
    E("asc.LoadData2DParams", "LoadData2DParams{{start_index}, {repeat_times}, {src_stride}, {sid}, {dst_gap}, "
      "{if_transpose}, {addr_mode}}", note="load_data", src="devkit"),
    E("asc.LoadData3DParamsV2", "LoadData3DParamsV2<half>{.l1H = {l1_h}, .l1W = {l1_w}, .channelSize = "
      "{channel_size}, .kExtension = {k_extension}, .mExtension = {m_extension}, .kStartPt = {k_start_pt}, "
      ".mStartPt = {m_start_pt}, .enTranspose = {en_transpose}}", note="load3d", src="devkit"),
    E("asc.MmadParams", "MmadParams{{m}, {n}, {k}, {unit_flag}, {cmatrix_source}, {cmatrix_init_val}}", note="mmad",
      src="devkit"),
    E("asc.FixpipeParamsV220", "FixpipeParamsV220{{n_size}, {m_size}, {src_stride}, {dst_stride}, {relu_en}, "
      "{quant_pre}, {deq_scalar}, {nd_num}, {src_nd_stride}, {dst_nd_stride}, {unit_flag}}", note="fixpipe",
      src="devkit"),
    E("asc.FixpipeConfig", "FixpipeConfig{{layout}}", src="devkit"),
    E("asc.FixpipeConfig.cfg_row_major", "CFG_ROW_MAJOR", src="devkit"),
    E("asc.FixpipeConfig.cfg_nz", "CFG_NZ", src="devkit"),
    E("TPipe.init_buffer", "{@recv}.InitBuffer({buf}, {num})", when="buf"),
    E("TPipe.init_buffer", "{@recv}.InitBuffer({que}, {num}, {len})"),
    E("TPipe.init", "{@recv}.Init()"),
    E("TPipe.reset", "{@recv}.Reset()"),
    E("TPipe.destroy", "{@recv}.Destroy()"),
    E("TQue.alloc_tensor", "{@recv}.AllocTensor<{@T}>()", "LocalTensor<{@T}>", note="shape", when="shape"),
    E("TQue.alloc_tensor", "{@recv}.AllocTensor<{@T}>()", "LocalTensor<{@T}>"),
    E("TQue.enque", "{@recv}.EnQue({tensor})"),
    E("TQue.deque", "{@recv}.DeQue<{@T}>()", "LocalTensor<{@T}>"),
    E("TQue.free_tensor", "{@recv}.FreeTensor({tensor})"),
    E("TQue.has_tensor_in_que", "{@recv}.HasTensorInQue()", "bool"),
    E("TQue.slot_state", "{@recv}.SlotState()", note="fast_path", src="sim"),
    E("TQue.set_slot_state", "{@recv}.SetSlotState({state})", note="fast_path", src="sim"),
    E("TBuf.get", "{@recv}.Get<{@T}>({count})", "LocalTensor<{@T}>", when="count"),
    E("TBuf.get", "{@recv}.Get<{@T}>()", "LocalTensor<{@T}>"),
    E("GlobalTensor.set_global_buffer", "{@recv}.SetGlobalBuffer({addr:gm}, {size})", when="size", note="gm_address"),
    E("GlobalTensor.set_global_buffer", "{@recv}.SetGlobalBuffer({addr:gm})", note="gm_address"),
    E("GlobalTensor.__getitem__", "{@recv}[{key}]"),
    E("GlobalTensor.tile", "{@recv}[{@at}]", note="tile_view"),
    E("LocalTensor.tile", "{@recv}[{@at}]", note="tile_view"),
    E("LocalTensor.reshape", "{@recv}", note="reshape"),
    E("LocalTensor.__getitem__", "{@recv}[{key}]"),
    E("LocalTensor.view", "{@recv}.View({ctx})", note="fast_path", src="sim"),
    E("DType.sizeof", "sizeof({@recv:type})"),
    E("asc.data_copy", "DataCopy({dst}, {src}, {count})", when="count"),
    E("asc.data_copy", "DataCopy({dst}, {src}, {count})", when="nd2nz", note="nd2nz", src="devkit"),
    E("asc.data_copy", "DataCopy({dst}, {src}, DataCopyParams{{src.rows}, {src.cols} * sizeof({@T}) / 32, "
      "({src.ld} - {src.cols}) * sizeof({@T}) / 32, 0})", when="from_gm_tile", note="tile_view"),
    E("asc.data_copy", "DataCopy({dst}, {src}, DataCopyParams{{dst.rows}, {dst.cols} * sizeof({@T}) / 32, 0, "
      "({dst.ld} - {dst.cols}) * sizeof({@T}) / 32})", when="to_gm_tile", note="tile_view"),
    E("asc.data_copy", "DataCopy({dst}, {src}, {count})"),
    E("asc.data_copy_pad", f"DataCopyPad({{dst}}, {{src}}, {PAD})", when="to_gm", note="data_copy_pad"),
    E("asc.data_copy_pad", f"DataCopyPad({{dst}}, {{src}}, {PAD}, DataCopyPadExtParams<{{@T}}>{{false, 0, 0, 0}})",
      note="data_copy_pad"),
    E("asc.load_data", "LoadData({dst}, {src}, {params})", note="load_data"),
    E("asc.mmad", "Mmad({dst}, {fm}, {filter}, {params})", note="mmad"),
    E("asc.fixpipe", "Fixpipe<{@T}, float, {config}>({dst}, {src}, {params})", when="config", note="fixpipe"),
    E("asc.fixpipe", "Fixpipe({dst}, {src}, {params})", note="fixpipe"),
    E("asc.set_flag", "SetFlag<{event}>({event_id:id})"),
    E("asc.wait_flag", "WaitFlag<{event}>({event_id:id})"),
    E("asc.pipe_barrier", "PipeBarrier<{pipe}>()"),
    E("asc.cross_core_set_flag", "CrossCoreSetFlag<{mode}, {pipe}>({flag_id})", note="cross_core"),
    E("asc.cross_core_wait_flag", "CrossCoreWaitFlag<{mode}, {pipe}>({flag_id})", note="cross_core"),
    E("asc.Field", "TILING_DATA_FIELD_DEF({dtype:type}, {@name});", decl=True, note="tiling_data", src="tiling"),
    E("asc.StructField", "TILING_DATA_FIELD_DEF_STRUCT({struct:name}, {@name});", decl=True, note="tiling_data",
      src="tiling"),
    E("asc.get_tiling_data", "GET_TILING_DATA({@name}, {tiling});", decl=True, note="get_tiling_data", src="tiling"),
    E("asc.tiling_key_is", "TILING_KEY_IS({key})", "bool", note="tiling_key", src="tiling"),
    E("TilingContext.set_block_dim", "{@recv}->SetBlockDim({block_dim})", src="tiling"),
    E("TilingContext.get_block_dim", "{@recv}->GetBlockDim()", "uint32_t", src="tiling"),
    E("TilingContext.set_tiling_key", "{@recv}->SetTilingKey({key})", src="tiling"),
    E("TilingContext.get_tiling_key", "{@recv}->GetTilingKey()", "uint64_t", src="tiling"),
    E("TilingContext.get_raw_tiling_data", "{@recv}->GetRawTilingData()", "gert::TilingData *", src="tiling"),
    E("asc.get_block_idx", "GetBlockIdx()", "int64_t"),
    E("asc.get_block_num", "GetBlockNum()", "int64_t"),
    E("asc.get_subblockidx", "GetSubBlockIdx()", "int64_t"),
    E("asc.ascend_is_aic", "ASCEND_IS_AIC", note="mix_if", src="devkit"),
    E("asc.ascend_is_aiv", "ASCEND_IS_AIV", note="mix_if", src="devkit"),
    E("asc.scalar_work", "// (simulator only) {cycles} scalar cycles: {name:raw}", note="sim_only"),
    E("asc.mark", "// (simulator only) mark: {label:raw}", note="sim_only"),
    E("asc.add", "Add" + VEC2),
    E("asc.sub", "Sub" + VEC2),
    E("asc.mul", "Mul" + VEC2),
    E("asc.div", "Div" + VEC2),
    E("asc.max", "Max" + VEC2),
    E("asc.min", "Min" + VEC2),
    E("asc.exp", "Exp" + VEC1),
    E("asc.ln", "Ln" + VEC1),
    E("asc.sqrt", "Sqrt" + VEC1),
    E("asc.relu", "Relu" + VEC1),
    E("asc.abs", "Abs" + VEC1),
    E("asc.adds", "Adds" + VECS),
    E("asc.muls", "Muls" + VECS),
    E("asc.maxs", "Maxs" + VECS),
    E("asc.mins", "Mins" + VECS),
    E("asc.duplicate", "Duplicate({dst}, {scalar:scalar}, {count})"),
    E("asc.cast", "Cast({dst}, {src}, RoundMode::{round_mode:raw}, {count})"),
    E("asc.reduce_sum", "ReduceSum({dst}, {src}, {work}, {count})"),
    # -- the Matmul API object (engine/kernels/matmul_api.py) -> matmul::Matmul (lib/matmul_intf.h) --------------
    E("engine.kernels.matmul_api.Matmul", "matmul::Matmul<aType, bType, cType> {@name};\n"
      "REGIST_MATMUL_OBJ(&{pipe}, GetSysWorkSpacePtr(), {@name}, &{tiling});", decl=True, note="matmul_obj",
      src="devkit"),
    E("Matmul.set_tensor_a", "{@recv}.SetTensorA({a_gm})"),
    E("Matmul.set_tensor_b", "{@recv}.SetTensorB({b_gm}, {is_transpose_b})"),
    E("Matmul.iterate", "{@recv}.Iterate()", "bool"),
    E("Matmul.get_tensor_c", "{@recv}.GetTensorC({c_gm})"),
    E("Matmul.iterate_all", "{@recv}.IterateAll({c_gm})"),
    # -- the simulator's helpers that lesson code calls: no CANN API, shown as the C++ you would write ------------
    E("engine.aicore.tiling.balanced_tiling", "BalancedTiling({total_size}, {num_blocks})", note="device_tiling",
      src="sim"),
    E("engine.aicore.tiling.get_block_range", "GetBlockRange({tiling}, {block_id})", "std::pair<int32_t, int32_t>",
      note="device_tiling", src="sim"),
    E("engine.aicore.tiling.compute_optimal_tiling",
      "ComputeOptimalTiling({total_size}, {preferred_block_size}, {max_blocks})", note="sim_helper", src="sim"),
    E("engine.aicore.matmul_tiling.TCubeTiling", "TCubeTiling{{@fields}}", "TCubeTiling", note="tcube",
      src="devkit"),
    E("TCubeTiling.core_region", "CoreRegion({@recv}, {block})", note="sim_helper", src="sim"),
    E("TCubeTiling.to_dict", "{@recv}", note="sim_helper", src="sim"),
    E("engine.aicore.matmul_tiling.TilingError", "std::invalid_argument({field})", note="sim_helper", src="sim"),
    E("engine.aicore.matmul_tiling.validate", "ValidateTiling({t}, {profile}, {out_bytes})", note="sim_helper",
      src="sim"),
    E("engine.aicore.matmul_tiling.auto_tiling",
      "AutoTiling({profile}, {m}, {n}, {k}, {cores}, {buffer_num}, {base})", note="auto_tiling", src="sim"),
    E("engine.host.acl_codes.error_name", "aclGetRecentErrMsg()", "const char *", note="error_name"),
    E("engine.host.dynamic_shapes.ShapeHistory", "ShapeHistory", decl=True, note="sim_helper", src="sim"),
    E("engine.host.dynamic_shapes.size_bucket", "SizeBucket({shape})", note="sim_helper", src="sim"),
    E("ShapeHistory.add", "{@recv}.Add({shape})", note="sim_helper", src="sim"),
    E("ShapeHistory.stability", "{@recv}.Stability({current})", "float", note="sim_helper", src="sim"),
    E("ShapeHistory.variability", "{@recv}.Variability({current})", "float", note="sim_helper", src="sim"),
)
# fmt: on

# Values (not calls) and how they read in C++; a prefix ending in "." maps every member (TPosition.VECIN ...).
NAMES = {
    "asc.half": "half",
    "asc.float16": "half",
    "asc.float32": "float",
    "asc.int8": "int8_t",
    "asc.int16": "int16_t",
    "asc.int32": "int32_t",
    "asc.uint8": "uint8_t",
    "asc.uint16": "uint16_t",
    "asc.uint32": "uint32_t",
    "asc.int64": "int64_t",
    "asc.uint64": "uint64_t",
    "asc.TPosition.": "TPosition::{}",
    "asc.HardEvent.": "HardEvent::{}",
    "asc.PipeID.": "{}",
    "asc.KernelType.": "KERNEL_TYPE_{}",
    "asc.QuantModes.": "QuantMode_t::{}",
    "asc.CO2Layout.": "CO2Layout::{}",
    "np.float16": "aclFloat16",
    "np.float32": "float",
    "np.int32": "int32_t",
}
# Types of engine.asc that are only named (annotations, isinstance), never called by lesson code.
TYPES_ONLY = ("asc.DType", "asc.JitKernel", "asc.LocalTensor", "asc.TilingData", "asc.TilingAddress")

# The API classes whose methods lesson code calls on objects, by the name keys use.
CLASSES = {
    "TPipe": asc.TPipe,
    "TQue": asc.TQue,
    "TBuf": asc.TBuf,
    "GlobalTensor": asc.GlobalTensor,
    "LocalTensor": asc.LocalTensor,
    "DType": asc.DType,
    "Matmul": Matmul,
    "ShapeHistory": ShapeHistory,
    "TCubeTiling": TCubeTiling,
    "TilingContext": TilingContext,
}
ACL = {"acl": Acl, "acl.rt": Rt, "acl.util": Util, "acl.op": Op}
# Modules whose names, imported into lesson code, are API calls (anything else imported is ordinary code).
API_MODULES = (
    "engine.aicore.tiling",
    "engine.aicore.matmul_tiling",
    "engine.host.acl_codes",
    "engine.host.dynamic_shapes",
    "engine.kernels.matmul_api",
)

SOURCES = {
    "acl": "CANN application development API reference (aclcppdevg: ACL C prototypes; aclpythondevg lists "
    "each pyACL function beside its C prototype), hiascend.com",
    "aclnn": "CANN operator API reference: aclnnMatmul (aclnnMatmulGetWorkspaceSize, aclnnMatmul), hiascend.com",
    "pyasc": "hicann/pyasc docs/python-api/language/generated (对应的Ascend C函数原型 of each pyasc call)",
    "devkit": "CANN asc-devkit: include/basic_api/kernel_struct_mm.h, kernel_struct_data_copy.h, "
    "kernel_struct_fixpipe.h and examples/01_simd_cpp_api/00_introduction (add_tpipe_tque, matmul_basic_api, "
    "matmul_leakyrelu_basic_api, matmul_leakyrelu_advanced_api)",
    "sim": "the simulator's own helper (engine/): no CANN counterpart",
    "tiling": "Ascend C API reference: the TilingData structure definition (BEGIN_TILING_DATA_DEF, "
    "TILING_DATA_FIELD_DEF, TILING_DATA_FIELD_DEF_STRUCT), GET_TILING_DATA, TILING_KEY_IS, and TilingContext's "
    "SetBlockDim, SetTilingKey and GetRawTilingData, hiascend.com",
}


def source_of(entry: Entry) -> str:
    """The key of ``SOURCES`` an entry's form comes from."""
    if entry.src:
        return entry.src
    return "acl" if entry.key.startswith("acl.") else "pyasc"


@cache
def by_key() -> dict[str, tuple[Entry, ...]]:
    """Every key's forms in table order (the first whose ``when`` holds is used; the last has none)."""
    out: dict[str, list[Entry]] = {}
    for entry in TABLE:
        out.setdefault(entry.key, []).append(entry)
    return {k: tuple(v) for k, v in out.items()}


def python_object(key: str):
    """The Python callable a key names (its signature binds a call's arguments); KeyError if none."""
    head, _, name = key.rpartition(".")
    if head in ACL:
        return getattr(ACL[head], name)
    if head == "asc":
        return getattr(asc, name)
    if head.startswith("asc.") and head.count(".") == 1:  # a class method of an asc value class (FixpipeConfig.cfg_nz)
        return getattr(getattr(asc, head[4:]), name)
    if head in CLASSES:
        return getattr(CLASSES[head], name)
    if head.startswith("engine."):
        return getattr(importlib.import_module(head), name)
    raise KeyError(key)


def parameters(key: str) -> tuple[inspect.Parameter, ...]:
    """The Python parameters of the API a key names, ``self`` left out."""
    obj = python_object(key)
    if isinstance(obj, property):
        return ()
    params = tuple(inspect.signature(obj).parameters.values())
    head = key.rpartition(".")[0]
    if (head in CLASSES or head in ACL) and params and params[0].name == "self":
        params = params[1:]
    return params


__all__ = ("ACL", "API_MODULES", "CLASSES", "NAMES", "SOURCES", "TABLE", "TYPES_ONLY", "Entry")
