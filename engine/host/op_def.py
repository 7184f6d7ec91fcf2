"""An operator project's host side, as CANN's ``msOpGen`` project lays it out: the definition, InferShape, the
tiling function, and the aclnn call generated from them.

In CANN (the Ascend C operator development guide, the AddCustom sample in Ascend/samples, op_host/add_custom.cpp):

    C++ (CANN)                                              Python (AscendSim)
    class AddCustom : public OpDef {                        op = OpDef("AddCustom")
      this->Input("x").ParamType(REQUIRED)                  op.input("x").data_type([asc.half])
          .DataType({ge::DT_FLOAT16}).Format({FORMAT_ND});
      this->Output("z")...                                  op.output("z").data_type([asc.half])
      this->SetInferShape(InferShape);                      op.set_infer_shape(infer_shape)
      this->AICore().SetTiling(optiling::TilingFunc);       op.aicore().set_tiling(tiling_func)
      this->AICore().AddConfig("ascend910b"); }             op.aicore().add_config("ascend910b")
    ge::graphStatus InferShape(gert::InferShapeContext *c)  def infer_shape(context: InferShapeContext) -> int
      *c->GetOutputShape(0) = *c->GetInputShape(0);             context.get_output_shape(0).copy_from(...)
      return ge::GRAPH_SUCCESS;                                 return GRAPH_SUCCESS
    ge::graphStatus TilingFunc(gert::TilingContext *c)      def tiling_func(context: TilingContext) -> int
      c->GetInputShape(0)->GetOriginShape().GetShapeSize()      context.get_input_shape(0).get_shape_size()
      PlatformAscendC(c->GetPlatformInfo()).GetCoreNumAiv()     PlatformAscendC(context.get_platform_info())...
      c->SetBlockDim(n); c->SetTilingKey(k);                    context.set_block_dim(n); set_tiling_key(k)
      c->GetWorkspaceSizes(1)[0] = sys + usr;                   context.get_workspace_sizes(1)[0] = sys + usr
    aclnnAddCustomGetWorkspaceSize(x, y, z, &ws, &exe)      ws, exe, ret = aclnn_get_workspace_size(sim, op,
                                                                kernel, (x, y), (z,))
    aclnnAddCustom(workspace, ws, exe, stream)              ret = sim.acl.nn.launch(workspace, ws, exe, stream)

The build (msOpGen's CMake) compiles the kernel of the same name and generates ``aclnnAddCustom*``; here the
kernel is passed to :func:`aclnn_get_workspace_size`, which plays the generated first phase: it runs the
operator's InferShape and tiling function in the program, then hands the results to ``acl.nn`` as values.
Each tensor's dtype must be one its parameter's ``data_type`` accepts (checked by the first phase); InferDataType
is not modelled: the program declares the output with the dtype it accepts.
"""

from __future__ import annotations

from typing import Any

from .aclnn import AclTensor
from .gert_shape import Shape, ShapeError
from .tiling_data import TilingContext

GRAPH_SUCCESS = 0  # ge::GRAPH_SUCCESS (graph/ge_error_codes.h)
GRAPH_FAILED = 0xFFFFFFFF  # ge::GRAPH_FAILED (graph/ge_error_codes.h)
LIB_API_WORKSPACE_BYTES = 16 * 1024 * 1024  # the AddCustom sample's sysWorkspaceSize = 16777216 (Ascend/samples)


class InferShapeContext:
    """``gert::InferShapeContext``: the inputs' shapes to read, the outputs' shapes to write."""

    def __init__(self, input_shapes: tuple, output_num: int) -> None:
        self._inputs = tuple(Shape(s) for s in input_shapes)
        self._outputs = tuple(Shape() for _ in range(output_num))

    def get_input_shape(self, index: int) -> Shape:
        """``GetInputShape(index)`` (a copy: the inputs are read-only)."""
        out = Shape()
        out.copy_from(self._inputs[_index("GetInputShape index", index, len(self._inputs))])
        return out

    def get_output_shape(self, index: int) -> Shape:
        """``GetOutputShape(index)``: the shape InferShape writes."""
        return self._outputs[_index("GetOutputShape index", index, len(self._outputs))]

    def output_dims(self) -> tuple:
        return tuple(s.dims() for s in self._outputs)


