"""TilingData as plain data (struct name, field names, types and values) and back, validated.

What a recorded program's launch carries (:mod:`lessons.recording`), and what a check reads of a launch's
tiling. Rebuilding a struct from a record declares a TilingData subclass with the recorded name and fields:
every name must be a C++ identifier, every type one of CANN's field types, every value in its type's range
and the whole within the tiling capacity, exactly as for a struct a program declares (a record names no
module and no code). A bad record raises :class:`~engine.host.tiling_data.TilingDataError`.
"""

from __future__ import annotations

from .tiling_data import (
    FIELD_TYPES,
    MAX_TILING_DATA_BYTES,
    MAX_TILING_KEY,
    Field,
    RawTilingData,
    StructField,
    TilingData,
    TilingDataError,
    check_name,
)

MAX_DEPTH = 4  # structs inside structs a record may nest


def struct_record(struct: TilingData) -> dict:
    """``{"n": name, "f": [[field, type, value], ...]}``; a struct field's type is "struct", its value a record."""
    fields = []
    for name, f in type(struct).fields.items():
        value = struct._values[name]
        if isinstance(f, Field):
            fields.append([name, f.dtype.name, value])
        else:
            fields.append([name, "struct", struct_record(value)])
    return {"n": type(struct).__name__, "f": fields}


def raw_record(raw: RawTilingData) -> dict:
    """A raw tiling buffer: its tiling key and the struct it holds (None when nothing was saved into it)."""
    struct = raw.struct()
    return {"key": raw.tiling_key, "s": None if struct is None else struct_record(struct)}


def struct_from_record(doc, depth: int = 0) -> TilingData:
    """The struct a :func:`struct_record` describes, or TilingDataError."""
    if depth > MAX_DEPTH:
        raise TilingDataError(
            "TilingData record", f"nests structs at most {MAX_DEPTH} deep", depth, f"结构体嵌套最多 {MAX_DEPTH} 层"
        )
    if not isinstance(doc, dict) or set(doc) != {"n", "f"} or not isinstance(doc["f"], list):
        raise TilingDataError(
            "TilingData record",
            'is {"n": name, "f": [[field, type, value], ...]}',
            type(doc).__name__,
            '必须是 {"n": 名称, "f": [[字段, 类型, 值], ...]}',
        )
    name = check_name("TilingData name", doc["n"])
    if len(doc["f"]) > MAX_TILING_DATA_BYTES:
        raise TilingDataError(
            name, f"has at most {MAX_TILING_DATA_BYTES} fields", len(doc["f"]), f"最多 {MAX_TILING_DATA_BYTES} 个字段"
        )
    attrs, values = {}, {}
    for entry in doc["f"]:
        if not isinstance(entry, list) or len(entry) != 3:
            raise TilingDataError(f"{name} field", "is [name, type, value]", entry, "必须是 [名称, 类型, 值]")
        field, kind, value = entry
        check_name(f"{name} field", field)
        if field in attrs:
            raise TilingDataError(f"{name}.{field}", "is declared once", "twice", "只能声明一次")
        if kind == "struct":
            inner = struct_from_record(value, depth + 1)
            attrs[field] = StructField(type(inner))
            values[field] = inner
        elif isinstance(kind, str) and kind in FIELD_TYPES:
            attrs[field] = Field(FIELD_TYPES[kind])
            values[field] = value
        else:
            allowed = ", ".join((*FIELD_TYPES, "struct"))
            raise TilingDataError(
                f"{name}.{field}", f"has one of the types {allowed}", kind, f"的类型必须是 {allowed} 之一"
            )
    cls = type(name, (TilingData,), attrs)  # declares it: names, types and the size are checked there
    return cls(**values)


def raw_from_record(doc) -> RawTilingData:
    """The raw tiling buffer a :func:`raw_record` describes, or TilingDataError."""
    if not isinstance(doc, dict) or set(doc) != {"key", "s"}:
        raise TilingDataError(
            "raw tiling record",
            'is {"key": tiling key, "s": struct record}',
            type(doc).__name__,
            '必须是 {"key": tiling key, "s": 结构体记录}',
        )
    key = doc["key"]
    if isinstance(key, bool) or not isinstance(key, int) or not 0 <= key <= MAX_TILING_KEY:
        raise TilingDataError(
            "tiling_key", f"is an integer 0..{MAX_TILING_KEY}", key, f"必须是 0..{MAX_TILING_KEY} 的整数"
        )
    raw = RawTilingData()
    raw.tiling_key = key
    if doc["s"] is not None:
        struct_from_record(doc["s"]).save_to_buffer(raw)
    return raw
