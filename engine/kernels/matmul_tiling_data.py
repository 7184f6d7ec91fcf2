"""The tiled matmul with its TCubeTiling carried as TilingData, as CANN's matmul operators carry it.

A matmul operator's TilingData holds the Matmul API's TCubeTiling as a struct field
(``TILING_DATA_FIELD_DEF_STRUCT(TCubeTiling, cubeTilingData)``) and the kernel reads it with
``GET_TILING_DATA`` before it sets up the Matmul object (the Ascend C API reference: the TilingData
structure definition and TCubeTiling pages). :func:`tiling_context` is the host's side (the block count and
the raw tiling buffer of a tiling); :data:`matmul_tiling_data` reads it and runs :func:`.matmul.matmul_tiled`
with it, its fast path too (the same program, recorded faster). Lesson 9's host tiler launches it.
"""

from __future__ import annotations

from dataclasses import fields

from engine import TilingContext, asc
from engine.aicore.matmul_tiling import TCubeTiling
from engine.kernels.matmul import matmul_tiled

CUBE_FIELDS = tuple(f.name for f in fields(TCubeTiling))
# TILING_DATA_FIELD_DEF(int32_t, usedCoreNum); ... : TCubeTiling's fields, as CANN's struct names them
CubeTilingData = type("TCubeTiling", (asc.TilingData,), {name: asc.Field(asc.int32) for name in CUBE_FIELDS})


class MatmulTilingData(asc.TilingData):  # BEGIN_TILING_DATA_DEF(MatmulTilingData)
    cube_tiling_data = asc.StructField(CubeTilingData)  # TILING_DATA_FIELD_DEF_STRUCT(TCubeTiling, cubeTilingData)


def tiling_context(tiling: TCubeTiling) -> TilingContext:
    """The host's side of the launch: the block count and the raw tiling buffer holding ``tiling``."""
    context = TilingContext()
    data = MatmulTilingData()
    data.cube_tiling_data = CubeTilingData(**{name: getattr(tiling, name) for name in CUBE_FIELDS})
    context.set_block_dim(tiling.usedCoreNum)
    data.save_to_buffer(context.get_raw_tiling_data())
    return context


def _read(tiling: asc.TilingAddress) -> TCubeTiling:
    """GET_TILING_DATA, then the Matmul API's TCubeTiling from its struct field."""
    t = asc.get_tiling_data(tiling).cube_tiling_data
    return TCubeTiling(**{name: getattr(t, name) for name in CUBE_FIELDS})


def stamped_matmul_tiling_data(a, b, c, tiling):
    """The fast path: GET_TILING_DATA, then :func:`.matmul.matmul_tiled`'s own fast path."""
    return matmul_tiled.fast_path(a, b, c, _read(tiling))


@asc.jit(kernel_type=asc.KernelType.AIC_ONLY, fast_path=stamped_matmul_tiling_data)
def matmul_tiling_data(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, tiling: asc.TilingAddress):
    """C = A @ B on the Cube cores, tiled as the host's TilingData says."""
    matmul_tiled.fn(a, b, c, _read(tiling))
