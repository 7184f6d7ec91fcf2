"""TilingData: the struct a host tiling function fills, that travels with the launch, and that the kernel reads.

In Ascend C the host computes the tiling, never the kernel: the operator's tiling function fills a
TilingData struct, serialises it into the launch's tiling buffer and sets the block count and the
tiling key; the struct is passed to the kernel as an argument, stored in GM, and the kernel copies it
to its stack with ``GET_TILING_DATA`` (sources: the Ascend C API reference's "TilingData结构定义" page;
the best-practice page "限制TilingData结构大小"; ``SetBlockDim`` and ``SetTilingKey`` of TilingContext).
Here, line for line::

    C++ (CANN)                                             Python (AscendSim)
    BEGIN_TILING_DATA_DEF(ScaleTiling)                     class ScaleTiling(TilingData):
      TILING_DATA_FIELD_DEF(uint32_t, blockLength);            block_length = Field(asc.uint32)
      TILING_DATA_FIELD_DEF_STRUCT(Inner, inner);              inner = StructField(Inner)
    END_TILING_DATA_DEF;
    ScaleTiling tiling;                                    tiling = ScaleTiling()
    tiling.set_blockLength(n);                             tiling.set_block_length(n)   (or tiling.block_length = n)
    context->SetBlockDim(8);                               context.set_block_dim(8)
    context->SetTilingKey(1);                              context.set_tiling_key(1)
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), ...);
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
                                                           tiling.save_to_buffer(context.get_raw_tiling_data())
    kernel<<<blockDim, nullptr, stream>>>(x, z, tiling)    acl.rt.launch_kernel(kernel, context.get_block_dim(),
                                                               stream, x, z, context.get_raw_tiling_data())
    GET_TILING_DATA(tilingData, tiling);                   tiling_data = asc.get_tiling_data(tiling)
    if (TILING_KEY_IS(1)) { ... }                          if asc.tiling_key_is(1): ...

pyasc (Huawei's Python Ascend C) declares kernel structs the same way (``class X(Struct)``, fields
``Field(dtype=..., default=0)`` and ``StructField``); it has no ``GET_TILING_DATA`` of its own, so the
reader is named after the C++ macro (:mod:`engine.aicore.tiling_read`).

The layout is C's: each field at an offset that is a multiple of its size (the framework pads unaligned
fields, "CheckAlignAndGenPlaceHolder"), the whole struct padded to 8 bytes ("TilingData整体结构要求8字节补齐").
Field types are CANN's: int8..uint64 and float (``asc.float32``). A struct may hold at most
``MAX_TILING_DATA_BYTES``: the capacity CANN's graph engine gives an operator's tiling data when it
declares none (hicann/ge, base/common/op_tiling/op_tiling_rt2.cc: ``kMaxTilingDataSize = 16 KiB``).
Bad input raises :class:`TilingDataError` naming the field, the limit and the value.
"""

from __future__ import annotations

import re
from types import MappingProxyType

import numpy as np

from ..aicore.tensor import DType, float32, int8, int16, int32, int64, uint8, uint16, uint32, uint64

MAX_TILING_DATA_BYTES = 16 * 1024  # hicann/ge op_tiling_rt2.cc kMaxTilingDataSize: the default tiling capacity
MAX_TILING_KEY = (1 << 64) - 1  # SetTilingKey takes a uint64_t
FIELD_TYPES: MappingProxyType = MappingProxyType(
    {d.name: d for d in (int8, uint8, int16, uint16, int32, uint32, int64, uint64, float32)}
)
C_TYPES: MappingProxyType = MappingProxyType(
    {
        "int8": "int8_t",
        "uint8": "uint8_t",
        "int16": "int16_t",
        "uint16": "uint16_t",
        "int32": "int32_t",
        "uint32": "uint32_t",
        "int64": "int64_t",
        "uint64": "uint64_t",
        "float32": "float",
    }
)
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")


class TilingDataError(ValueError):
    """A TilingData struct, field or value is not allowed: ``field``, ``limit`` and ``value`` say which and how;
    ``message_zh`` says the same in Chinese."""

    def __init__(self, field: str, limit: str, value, limit_zh: str = "") -> None:
        super().__init__(f"{field} {limit}, got {value!r}")
        self.field = field
        self.limit = limit
        self.value = value
        self.message_zh = f"{field} {limit_zh or limit}，实际为 {value!r}"


