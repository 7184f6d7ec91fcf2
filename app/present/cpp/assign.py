"""Assignments as C++: a variable is declared where its function first assigns it, with the type the table or the
module's facts give (``LocalTensor<half> xLocal = inQ.AllocTensor<half>();``, ``TPipe pipe;``) or ``auto``; pyACL's
``value, ret = acl.rt.f(...)`` writes the value through an out-parameter (``aclError ret = aclrtF(&value, ...)``);
other tuples unpack with structured bindings; ``view[:] = x`` fills a host buffer with ``std::copy``."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from .expr import Renderer, Untranslatable, camel
from .infer import call_key, scalar_type
from .table import by_key

if TYPE_CHECKING:
    from .stmt import Writer

NULL = {"float": "0.0f", "int32_t": "0"}
PYACL = "acl"  # how an out-parameter's variable starts (else nullptr)


class Assigning:
    """The assignment half of :class:`app.present.cpp.stmt.Writer`."""

    def _Assign(self: Writer, node: ast.Assign, depth: int, scope: str, declared: set[str], r: Renderer) -> None:
        if len(node.targets) != 1:
            self.emit(node, self.chained(node.targets, node.value, scope, declared, r), depth, r)
            return
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Subscript) and _whole_slice(target.slice):
            self.emit(node, self.fill_buffer(target.value, value, scope, r), depth, r)
            return
        if isinstance(target, ast.Name) and target.id == PYACL:
            self.out.add(
                f"// (pyACL) {ast.unparse(node)}: the C API is functions, no module object", node.lineno, depth
            )
            return
        if not isinstance(target, ast.Tuple | ast.List):
            self.emit(node, self.assign_one(target, value, scope, declared, r), depth, r)
            return
        if isinstance(value, ast.Tuple) and len(value.elts) == len(target.elts):
            text = self.declare_many(target.elts, value.elts, scope, declared, r)
            self.emit(node, text, depth, r)
            return
        key = call_key(value, self.facts, scope) if isinstance(value, ast.Call) else None
        forms = by_key().get(key or "", ())
        if forms and forms[0].out and len(target.elts) == 2:
            self.emit(node, self.out_param(target.elts, value, scope, declared, r, forms[0].out), depth, r)
            return
        names = [e.id for e in target.elts if isinstance(e, ast.Name)]
        if len(names) != len(target.elts):
            raise Untranslatable("unpacking into non-names")
        text = r.expr(value)
        if any(n in declared for n in names):
            self.emit(node, f"std::tie({', '.join(camel(n) for n in names)}) = {text};", depth, r)
        else:
            declared.update(names)
            self.emit(node, f"auto [{', '.join(camel(n) for n in names)}] = {text};", depth, r)

    def fill_buffer(self: Writer, dst: ast.expr, value: ast.expr, scope: str, r: Renderer) -> str:
        """``view[:] = x``: ``std::copy`` of x into the buffer; from a host pointer (pyACL's ``ptr_to_numpy``),
        ``std::copy_n`` of its element count."""
        if isinstance(value, ast.Call) and call_key(value, self.facts, scope) == "acl.util.ptr_to_numpy":
            return f"std::copy_n({r.expr(value)}, {self.count_of(value, r)}, {r.expr(dst)});"
        src = r._wrap(value, 90)
        return f"std::copy({src}.begin(), {src}.end(), {r.expr(dst)});"

    def count_of(self: Writer, view: ast.Call, r: Renderer) -> str:
        """The element count of ``ptr_to_numpy(ptr, shape, dtype)``: the shape's product."""
        shape = view.args[1] if len(view.args) > 1 else None
        parts = shape.elts if isinstance(shape, ast.Tuple) else [shape] if shape is not None else []
        return " * ".join(r._wrap(p, 70) for p in parts) or "count"

    def chained(self: Writer, targets: list[ast.expr], value: ast.expr, scope: str, declared: set[str], r: Renderer):
        """``a = b = v``: C++ chains assignments too; ``a = b = None`` declares each (a tensor not yet allocated)."""
        if isinstance(value, ast.Constant) and value.value is None and all(isinstance(t, ast.Name) for t in targets):
            return " ".join(self.assign_one(t, value, scope, declared, r) for t in targets)
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        if len(names) == len(targets) and not any(n in declared for n in names):  # all new: one declaration each
            return " ".join(self.assign_one(t, value, scope, declared, r) for t in targets)
        first = targets[0]
        fresh = isinstance(first, ast.Name) and first.id not in declared
        if fresh:
            declared.add(first.id)
        chain = " = ".join(r.expr(t) for t in targets)
        return f"{'auto ' if fresh else ''}{chain} = {r.expr(value)};"

    def out_param(
        self: Writer, targets, call: ast.Call, scope: str, declared: set[str], r: Renderer, ctype: str
    ) -> str:
        """``ptr, ret = acl.rt.malloc(...)`` -> ``void *ptr = nullptr;`` (the first time) and
        ``aclError ret = aclrtMalloc(&ptr, ...);``."""
        value, ret = targets
        lines = []
        if isinstance(value, ast.Name) and value.id != "_" and value.id not in declared:
            declared.add(value.id)
            star = "" if ctype.endswith("*") else " "
            lines.append(f"{ctype}{star}{camel(value.id)} = {NULL.get(ctype, 'nullptr')};")
        r.out = r.expr(value) if not (isinstance(value, ast.Name) and value.id == "_") else "unused"
        text = r.expr(call)
        if isinstance(ret, ast.Name) and ret.id not in declared:
            declared.add(ret.id)
            lines.append(f"aclError {camel(ret.id)} = {text};")
        else:
            lines.append(f"{r.expr(ret)} = {text};")
        return "\n".join(lines)

    def declare_many(self: Writer, targets, values, scope: str, declared: set[str], r: Renderer) -> str:
        """``a, b = x, y``: one declaration when both are made by the same API constructor, else one by one."""
        keys = {call_key(v, self.facts, scope) if isinstance(v, ast.Call) else None for v in values}
        key = keys.pop() if len(keys) == 1 else None
        forms = by_key().get(key or "", ())
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        fresh = len(names) == len(targets) and not any(n in declared for n in names)
        if forms and forms[0].decl and fresh and "{@name}" not in forms[0].cpp:
            types = []
            for n, v in zip(names, values, strict=True):
                r.target, r.declaring = self.facts.lookup(scope, n), True
                types.append(r.expr(v))
            if len(set(types)) == 1:  # the same type: one declaration (``GlobalTensor<half> xGm, yGm;``)
                declared.update(names)
                return f"{types[0]} {', '.join(camel(n) for n in names)};"
            declared.update(names)
            return " ".join(f"{t} {camel(n)};" for t, n in zip(types, names, strict=True))
        return " ".join(self.assign_one(t, v, scope, declared, r) for t, v in zip(targets, values, strict=True))

    def assign_one(self: Writer, target: ast.expr, value: ast.expr, scope: str, declared: set[str], r: Renderer) -> str:
        key = call_key(value, self.facts, scope) if isinstance(value, ast.Call) else None
        forms = by_key().get(key or "", ())
        member = isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"
        if member and forms and forms[0].decl:  # self.q = asc.TQue(...): the object's member, declared
            r.target, r.name, r.declaring = self.facts.attrs.get(target.attr), camel(target.attr), True
            text = r.expr(value)
            return text if "{@name}" in forms[0].cpp else f"{text} {r.name};"
        if not isinstance(target, ast.Name):
            return f"{r.expr(target)} = {r.expr(value)};"
        name = camel(target.id)
        r.target = self.facts.lookup(scope, target.id)
        if forms and forms[0].decl and target.id not in declared:
            declared.add(target.id)
            r.name, r.declaring = name, True
            text = r.expr(value)
            return text if "{@name}" in forms[0].cpp else f"{text} {name};"
        text = r.expr(value)
        if target.id in declared:
            return f"{name} = {text};"
        declared.add(target.id)
        info = r.info(value)
        if info is not None and info.kind == "DType":  # a type held in a name: an alias
            return f"using {name} = {r.dtype(value) or 'T'};"
        copied = _copied_view(value, self.facts, scope)
        if copied is not None:  # pyACL's ptr_to_numpy(p, n, dtype).copy(): the n elements at p, as a vector
            ptr, count = r.expr(copied.args[0]), self.count_of(copied, r)
            return f"std::vector<{r.dtype(copied.args[2]) or 'T'}> {name}({ptr}, {ptr} + {count});"
        if isinstance(value, ast.List) and not value.elts:
            info = self.facts.lookup(scope, target.id)
            return f"std::vector<{info.ctype if info is not None and info.ctype else 'T'}> {name};"
        ctype = self.declared_type(target, value, scope, r)
        if text == "nullptr" and ctype.startswith("LocalTensor"):
            return f"{ctype} {name};"
        return f"{ctype} {name} = {text};"

    def declared_type(self: Writer, target: ast.Name, value: ast.expr, scope: str, r: Renderer) -> str:
        """The type a first assignment declares: the API's result type, what the facts say, else ``auto``."""
        last = r.last
        if last is not None and last[0].result and last[1] is value:
            entry, call, args = last
            return r.fill(entry.result, entry, call, args)
        info = self.facts.lookup(scope, target.id)
        if info is not None and info.kind == "LocalTensor" and info.dtype:
            return f"LocalTensor<{info.dtype}>"
        if scope == "" and target.id.isupper():
            ctype = scalar_type(value, self.facts, scope)
            return f"constexpr {ctype}" if ctype else "constexpr auto"
        return "auto"


def _copied_view(value: ast.expr, facts, scope: str) -> ast.Call | None:
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "copy"):
        return None
    inner = value.func.value
    if (
        isinstance(inner, ast.Call)
        and call_key(inner, facts, scope) == "acl.util.ptr_to_numpy"
        and len(inner.args) == 3
    ):
        return inner
    return None


def _whole_slice(index: ast.expr) -> bool:
    return isinstance(index, ast.Slice) and index.lower is None and index.upper is None and index.step is None


__all__ = ("Assigning",)
