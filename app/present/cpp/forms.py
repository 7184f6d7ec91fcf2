"""How a table template is filled: a call's arguments bound to the Python parameters, the conditions that pick
one form of a key (``when``), and the template's placeholders (``{param}``, ``{param:conv}``, ``{param.field}``
and the specials ``{recv}``, ``{T}``, ``{out}``, ``{name}``, ``{fields}``, ``{at}``, ``{args}``)."""

from __future__ import annotations

import ast
import inspect
from enum import Enum
from functools import cache
from typing import TYPE_CHECKING

from . import infer
from .table import NAMES, Entry, parameters

if TYPE_CHECKING:
    from .expr import Renderer


class Default:
    """A parameter the call left out: its Python default."""

    def __init__(self, value) -> None:
        self.value = value


@cache
def parameters_of(key: str) -> tuple[inspect.Parameter, ...]:
    return parameters(key)


def bind(call: ast.Call, params: tuple[inspect.Parameter, ...]) -> dict:
    """Parameter name -> the argument's node (a list for ``*args``; :class:`Default` for one left out)."""
    out: dict = {}
    positional = list(call.args)
    for p in params:
        if p.kind == p.VAR_POSITIONAL:
            out[p.name] = positional
            positional = []
        elif p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and positional:
            out[p.name] = positional.pop(0)
    for kw in call.keywords:
        if kw.arg is not None:
            out[kw.arg] = kw.value
    for p in params:
        if p.name not in out and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            out[p.name] = Default(None if p.default is p.empty else p.default)
    return out


def given(args: dict, name: str) -> bool:
    value = args.get(name)
    return isinstance(value, ast.expr) and not (isinstance(value, ast.Constant) and value.value is None)


def is_tile(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "tile"


def _kind(r: Renderer, node) -> str:
    info = r.info(infer.base_of(node)) if isinstance(node, ast.expr) else None
    if info is None or not info.kind:
        return "GlobalTensor" if is_tile(node) and len(node.args) == 5 else ""
    return info.kind


def _gm_tile(r: Renderer, node) -> bool:
    return is_tile(node) and _kind(r, node) == "GlobalTensor"


FORMS = {
    "count": lambda r, call, a: given(a, "count"),
    "size": lambda r, call, a: given(a, "size"),
    "shape": lambda r, call, a: given(a, "shape"),
    "buf": lambda r, call, a: given(a, "buf"),
    "nd2nz": lambda r, call, a: _calls(a.get("count"), "Nd2NzParams"),
    "config": lambda r, call, a: given(a, "config"),
    "from_gm_tile": lambda r, call, a: _gm_tile(r, a.get("src")),
    "to_gm_tile": lambda r, call, a: _gm_tile(r, a.get("dst")),
    "to_gm": lambda r, call, a: _kind(r, a.get("dst")) == "GlobalTensor",
}


def _calls(node, name: str) -> bool:
    """Is ``node`` a call of ``name`` (``asc.Nd2NzParams(...)``)?"""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) == name


def default_text(value) -> str:
    """A Python default as C++: None -> nullptr, an enum member by the table's names (PIPE_FIX)."""
    if value is None:
        return "nullptr"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Enum):
        form = NAMES.get(f"asc.{type(value).__name__}.", "{}")
        return form.format(value.name)
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)


def _is_zero(node) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0


def _element_type(r: Renderer, call: ast.Call, args: dict) -> str:
    """The element type a call works on: its dtype argument, its object's, then its tensors'; else T."""
    if given(args, "dtype"):
        found = r.dtype(args["dtype"])
        if found:
            return found
    if r.target is not None and r.target.dtype:
        return r.target.dtype
    if isinstance(call.func, ast.Attribute):
        info = r.info(infer.base_of(call.func.value))
        if info is not None and info.dtype:
            return info.dtype
    for name in ("dst", "tensor", "src", "addr"):
        node = args.get(name)
        if isinstance(node, ast.expr):
            info = r.info(infer.base_of(node))
            if info is not None and info.dtype:
                return info.dtype
    return "T"


def _tile_part(r: Renderer, node: ast.Call, field: str) -> str:
    """``rows``, ``cols`` or ``ld`` (row stride in elements) of a ``.tile(row, col, rows, cols[, ld])`` view."""
    if field in ("rows", "cols"):
        return r._wrap(node.args[2 if field == "rows" else 3], 80)
    if len(node.args) == 5:
        return r._wrap(node.args[4], 80)
    info = r.info(node.func.value)
    if info is not None and info.shape is not None:
        return r._wrap(info.shape[1], 80)
    return f"{r._wrap(node.func.value, 90)}.cols"