class Field:
    """``TILING_DATA_FIELD_DEF(type, name)``: a field of one of CANN's scalar types, with a default."""

    def __init__(self, dtype: DType, default: int | float = 0) -> None:
        self.dtype = dtype
        self.default = default
        self.name = ""

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        return self if obj is None else obj._values[self.name]

    def __set__(self, obj, value) -> None:
        obj._set(self.name, value)

    def check(self, where: str, value):
        """``value`` as this field stores it (a Python int or a float32-exact float), or TilingDataError."""
        return check_value(where, self.dtype, value)


class StructField:
    """``TILING_DATA_FIELD_DEF_STRUCT(type, name)``: a field that is itself a TilingData struct."""

    def __init__(self, struct: type) -> None:
        if not (isinstance(struct, type) and issubclass(struct, TilingData) and struct is not TilingData):
            raise TilingDataError("StructField", "takes a TilingData subclass", struct, "需要一个 TilingData 子类")
        self.struct = struct
        self.name = ""

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        return self if obj is None else obj._values[self.name]

    def __set__(self, obj, value) -> None:
        obj._set(self.name, value)

    def check(self, where: str, value):
        if type(value) is not self.struct:
            raise TilingDataError(where, f"holds a {self.struct.__name__}", value, f"存放 {self.struct.__name__}")
        return value.copy()


def check_value(where: str, dtype: DType, value):
    """``value`` stored in a field of ``dtype``, or TilingDataError naming ``where``, the range and the value."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.integer | np.floating):
        raise TilingDataError(
            where, f"is a {dtype.name} field: it takes a number", value, f"是 {dtype.name} 字段：只接受数值"
        )
    if dtype is float32:
        out = float(np.float32(value))
        if not np.isfinite(out):
            limit = "is a float32 field: a finite number of magnitude at most 3.4e38"
            raise TilingDataError(where, limit, value, "是 float32 字段：绝对值不超过 3.4e38 的有限数")
        return out
    if isinstance(value, float | np.floating) and not float(value).is_integer():
        raise TilingDataError(
            where, f"is a {dtype.name} field: it takes an integer", value, f"是 {dtype.name} 字段：只接受整数"
        )
    info = np.iinfo(dtype.np)
    number = int(value)
    if not info.min <= number <= info.max:
        limit = f"is a {dtype.name} field: {info.min}..{info.max}"
        raise TilingDataError(where, limit, number, f"是 {dtype.name} 字段：取值范围 {info.min}..{info.max}")
    return number


_RESERVED = frozenset(("copy", "fields", "get_data_size", "save_to_buffer", "to_bytes", "from_bytes", "numpy_dtype"))


def check_name(where: str, name) -> str:
    """A struct or field name: a C++ identifier that shadows none of TilingData's own names."""
    if not isinstance(name, str) or not _NAME.match(name) or name in _RESERVED or name.startswith(("set_", "get_")):
        raise TilingDataError(
            where,
            "must be a C++ identifier of 1-64 letters, digits and _ (not starting with _, set_ or get_)",
            name,
            "必须是 1-64 个字母、数字或 _ 组成的 C++ 标识符（不以 _、set_ 或 get_ 开头）",
        )
    return name