def _index(field: str, index, count: int) -> int:
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
        raise ShapeError(field, f"is 0..{count - 1}", index, f"必须在 0..{count - 1} 之间")
    return index


class PlatformAscendC:
    """``platform_ascendc::PlatformAscendC(context->GetPlatformInfo())``: the chip's numbers a tiling reads."""

    def __init__(self, platform_info) -> None:
        if platform_info is None or not hasattr(platform_info, "vector_cores"):
            raise ShapeError(
                "PlatformAscendC",
                "takes context.get_platform_info()",
                platform_info,
                "的参数必须是 context.get_platform_info()",
            )
        self._profile = platform_info

    def get_core_num_aiv(self) -> int:
        """``GetCoreNumAiv``: the vector cores a vector kernel may use."""
        return self._profile.vector_cores

    def get_core_num_aic(self) -> int:
        """``GetCoreNumAic``: the Cube cores."""
        return self._profile.cube_cores

    def get_lib_api_work_space_size(self) -> int:
        """``GetLibApiWorkSpaceSize``: the system workspace the API library needs (ASSUMPTION: 16 MiB on every chip,
        the value the AddCustom sample writes)."""
        return LIB_API_WORKSPACE_BYTES


class OpParamDef:
    """``OpParamDef``: one input or output of an operator definition."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.types: tuple = ()

    def data_type(self, types: list) -> OpParamDef:
        """``DataType({...})``: the dtypes this parameter accepts."""
        self.types = tuple(types)
        return self


class OpAICoreDef:
    """``OpAICoreDef`` (``this->AICore()``): the tiling function and the chips it is built for."""

    def __init__(self) -> None:
        self.tiling = None
        self.configs: list[str] = []

    def set_tiling(self, fn) -> OpAICoreDef:
        self.tiling = fn
        return self

    def add_config(self, soc: str) -> OpAICoreDef:
        self.configs.append(str(soc))
        return self


class OpDef:
    """``OpDef``: an operator's name, inputs, outputs, InferShape and AI Core tiling."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.inputs: list[OpParamDef] = []
        self.outputs: list[OpParamDef] = []
        self.infer = None
        self._aicore = OpAICoreDef()

    def input(self, name: str) -> OpParamDef:
        self.inputs.append(OpParamDef(name))
        return self.inputs[-1]

    def output(self, name: str) -> OpParamDef:
        self.outputs.append(OpParamDef(name))
        return self.outputs[-1]

    def set_infer_shape(self, fn) -> OpDef:
        self.infer = fn
        return self

    def aicore(self) -> OpAICoreDef:
        return self._aicore


def aclnn_get_workspace_size(sim, op: OpDef, kernel: Any, inputs: tuple, outputs: tuple) -> tuple[int, Any, int]:
    """``aclnn<Op>GetWorkspaceSize(inputs..., outputs..., &workspaceSize, &executor)``: ``(size, executor, ret)``.

    Runs ``op``'s InferShape on the inputs' shapes and its tiling function on a TilingContext of the chip, then
    ``sim.acl.nn.get_workspace_size`` with what they produced. A failing InferShape is passed as no shapes
    and a failing tiling function as no tiling: the call then fails with ACLNN_ERR_PARAM_INVALID."""
    shapes = tuple(t.shape if isinstance(t, AclTensor) else (1,) for t in inputs)  # the rest: refused below
    infer = InferShapeContext(shapes, len(op.outputs))
    inferred = infer.output_dims() if op.infer is not None and op.infer(infer) == GRAPH_SUCCESS else None
    context = TilingContext(shapes, sim.profile)
    tiling = op.aicore().tiling
    tiled = tiling is not None and tiling(context) == GRAPH_SUCCESS
    sizes = tuple(context.get_workspace_sizes(context.get_workspace_num()))
    raw = context.get_raw_tiling_data() if tiled else None  # None: the tiling function failed
    types = tuple(p.types for p in (*op.inputs, *op.outputs))
    return sim.acl.nn.get_workspace_size(
        op.name, tuple(inputs), tuple(outputs), inferred, kernel, context.get_block_dim(), raw, sizes, types
    )
