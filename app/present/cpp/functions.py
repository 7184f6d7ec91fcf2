"""Functions and classes as C++: a kernel (``@asc.jit``) becomes an ``extern "C" __global__ __aicore__`` entry whose
parameters are GM pointers and scalars (a struct arrives through GM and ``GET_TILING_DATA``), the functions and
classes a kernel uses become ``__aicore__ inline`` ones (Ascend C's ``CopyIn`` / ``Compute`` / ``CopyOut``), host
functions plain C++ functions (pyACL's ``acl`` object has no C++ counterpart: ACL is a set of functions), a
function defined inside another a lambda, and a dataclass a struct."""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from .expr import Renderer, camel, pascal
from .infer import Info, dotted
from .out import INDENT
from .table import by_key

if TYPE_CHECKING:
    from .stmt import Writer

GENERIC = re.compile(r"<T>|\(T\)|\bT \*|\(__gm__ T")  # an element type the Python leaves to run time
PYACL = "acl"  # the pyACL module object a host function takes: ACL's C functions need no object
BASES = {"RuntimeError": "std::runtime_error", "Exception": "std::exception", "ValueError": "std::invalid_argument"}


def _returns_value(node: ast.FunctionDef) -> bool:
    def walk(n: ast.AST):
        for child in ast.iter_child_nodes(n):
            if isinstance(child, ast.FunctionDef | ast.Lambda | ast.ClassDef):
                continue
            yield child
            yield from walk(child)

    return any(isinstance(n, ast.Return) and n.value is not None for n in walk(node))


def param_type(info: Info | None, r: Renderer) -> str:
    """The C++ type of a helper's parameter from what its callers pass."""
    if info is None:
        return "auto"
    kind = info.kind
    if kind == "TQue":
        depth = r.expr(info.depth) if info.depth is not None else "1"
        return f"TQue<TPosition::{info.pos or 'VECIN'}, {depth}> &"
    if kind == "TBuf":
        return f"TBuf<TPosition::{info.pos or 'VECCALC'}> &"
    if kind == "TPipe":
        return "TPipe &"
    if kind == "TilingContext":
        return "gert::TilingContext *"
    if kind == "list":
        return f"std::vector<{info.ctype or 'T'}> &"
    if kind in ("GlobalTensor", "LocalTensor"):
        return f"{kind}<{info.dtype or 'T'}>"
    if kind == "GM_ADDR":
        return "GM_ADDR"
    if kind in ("struct", "TCubeTiling"):
        return f"const {info.ctype or kind} &"
    if kind == "class":
        return f"{info.ctype} &"
    return info.ctype or "auto"


