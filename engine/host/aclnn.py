"""The aclnn two-phase single-operator API: ``aclnnXxxGetWorkspaceSize`` then ``aclnnXxx``.

CANN runs an operator from the host in two calls (the operator API reference, "两段式接口"):

1. ``aclnnXxxGetWorkspaceSize(inputs..., outputs..., &workspaceSize, &executor)`` checks the arguments, runs
   the operator's tiling and returns the device workspace it needs and an ``aclOpExecutor`` holding the launch;
2. ``aclnnXxx(workspace, workspaceSize, executor, stream)`` queues it on ``stream`` with a workspace of at least
   that size. A non-repeatable executor is released by this second call (aclDestroyAclOpExecutor's page): it
   runs once.

Here ``acl.nn.get_workspace_size`` is the first phase as data: the operator's name, its ``AclTensor`` inputs
and outputs (``aclCreateTensor``), the output shapes its InferShape derived, the kernel, and what its tiling
function wrote (block dim, the raw tiling buffer with the tiling key, the workspace sizes). It returns
``(workspace_size, executor, ret)``, pyACL's style; ``acl.nn.launch`` is the second phase and returns ``ret``.
The operator's own host code (InferShape, tiling) runs before, in the program (:mod:`engine.host.op_def`):
what reaches the simulator is only values, each validated here. Failures carry aclnn's codes
(ACLNN_ERR_PARAM_NULLPTR 161001, ACLNN_ERR_PARAM_INVALID 161002) with a message naming the field and value.
That the first phase refuses an output whose shape is not InferShape's is the simulator's rule (ASSUMPTION: a
CANN operator checks its output's shape in its own way); so is refusing a second run of one executor (in CANN
it is undefined: the executor was released).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..aicore.tensor import DType, GlobalAddress, uint8
from . import acl_codes as C
from .acl_codes import AclError
from .gert_shape import ShapeError, check_dims
from .tiling_data import MAX_TILING_KEY, RawTilingData

if TYPE_CHECKING:
    from ..simulation import Simulation

MAX_TENSORS = 16  # inputs plus outputs of one operator (ASSUMPTION: the simulator's limit)
MAX_WORKSPACE_BYTES = 1 << 34  # one operator's workspace (ASSUMPTION: the simulator's limit, 16 GiB)
_OP_NAME = re.compile(r"^[A-Z][A-Za-z0-9]{0,63}$")


@dataclass(frozen=True)
class AclTensor:
    """``aclCreateTensor(viewDims, ..., dataType, ..., ACL_FORMAT_ND, ..., tensorData)``: a contiguous ND tensor
    of ``shape`` and ``dtype`` at device address ``addr``. Bad values raise ShapeError (both languages)."""

    shape: tuple
    dtype: DType
    addr: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", check_dims("aclTensor shape", self.shape))
        if not isinstance(self.dtype, DType):
            raise ShapeError("aclTensor dtype", "is a dtype", type(self.dtype).__name__, "必须是数据类型")
        a = self.addr
        if isinstance(a, bool) or not isinstance(a, int | np.integer) or not 0 <= a < 1 << 64:
            raise ShapeError("aclTensor addr", "is a device address 0..2^64-1", a, "必须是 0..2^64-1 的设备地址")
        object.__setattr__(self, "addr", int(a))

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.size


class AclOpExecutor:
    """``aclOpExecutor``: one operator launch, prepared by the first phase, run once by the second."""

    def __init__(
        self,
        sim: Simulation,
        op_type: str,
        tensors: tuple,
        kernel: Any,
        block_dim: int,
        tiling: RawTilingData,
        workspace_size: int,
        record: dict,
    ) -> None:
        self._sim = sim
        self.op_type = op_type
        self._tensors = tensors
        self._kernel = kernel
        self._block_dim = block_dim
        self._tiling = tiling
        self.workspace_size = workspace_size
        self._record = record
        self.used = False

    def __repr__(self) -> str:
        return f"aclOpExecutor({self.op_type}, workspace {self.workspace_size} B{', used' if self.used else ''})"


_FIELDS_ZH = (  # how a field's leading words read in Chinese (API names stay as they are)
    ("executor", "执行器"),
    ("workspace sizes", "工作空间大小列表"),
    ("workspace size", "工作空间大小"),
    ("workspace", "工作空间地址"),
    ("tiling key", "TilingKey"),
    ("tiling", "TilingData"),
    ("kernel", "核函数"),
    ("data types", "数据类型列表"),
    ("inputs", "输入"),
    ("outputs", "输出"),
    ("input", "输入"),
    ("output", "输出"),
)


def _zh(field: str) -> str:
    """``field`` in Chinese: its leading words translated, an index and an API name in parentheses kept."""
    for en, zh in _FIELDS_ZH:
        if field == en or field.startswith(en + " "):
            rest = field[len(en) :].replace(" shape", " 的形状").replace(" address", " 的地址")
            return zh + rest.replace(" dtype", " 的数据类型")
    return field


def _invalid(field: str, limit: str, value, limit_zh: str) -> AclError:
    return AclError(
        C.ACLNN_ERR_PARAM_INVALID, f"{field} {limit}, got {value!r}", f"{_zh(field)} {limit_zh}，实际为 {value!r}"
    )


def _null(field: str, what: str, what_zh: str) -> AclError:
    return AclError(C.ACLNN_ERR_PARAM_NULLPTR, f"{field} is a null {what}", f"{_zh(field)} 是空的{what_zh}")


class Nn:
    """``acl.nn``: the two phases of an aclnn operator call."""

    def __init__(self, sim: Simulation) -> None:
        self._sim = sim

    def get_workspace_size(
        self,
        op_type: str,
        inputs: tuple,
        outputs: tuple,
        output_shapes: Any,
        kernel: Any,
        block_dim: int,
        tiling: Any,
        workspace_sizes: tuple,
        data_types: tuple = (),
    ) -> tuple[int, Any, int]:
        """``aclnn<op_type>GetWorkspaceSize``: ``(workspace_size, executor, ret)``. ``data_types``: per tensor
        (inputs, then outputs) the dtypes the operator definition accepts (its ``DataType({...})``); empty: any."""
        sim = self._sim
        name = f"aclnn{op_type}GetWorkspaceSize" if isinstance(op_type, str) and _OP_NAME.match(op_type) else "aclnnOp"
        size, executor = 0, None
        with sim.api(name, sim.profile.host.api_call_us) as call:
            sim.require_device()
            if name == "aclnnOp":
                raise _invalid(
                    "op_type", "is an operator name such as AddCustom", op_type, "必须是算子名，如 AddCustom"
                )
            tensors = self._tensors(inputs, outputs)
            self._dtypes(op_type, len(inputs), tensors, data_types)
            self._shapes(outputs, output_shapes)
            if tiling is None:
                raise _invalid("TilingFunc", "returns GRAPH_SUCCESS", "GRAPH_FAILED", "必须返回 GRAPH_SUCCESS")
            limit = sim.profile.limits.max_block_dim
            if isinstance(block_dim, bool) or not isinstance(block_dim, int) or not 1 <= block_dim <= limit:
                raise _invalid("block_dim (SetBlockDim)", f"is 1..{limit}", block_dim, f"必须在 1..{limit} 之间")
            keys = getattr(kernel, "tiling_keys", None)
            if not hasattr(kernel, "prepare") or keys is None:
                raise _invalid("kernel", "is an @asc.jit kernel", type(kernel).__name__, "必须是 @asc.jit 核函数")
            if not isinstance(tiling, RawTilingData) or tiling.struct() is None:
                raise _invalid("tiling (GetRawTilingData)", "holds a saved TilingData", tiling, "必须存有 TilingData")
            key = tiling.tiling_key
            if not 0 <= key <= MAX_TILING_KEY or key not in (keys or (0,)):
                shown = ", ".join(map(str, keys or (0,)))
                raise _invalid(
                    "tiling key (SetTilingKey)",
                    f"is one of {kernel.name}'s keys ({shown})",
                    key,
                    f"必须是 {kernel.name} 的 TilingKey 之一（{shown}）",
                )
            if not isinstance(workspace_sizes, tuple | list) or len(workspace_sizes) > 16:
                raise _invalid(
                    "workspace sizes (GetWorkspaceSizes)", "are 0..16 sizes", workspace_sizes, "必须是 0..16 个大小"
                )
            for i, w in enumerate(workspace_sizes):
                if isinstance(w, bool) or not isinstance(w, int) or not 0 <= w <= MAX_WORKSPACE_BYTES:
                    raise _invalid(
                        f"workspace size {i}",
                        f"is 0..{MAX_WORKSPACE_BYTES} bytes",
                        w,
                        f"必须在 0..{MAX_WORKSPACE_BYTES} 字节之间",
                    )
            size = sum(workspace_sizes)
            record = {
                "op": op_type,
                "output_shapes": [list(t.shape) for t in outputs],
                "block_dim": block_dim,
                "tiling_key": key,
                "workspace_size": size,
                "launched": False,
                "workspace_given": 0,
            }
            sim.extra.setdefault("aclnn", []).append(record)
            executor = AclOpExecutor(sim, op_type, tensors, kernel, block_dim, tiling, size, record)
        return (size, executor, call.ret) if call.ret == C.ACL_SUCCESS else (0, None, call.ret)

    def launch(self, workspace: Any, workspace_size: int, executor: Any, stream: Any) -> int:
        """``aclnn<op>(workspace, workspaceSize, executor, stream)``: queue the executor's kernel on ``stream``."""
        sim = self._sim
        # one GetWorkspaceSize made for this run (an object made without it, or for another run, is not)
        known = isinstance(executor, AclOpExecutor) and vars(executor).get("_sim") is sim
        with sim.api(f"aclnn{executor.op_type}" if known else "aclnnOp", sim.profile.host.launch_call_us) as call:
            sim.require_device()
            if executor is None:
                raise _null(
                    "executor",
                    "aclOpExecutor: call aclnnXxxGetWorkspaceSize first",
                    "aclOpExecutor：请先调用 aclnnXxxGetWorkspaceSize",
                )
            if not known:
                raise _invalid(
                    "executor",
                    "is an aclOpExecutor of this run's GetWorkspaceSize",
                    type(executor).__name__,
                    "必须是本次运行的 GetWorkspaceSize 返回的 aclOpExecutor",
                )
            if executor.used:
                op = f"aclnn{executor.op_type}"
                raise AclError(
                    C.ACLNN_ERR_PARAM_INVALID,
                    f"executor runs once: {op} already ran it and released it (call {op}GetWorkspaceSize again)",
                    f"执行器只能执行一次：{op} 已执行并释放了它（请重新调用 {op}GetWorkspaceSize）",
                )
            need = executor.workspace_size
            if isinstance(workspace_size, bool) or not isinstance(workspace_size, int) or workspace_size < need:
                raise _invalid(
                    "workspaceSize",
                    f">= {need} B (what GetWorkspaceSize returned)",
                    workspace_size,
                    f"必须 >= {need} B（GetWorkspaceSize 的返回值）",
                )
            if workspace_size and not workspace:
                raise _null(
                    "workspace", f"device address for {workspace_size} B", f"设备地址（需要 {workspace_size} B）"
                )
            if workspace_size:
                if not isinstance(workspace, int) or sim.devmem.space.find(workspace) is None:
                    raise _invalid(
                        "workspace",
                        "is a device address from acl.rt.malloc",
                        workspace,
                        "必须是 acl.rt.malloc 得到的设备地址",
                    )
                sim.devmem.space.resolve(workspace, workspace_size, f"aclnn{executor.op_type} workspace")
            s = sim.stream(stream, f"aclnn{executor.op_type}")
            executor.used = True
            args = [GlobalAddress(t.addr, t.dtype) for t in executor._tensors]
            workspace_arg = GlobalAddress(workspace, uint8) if workspace_size else None  # nullptr: no workspace
            args += [workspace_arg, executor._tiling]
            kernel = executor._kernel.prepare(sim, executor._block_dim, tuple(args))
            sim.enqueue_kernel(kernel, s, call)
            executor._record.update(launched=True, workspace_given=workspace_size)
        return call.ret

    def _tensors(self, inputs, outputs) -> tuple:
        """Every tensor present, an AclTensor, and held by its device buffer."""
        for group, given in (("input", inputs), ("output", outputs)):
            if not isinstance(given, tuple | list) or not 1 <= len(given) <= MAX_TENSORS:
                raise _invalid(
                    f"{group}s", f"are 1..{MAX_TENSORS} aclTensors", given, f"必须是 1..{MAX_TENSORS} 个 aclTensor"
                )
            for i, t in enumerate(given):
                if t is None:
                    raise _null(f"{group} {i}", "aclTensor", " aclTensor")
                if not isinstance(t, AclTensor):
                    raise _invalid(f"{group} {i}", "is an aclTensor", type(t).__name__, "必须是 aclTensor")
                alloc = self._sim.devmem.space.find(t.addr)
                if alloc is None:
                    raise _invalid(
                        f"{group} {i} address",
                        "is device memory from acl.rt.malloc",
                        hex(t.addr),
                        "必须是 acl.rt.malloc 得到的设备内存",
                    )
                try:
                    self._sim.devmem.space.resolve(t.addr, t.nbytes, f"aclTensor {group}{i} ({t.nbytes} B)")
                except AclError as exc:  # the buffer does not hold the tensor: an invalid argument, in aclnn's code
                    raise AclError(C.ACLNN_ERR_PARAM_INVALID, exc.detail, exc.detail_zh) from None
        return (*inputs, *outputs)

    @staticmethod
    def _dtypes(op_type: str, n_inputs: int, tensors: tuple, data_types) -> None:
        """Each tensor's dtype is one its parameter of the operator definition accepts (aclnn's operators refuse
        another with ACLNN_ERR_PARAM_INVALID: "数据类型不在支持的范围之内")."""
        if not isinstance(data_types, tuple | list) or len(data_types) not in (0, len(tensors)):
            raise _invalid(
                "data types",
                f"are one list per tensor ({len(tensors)})",
                data_types,
                f"必须每个张量一个列表（{len(tensors)} 个）",
            )
        for i, (t, types) in enumerate(zip(tensors, data_types, strict=False)):
            if not isinstance(types, tuple | list) or not all(isinstance(d, DType) for d in types):
                raise _invalid(f"data types {i}", "are dtypes", types, "必须是数据类型")
            if t.dtype not in types:
                field = f"input {i}" if i < n_inputs else f"output {i - n_inputs}"
                shown = ", ".join(d.name for d in types)
                raise _invalid(
                    f"{field} dtype",
                    f"is one of {op_type}'s data types ({shown})",
                    t.dtype.name,
                    f"必须是 {op_type} 支持的数据类型之一（{shown}）",
                )

    @staticmethod
    def _shapes(outputs, output_shapes) -> None:
        """Each output's shape is the one InferShape derived."""
        if output_shapes is None:
            raise _invalid("InferShape", "returns GRAPH_SUCCESS", "GRAPH_FAILED", "必须返回 GRAPH_SUCCESS")
        if not isinstance(output_shapes, tuple | list) or len(output_shapes) != len(outputs):
            raise _invalid(
                "InferShape's outputShapes",
                f"are {len(outputs)} shapes",
                output_shapes,
                f"必须是 {len(outputs)} 个形状",
            )
        for i, (t, shape) in enumerate(zip(outputs, output_shapes, strict=True)):
            try:
                want = check_dims(f"InferShape output {i}", shape)
            except ShapeError as exc:
                raise AclError(C.ACLNN_ERR_PARAM_INVALID, str(exc), exc.message_zh) from None
            if t.shape != want:
                raise _invalid(
                    f"output {i} shape",
                    f"is what InferShape derived, {want}",
                    t.shape,
                    f"必须是 InferShape 推导出的 {want}",
                )
