"""The parameter structs of the Cube's instructions, with pyasc's names, field order and defaults.

* :class:`Nd2NzParams` — ``DataCopy`` GM -> L1 with the ND -> NZ conversion (``AscendC::Nd2NzParams``);
* :class:`LoadData2DParams` — ``LoadData`` L1 -> L0A / L0B, whole fractals (``AscendC::LoadData2DParams``);
* :class:`LoadData3DParamsV2` — ``LoadData`` L1 -> L0A / L0B as a 1 x 1 image-to-column, the one call per
  operand CANN's high-performance matmul samples use on the 910B (``AscendC::LoadData3DParamsV2``);
* :class:`MmadParams` — ``Mmad`` (``AscendC::MmadParams``: m, n, k, unitFlag, cmatrixSource, cmatrixInitVal);
* :class:`FixpipeParamsV220`, :class:`FixpipeConfig`, :class:`CO2Layout`, :class:`QuantModes` — ``Fixpipe``
  L0C -> GM / L1 on the 910B (``AscendC::FixpipeParamsV220``, ``CFG_ROW_MAJOR`` / ``CFG_NZ``).

The structs only hold values; each instruction checks the fields it uses when it runs, naming the field,
its limit and the value (:func:`check_field`), and says which fields or values the simulator does not model.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from .operands import fail


class CO2Layout(IntEnum):
    """Where ``Fixpipe`` leaves its output's layout (pyasc ``CO2Layout``)."""

    NZ = 0  # as in L0C: NZ
    ROW_MAJOR = 1  # NZ2ND: ND
    COLUMN_MAJOR = 2  # NZ2DN (Ascend 950 only: not on the 910B)


class QuantModes(IntEnum):
    """``Fixpipe``'s conversion on the way out (pyasc ``QuantModes``); the simulator models the first two."""

    NoQuant = 0  # fp32 stays fp32
    F322F16 = 1  # fp32 -> fp16 (round to nearest even)
    F322BF16 = 2
    DEQF16 = 3
    VDEQF16 = 4
    QF322B8_PRE = 5
    VQF322B8_PRE = 6
    REQ8 = 7
    VREQ8 = 8


@dataclass(frozen=True)
class FixpipeConfig:
    """``FixpipeConfig``: ``cfg_row_major()`` (NZ2ND, the default) or ``cfg_nz()`` (the output stays NZ)."""

    layout: CO2Layout = CO2Layout.ROW_MAJOR

    @classmethod
    def cfg_row_major(cls) -> FixpipeConfig:
        return cls(CO2Layout.ROW_MAJOR)

    @classmethod
    def cfg_nz(cls) -> FixpipeConfig:
        return cls(CO2Layout.NZ)


@dataclass(frozen=True)
class Nd2NzParams:
    """``DataCopy(dst, src, Nd2NzParams)``: ``n_value`` rows of ``d_value`` elements, ``src_d_value`` apart in
    GM, become NZ in L1 with columns of fractals ``dst_nz_c0_stride`` x 32 B apart (units of C0_SIZE)."""

    nd_num: int
    n_value: int
    d_value: int
    src_nd_matrix_stride: int
    src_d_value: int
    dst_nz_c0_stride: int
    dst_nz_n_stride: int
    dst_nz_matrix_stride: int


@dataclass(frozen=True)
class LoadData2DParams:
    """``LoadData(dst, src, LoadData2DParams)``: ``repeat_times`` fractals of 512 B, the i-th from fractal
    ``start_index + i * src_stride`` of ``src``, to ``dst`` one after another (``dst_gap`` fractals between),
    each transposed when ``if_transpose``."""

    start_index: int = 0
    repeat_times: int = 1
    src_stride: int = 0
    sid: int = 0
    dst_gap: int = 0
    if_transpose: bool = False
    addr_mode: int = 0