class Defining:
    """The function and class half of :class:`app.present.cpp.stmt.Writer`."""

    def _FunctionDef(self: Writer, node: ast.FunctionDef, depth: int, scope: str, declared: set[str], r) -> None:
        if scope and not scope.endswith("."):  # inside a function: a lambda sharing its variables
            self.lambda_(node, depth, scope, declared)
            return
        owner = scope[:-1] if scope.endswith(".") else ""
        name = f"{scope}{node.name}"
        kernel = self.facts.kernels.get(node.name) if not owner else None
        r = Renderer(self.facts, name)
        params, prelude = self.parameters(node, name, r, kernel is not None)
        for deco in node.decorator_list:
            if kernel is None:
                self.out.add(f"// @{ast.unparse(deco)}", deco.lineno, depth)
        if node.name in self.facts.fast_paths and not owner:
            fast = f"// (simulator only) the fast path of {self.facts.fast_paths[node.name]}: the same program recorded"
            self.out.add(fast + " once and stamped; nothing in Ascend C corresponds", node.lineno, depth)
            self.out.used(node.lineno, [], ("fast_path",))
        if kernel is not None:
            head = f'extern "C" __global__ __aicore__ void {node.name}({params})'
        elif owner and node.name == "__init__":
            head = f"{'__aicore__ inline ' if owner in self.device else ''}{owner}({params})"
        else:
            ret = "auto" if _returns_value(node) else "void"
            inline = "__aicore__ inline " if (owner or node.name) in self.device else ""
            head = f"{inline}{ret} {pascal(node.name)}({params})"
        start = len(self.out.lines)
        self.out.add(head, node.lineno, depth)
        self.out.add("{", node.lineno, depth)
        if kernel is not None:
            self.kernel_prelude(node, kernel, depth + 1)
        for line in prelude:
            self.out.add(line, node.lineno, depth + 1)
        if prelude:
            self.out.used(node.lineno, [], ("kernel_args",))
        self.cursor = max(self.cursor, node.body[0].lineno - 1)
        self.block(node.body, depth + 1, name, {a.arg for a in node.args.args})
        self.out.add("}", None, depth)
        if any(GENERIC.search(text.split("//")[0]) for text, _py in self.out.lines[start:]):
            if kernel is not None:  # a template kernel cannot be extern "C" (CANN's matmul sample is a template)
                text, py = self.out.lines[start]
                self.out.lines[start] = (text.replace('extern "C" ', ""), py)
            self.out.lines.insert(start, (INDENT * depth + "template <typename T>", node.lineno))

    def kernel_prelude(self: Writer, node: ast.FunctionDef, kernel: str, depth: int) -> None:
        """``KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_...)`` from ``@asc.jit(kernel_type=...)``, on the decorator's line."""
        deco = node.decorator_list[0] if node.decorator_list else node
        entry = by_key()["asc.jit"][0]
        self.out.add(entry.cpp.replace("{kernel_type}", f"KERNEL_TYPE_{kernel}") + ";", deco.lineno, depth)
        self.out.used(deco.lineno, [entry])

    def parameters(self: Writer, node: ast.FunctionDef, scope: str, r: Renderer, kernel: bool) -> tuple[str, list]:
        """The C++ parameter list, and the lines a kernel needs first (a struct read from GM)."""
        out, prelude = [], []
        args = node.args.args
        defaults = [None] * (len(args) - len(node.args.defaults)) + list(node.args.defaults)
        for arg, default in zip(args, defaults, strict=True):
            if arg.arg in ("self", PYACL):
                continue
            info = self.facts.lookup(scope, arg.arg)
            name = camel(arg.arg)
            if kernel:
                if info is not None and info.kind in ("struct", "TCubeTiling"):
                    out.append(f"GM_ADDR {name}Gm")
                    prelude.append(f"GET_TILING_DATA({name}, {name}Gm);")
                    continue
                ctype = "GM_ADDR" if info is not None and info.kind == "GM_ADDR" else (info.ctype if info else "")
                out.append(f"{ctype or 'int32_t'} {name}")
                continue
            ctype = param_type(info, r)
            text = f"{ctype}{name}" if ctype.endswith(("&", "*")) else f"{ctype} {name}"
            if default is not None and not kernel:
                text += f" = {r.expr(default)}"
            out.append(text)
        if node.args.vararg is not None:
            out.append(f"auto... {camel(node.args.vararg.arg)}")
        return ", ".join(out), prelude

    def lambda_(self: Writer, node: ast.FunctionDef, depth: int, scope: str, declared: set[str]) -> None:
        params = ", ".join(f"auto {camel(arg.arg)}" for arg in node.args.args)
        declared.add(node.name)
        self.out.add(f"auto {camel(node.name)} = [&]({params}) {{", node.lineno, depth)
        self.block(node.body, depth + 1, scope, set(declared) | {a.arg for a in node.args.args})
        self.out.add("};", None, depth)

    def _ClassDef(self: Writer, node: ast.ClassDef, depth: int, scope: str, declared: set[str], r) -> None:
        if any(ast.unparse(b).rpartition(".")[2] == "TilingData" for b in node.bases):  # Ascend C's macros
            self.out.add(f"BEGIN_TILING_DATA_DEF({node.name})", node.lineno, depth)
            self.cursor = max(self.cursor, node.lineno)
            for stmt in node.body:
                self.between(stmt.lineno, depth + 1)
                self.statement(stmt, depth + 1, f"{node.name}.", set())
                self.cursor = max(self.cursor, stmt.end_lineno or stmt.lineno)
            self.out.add("END_TILING_DATA_DEF;", None, depth)
            return
        struct = node.name in self.facts.structs
        bases = [BASES.get(ast.unparse(b), ast.unparse(b)) for b in node.bases]
        inherits = f" : public {', public '.join(bases)}" if bases else ""
        self.out.add(f"{'struct' if struct else 'class'} {node.name}{inherits} {{", node.lineno, depth)
        if not struct:
            self.out.add("public:", node.lineno, depth)
        self.cursor = max(self.cursor, node.lineno)
        for stmt in node.body:
            self.between(stmt.lineno, depth + 1)
            if struct and isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                ann = dotted(stmt.annotation)
                ctype = {"int": "int32_t", "float": "float", "bool": "bool"}.get(ann[-1] if ann else "", "auto")
                self.out.add(f"{ctype} {camel(stmt.target.id)};", stmt.lineno, depth + 1)
                self.comment_after(stmt, stmt.lineno)
                continue
            self.statement(stmt, depth + 1, f"{node.name}.", set())
            self.cursor = max(self.cursor, stmt.end_lineno or stmt.lineno)
        self.out.add("};", None, depth)


__all__ = ("Defining", "param_type")