class TilingData:
    """``BEGIN_TILING_DATA_DEF(Name)``: subclass it and declare fields (:class:`Field`, :class:`StructField`)."""

    fields: MappingProxyType = MappingProxyType({})  # name -> Field | StructField, in declaration order
    numpy_dtype: np.dtype = np.dtype([])

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        check_name("TilingData name", cls.__name__)
        found = {n: f for n, f in vars(cls).items() if isinstance(f, Field | StructField)}
        if not found:
            raise TilingDataError(cls.__name__, "needs at least one field", 0, "至少需要一个字段")
        for name, f in found.items():
            check_name(f"{cls.__name__} field", name)
            if isinstance(f, Field):
                if not isinstance(f.dtype, DType) or FIELD_TYPES.get(f.dtype.name) != f.dtype:
                    allowed = ", ".join(f"asc.{n}" for n in FIELD_TYPES)
                    raise TilingDataError(
                        f"{cls.__name__}.{name}",
                        f"has one of the types {allowed}",
                        f.dtype,
                        f"的类型必须是 {allowed} 之一",
                    )
                f.default = f.check(f"{cls.__name__}.{name} (its default)", f.default)
        cls.fields = MappingProxyType(found)
        cls.numpy_dtype = _layout(cls)
        if cls.numpy_dtype.itemsize > MAX_TILING_DATA_BYTES:
            raise TilingDataError(
                cls.__name__,
                f"holds at most {MAX_TILING_DATA_BYTES} B (CANN's default tiling data capacity)",
                cls.numpy_dtype.itemsize,
                f"最多 {MAX_TILING_DATA_BYTES} B（CANN 默认的 tiling data 容量）",
            )

    def __init__(self, **values) -> None:
        if type(self) is TilingData:
            raise TilingDataError(
                "TilingData",
                "is a base class: declare a subclass with fields",
                "TilingData()",
                "是基类：请声明带字段的子类",
            )
        object.__setattr__(self, "_values", {})
        for name, f in self.fields.items():
            self._values[name] = f.default if isinstance(f, Field) else f.struct()
        for name, value in values.items():
            self._set(name, value)

    # -- fields ------------------------------------------------------------------------------------
    def _set(self, name: str, value) -> None:
        f = self.fields.get(name)
        if f is None:
            known = ", ".join(self.fields)
            raise TilingDataError(
                f"{type(self).__name__}.{name}",
                f"is not a field (the fields: {known})",
                value,
                f"不是字段（字段有：{known}）",
            )
        self._values[name] = f.check(f"{type(self).__name__}.{name}", value)

    def __setattr__(self, name: str, value) -> None:
        self._set(name, value)  # a field (through its descriptor's rule) or an error naming the unknown field

    def __getattr__(self, name: str):
        """``set_<field>(v)`` and ``get_<field>()``, as CANN generates them; anything else is an unknown field."""
        if name.startswith("_"):
            raise AttributeError(name)
        for prefix in ("set_", "get_"):
            field = name[len(prefix) :]
            if name.startswith(prefix) and field in type(self).fields:
                if prefix == "set_":
                    return lambda value: self._set(field, value)
                return lambda: self._values[field]
        known = ", ".join(type(self).fields)
        raise TilingDataError(
            f"{type(self).__name__}.{name}",
            f"is not a field (the fields: {known})",
            "(read)",
            f"不是字段（字段有：{known}）",
        )

    def copy(self) -> TilingData:
        out = type(self).__new__(type(self))
        object.__setattr__(
            out, "_values", {k: v.copy() if isinstance(v, TilingData) else v for k, v in self._values.items()}
        )
        return out

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other._values == self._values

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(sorted(self._values.items(), key=lambda kv: kv[0]))))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self._values.items())})"

    # -- bytes -------------------------------------------------------------------------------------
    def get_data_size(self) -> int:
        """``GetDataSize()``: bytes of the serialised struct (its C layout, padded to 8)."""
        return type(self).numpy_dtype.itemsize

    def to_bytes(self) -> bytes:
        record = np.zeros(1, type(self).numpy_dtype)
        _fill(record[0], self)
        return record.tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> TilingData:
        if len(data) != cls.numpy_dtype.itemsize:
            raise TilingDataError(
                cls.__name__, f"is {cls.numpy_dtype.itemsize} B long", len(data), f"长 {cls.numpy_dtype.itemsize} B"
            )
        return _read(cls, np.frombuffer(data, cls.numpy_dtype)[0])

    def save_to_buffer(self, raw: RawTilingData) -> None:
        """``SaveToBuffer`` + ``SetDataSize``: serialise the struct into the context's raw tiling buffer."""
        if not isinstance(raw, RawTilingData):
            raise TilingDataError(
                "save_to_buffer", "takes context.get_raw_tiling_data()", raw, "需要 context.get_raw_tiling_data()"
            )
        size = self.get_data_size()
        if size > raw.get_capacity():
            raise TilingDataError(
                type(self).__name__,
                f"fits the raw tiling buffer's {raw.get_capacity()} B",
                size,
                f"须放进 {raw.get_capacity()} B 的原始 tiling 缓冲区",
            )
        raw._save(self.copy())