@dataclass(frozen=True)
class LoadData3DParamsV2:
    """``LoadData(dst, src, LoadData3DParamsV2)``: L1 holds a feature map of ``l1_h x l1_w`` positions and
    ``channel_size`` channels (NC1HWC0: with ``l1_h`` 1 and a 1 x 1 filter, an NZ matrix of ``l1_w`` rows and
    ``channel_size`` columns); the window of ``m_extension`` rows from ``m_start_pt`` and ``k_extension``
    columns from ``k_start_pt`` lands in L0A as ZZ or in L0B as ZN."""

    pad_list: tuple = (0, 0, 0, 0)
    l1_h: int = 1
    l1_w: int = 1
    channel_size: int = 1
    k_extension: int = 1
    m_extension: int = 1
    k_start_pt: int = 0
    m_start_pt: int = 0
    stride_w: int = 1
    stride_h: int = 1
    filter_w: int = 1
    filter_h: int = 1
    dilation_filter_w: int = 1
    dilation_filter_h: int = 1
    en_transpose: bool = False
    pad_value: int = 0
    filter_size_w: bool = False
    filter_size_h: bool = False
    f_matrix_ctrl: bool = False


@dataclass(frozen=True)
class MmadParams:
    """``Mmad(dst, fm, filter, MmadParams)``: ``dst`` (L0C, NZ) = or += ``fm`` (L0A, ZZ, m x k) @ ``filter``
    (L0B, ZN, k x n); ``cmatrix_init_val`` True starts the sum (C = A @ B), False adds to what L0C holds."""

    m: int = 0
    n: int = 0
    k: int = 0
    unit_flag: int = 0
    cmatrix_source: bool = False
    cmatrix_init_val: bool = True


@dataclass(frozen=True)
class FixpipeParamsV220:
    """``Fixpipe(dst, src, FixpipeParamsV220, config)``: ``m_size x n_size`` of the NZ matrix in L0C, whose
    columns of fractals start ``src_stride`` rows apart (units of C0_SIZE: one 16-element row), to ``dst``:
    with NZ2ND rows ``dst_stride`` elements apart, with ``CFG_NZ`` columns of fractals ``dst_stride`` x 32 B
    apart; ``quant_pre`` converts (``F322F16``: to fp16), ``relu_en`` applies ReLU on the way."""

    n_size: int
    m_size: int
    src_stride: int
    dst_stride: int
    quant_pre: QuantModes = QuantModes.NoQuant
    deq_scalar: int = 0
    nd_num: int = 1
    src_nd_stride: int = 0
    dst_nd_stride: int = 0
    relu_en: bool = False
    unit_flag: int = 0
    is_channel_split: bool = False


def check_field(op: str, struct: str, field: str, value, lo: int, hi: int) -> int:
    """``value`` of ``struct.field`` as an int within [lo, hi], or the AI-core error naming all three."""
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        fail(
            f"{op}: {struct}.{field} must be an integer in [{lo}, {hi}], got {value!r}",
            f"{op}: {struct}.{field} 必须是 [{lo}, {hi}] 范围内的整数，实际为 {value!r}",
        )
    return value


def not_modelled(op: str, struct: str, field: str, value, modelled: tuple[str, str]) -> None:
    """The AI-core error for a field value the simulator does not model (the hardware may well accept it);
    ``modelled``: what it does model, in English and Chinese."""
    fail(
        f"{op}: {struct}.{field} = {value!r} is not modelled by the simulator (it models {modelled[0]})",
        f"{op}: 模拟器没有模拟 {struct}.{field} = {value!r}（只模拟{modelled[1]}）",
    )


def check_struct(op: str, params, cls) -> None:
    if not isinstance(params, cls):
        fail(
            f"{op}: the parameters must be an asc.{cls.__name__}, got {type(params).__name__}",
            f"{op}: 参数必须是 {cls.__name__}，实际为 {type(params).__name__}",
        )


__all__ = (
    "CO2Layout",
    "FixpipeConfig",
    "FixpipeParamsV220",
    "LoadData2DParams",
    "LoadData3DParamsV2",
    "MmadParams",
    "Nd2NzParams",
    "QuantModes",
    "check_field",
    "check_struct",
    "not_modelled",
)