def tile_offset(r: Renderer, call: ast.Call) -> str:
    """The first element of a tile: ``row * ld + col`` in a row-major tensor; in L1 (A1/B1), where Ascend C keeps
    matrices in the NZ layout, ``col * rowsAligned + row * 16`` (columns of 16-element-wide fractals)."""
    row, col = call.args[0], call.args[1]
    info = r.info(call.func.value)
    nz = len(call.args) == 4 and info is not None and info.pos in ("A1", "B1")
    if nz:
        rows_aligned = f"(({r._wrap(call.args[2], 60)} + 15) / 16 * 16)"
        terms = [] if _is_zero(col) else [f"{r._wrap(col, 70)} * {rows_aligned}"]
        terms += [] if _is_zero(row) else [f"{r._wrap(row, 70)} * 16"]
    else:
        stride = _tile_part(r, call, "ld")
        terms = [] if _is_zero(row) else [f"{r._wrap(row, 70)} * {stride}"]
        terms += [] if _is_zero(col) else [r._wrap(col, 60)]
    return " + ".join(terms) or "0"


def _field(r: Renderer, node, field: str) -> str:
    if field in ("base", "plus"):  # a tile's tensor, and its offset followed by " + " ("" for a plain tensor)
        if not is_tile(node):
            return r._wrap(node, 90) if field == "base" else ""
        at = tile_offset(r, node)
        return r._wrap(node.func.value, 90) if field == "base" else ("" if at == "0" else f"{at} + ")
    if is_tile(node):
        return _tile_part(r, node, field)
    if isinstance(node, ast.Call):  # a params struct built in place: its field's argument
        key = infer.call_key(node, r.facts, r.scope)
        if key is not None:
            value = bind(node, parameters_of(key)).get(field)
            if isinstance(value, ast.expr):
                return r._wrap(value, 80)
    return f"{r._wrap(node, 90)}.{field}"


def special(r: Renderer, entry: Entry, call: ast.Call, args: dict, name: str, conv: str) -> str:
    """The text of one placeholder."""
    if name == "@recv":
        recv = call.func.value
        return (r.dtype(recv) or r.expr(recv)) if conv == "type" else r._wrap(recv, 90)
    if name == "@T":
        return _element_type(r, call, args)
    if name == "@out":
        return r.out or "value"
    if name == "@name":
        return r.name or "obj"
    if name == "@at":
        return tile_offset(r, call)
    if name == "@fields":
        positional = [r.expr(a) for a in call.args]
        return ", ".join(positional + [f".{k.arg} = {r.expr(k.value)}" for k in call.keywords if k.arg])
    base, _, field = name.partition(".")
    if base not in args:
        raise KeyError(f"{entry.key}: no parameter {base!r}")
    value = args[base]
    if field:
        return _field(r, value, field)
    if isinstance(value, list):
        return ", ".join(r.expr(v) for v in value)
    if isinstance(value, Default):
        return default_text(value.value)
    return _convert(r, value, conv, _element_type(r, call, args) if conv in ("scalar", "gm") else "")


def _convert(r: Renderer, node: ast.expr, conv: str, element: str) -> str:
    if conv == "type":
        return r.dtype(node) or r.expr(node)
    if conv == "id" and isinstance(node, ast.Constant) and isinstance(node.value, int):
        return f"EVENT_ID{node.value}"
    if conv == "raw" and isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if conv == "name" and isinstance(node, ast.Name):  # a kernel keeps its name (add_custom, relu_axpb)
        return node.id
    if conv == "gm":
        t = element
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return f"(__gm__ {t} *){r._wrap(node.left, 80)} + {r._wrap(node.right, 61)}"
        return f"(__gm__ {t} *){r._wrap(node, 80)}"
    if conv == "scalar" and element == "half" and not isinstance(node, ast.Name | ast.Attribute):
        return f"(half){r._wrap(node, 80)}"
    if conv == "scalar" and element == "half":
        return f"(half){r.expr(node)}"
    return r.expr(node)


__all__ = ("FORMS", "Default", "bind", "parameters_of", "special", "tile_offset")