def _layout(cls: type) -> np.dtype:
    """The struct's C layout: every field at a multiple of its own alignment, the whole padded to 8 bytes."""
    names, formats, offsets = [], [], []
    at = 0
    for name, f in cls.fields.items():
        sub = np.dtype(f.dtype.np) if isinstance(f, Field) else f.struct.numpy_dtype
        align = sub.itemsize if isinstance(f, Field) else 8
        at = -(-at // align) * align
        names.append(name)
        formats.append(sub)
        offsets.append(at)
        at += sub.itemsize
    size = max(8, -(-at // 8) * 8)
    return np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": size})


def _fill(record, struct: TilingData) -> None:
    for name, f in type(struct).fields.items():
        if isinstance(f, Field):
            record[name] = struct._values[name]
        else:
            _fill(record[name], struct._values[name])


def _read(cls: type, record) -> TilingData:
    out = cls.__new__(cls)
    values = {}
    for name, f in cls.fields.items():
        if isinstance(f, Field):
            values[name] = float(record[name]) if f.dtype is float32 else int(record[name])
        else:
            values[name] = _read(f.struct, record[name])
    object.__setattr__(out, "_values", values)
    return out


class RawTilingData:
    """``context->GetRawTilingData()``: the launch's tiling buffer (what ``save_to_buffer`` wrote, its size,
    and the tiling key the context set), passed to ``launch_kernel`` as the kernel's tiling argument."""

    def __init__(self, capacity: int = MAX_TILING_DATA_BYTES) -> None:
        self._capacity = capacity
        self._struct: TilingData | None = None
        self._data = b""
        self.tiling_key = 0

    def _save(self, struct: TilingData) -> None:
        self._struct = struct
        self._data = struct.to_bytes()

    def get_capacity(self) -> int:
        return self._capacity

    def get_data_size(self) -> int:
        return len(self._data)

    def get_data(self) -> bytes:
        return self._data

    def struct(self) -> TilingData | None:
        """What the bytes hold, read back from them (None before ``save_to_buffer``)."""
        return None if self._struct is None else type(self._struct).from_bytes(self._data)

    def __repr__(self) -> str:
        name = type(self._struct).__name__ if self._struct is not None else "empty"
        return f"RawTilingData({name}, {len(self._data)} B, tiling key {self.tiling_key})"


class TilingContext:
    """The part of ``gert::TilingContext`` a tiling function writes: the block count, the tiling key and the
    raw tiling buffer (a new context per launch, as the framework gives each call of the tiling function)."""

    def __init__(self) -> None:
        self._block_dim = 0
        self._raw = RawTilingData()

    def set_block_dim(self, block_dim: int) -> None:
        """``SetBlockDim``: how many blocks the kernel is launched on (``launch_kernel`` checks the limit)."""
        if isinstance(block_dim, bool) or not isinstance(block_dim, int | np.integer) or block_dim < 1:
            raise TilingDataError("block_dim", "is an integer >= 1", block_dim, "必须是 >= 1 的整数")
        self._block_dim = int(block_dim)

    def get_block_dim(self) -> int:
        return self._block_dim

    def set_tiling_key(self, key: int) -> None:
        """``SetTilingKey``: which of the kernel's variants runs (``asc.tiling_key_is``)."""
        if isinstance(key, bool) or not isinstance(key, int | np.integer) or not 0 <= key <= MAX_TILING_KEY:
            raise TilingDataError(
                "tiling_key",
                f"is an integer 0..{MAX_TILING_KEY} (uint64_t)",
                key,
                f"必须是 0..{MAX_TILING_KEY} 的整数（uint64_t）",
            )
        self._raw.tiling_key = int(key)

    def get_tiling_key(self) -> int:
        return self._raw.tiling_key

    def get_raw_tiling_data(self) -> RawTilingData:
        return self._raw
