"""A Python expression as C++: API calls through the table (:mod:`.table`), everything else as its nearest C++.

:class:`Renderer` renders within one scope of a module (the facts of :mod:`.infer`), and collects, per statement,
the table entries it used (their notes are shown beside the code), the statements that must go before
(``pre``: a ``<<<>>>`` launch whose status is then read) and the API calls that have no entry (``missing``).
"""

from __future__ import annotations

import ast
import keyword
import re

from . import infer
from .forms import FORMS, bind, parameters_of, special
from .infer import Facts, Info
from .table import NAMES, Entry, by_key

# fmt: off
CPP_KEYWORDS = frozenset((
    "auto", "bool", "break", "case", "catch", "char", "class", "const", "continue", "default", "delete", "do",
    "double", "else", "enum", "explicit", "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int",
    "long", "namespace", "new", "operator", "private", "protected", "public", "register", "return", "short",
    "signed", "sizeof", "static", "struct", "switch", "template", "this", "throw", "true", "try", "typedef", "union",
    "unsigned", "using", "virtual", "void", "volatile", "while", "half", "bfloat16_t",
))
# fmt: on
PLACEHOLDER = re.compile(r"\{(@?[A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_]+)?)(?::([a-z]+))?\}")
BUILTINS = {"min": "std::min", "max": "std::max", "abs": "std::abs", "reversed": "std::views::reverse"}
CASTS = {"int": "int32_t", "float": "float", "bool": "bool"}
LIST_METHODS = {"append": "push_back", "pop": "pop_back"}
# C++ precedence, higher binds tighter (a child weaker than its context gets parentheses)
ATOM, POSTFIX, UNARY, MUL, ADD, SHIFT, REL, EQ, BAND, XOR, BOR, AND, OR, COND = (
    100, 90, 80, 70, 60, 55, 50, 45, 40, 38, 36, 30, 25, 20,
)  # fmt: skip
BINOPS = {
    ast.Add: ("+", ADD),
    ast.Sub: ("-", ADD),
    ast.Mult: ("*", MUL),
    ast.Div: ("/", MUL),
    ast.FloorDiv: ("/", MUL),
    ast.Mod: ("%", MUL),
    ast.LShift: ("<<", SHIFT),
    ast.RShift: (">>", SHIFT),
    ast.BitAnd: ("&", BAND),
    ast.BitXor: ("^", XOR),
    ast.BitOr: ("|", BOR),
}
CMPOPS = {
    ast.Eq: ("==", EQ),
    ast.NotEq: ("!=", EQ),
    ast.Lt: ("<", REL),
    ast.LtE: ("<=", REL),
    ast.Gt: (">", REL),
    ast.GtE: (">=", REL),
    ast.Is: ("==", EQ),
    ast.IsNot: ("!=", EQ),
}


class Untranslatable(Exception):
    """An expression with no C++ rendering here (the statement is then shown as a comment)."""


class NoMapping(Exception):
    """An API call the table has no entry for."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def camel(name: str) -> str:
    """``x_local`` -> ``xLocal``; constants (``TILE``), ``baseM`` and ``M`` stay as they are."""
    if name.isupper() or name.strip("_") == "":
        return name
    parts = name.strip("_").split("_")
    out = parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])
    return out + "_" if out in CPP_KEYWORDS or keyword.iskeyword(out) else out


def pascal(name: str) -> str:
    """``copy_in`` -> ``CopyIn`` (Ascend C's functions)."""
    out = camel(name)
    return out[:1].upper() + out[1:]


class Renderer:
    """Renders expressions of one scope; ``pre``, ``used`` and ``missing`` collect per statement."""

    def __init__(self, facts: Facts, scope: str = "") -> None:
        self.facts = facts
        self.scope = scope
        self.pre: list[str] = []
        self.used: list[Entry] = []
        self.missing: list[str] = []
        self.bare: ast.Call | None = None  # the call that is the whole statement (a void call may stand there)
        self.out = ""  # the C++ of the variable an out-parameter call writes
        self.name = ""  # the C++ of the variable a constructor declares
        self.target: Info | None = None  # what the statement's assignment target holds (its element type)
        self.last: tuple | None = None  # (entry, call, bound arguments) of the last API call rendered
        self.declaring = False  # a constructor is rendered as the type of a declaration (not a temporary)

    # -- names ------------------------------------------------------------------------------------------------
    def ident(self, name: str) -> str:
        facts = self.facts
        origin = facts.imports.get(name, "")
        if name in facts.kernels or name in facts.classes or origin.startswith("engine.host.acl_codes"):
            return name
        if name in facts.functions:
            return pascal(name)
        if name == "self":
            return "*this"
        return camel(name)

    def info(self, node: ast.expr) -> Info | None:
        return infer.info_of(node, self.facts, self.scope)

    def dtype(self, node: ast.expr | None) -> str:
        return infer.dtype_of(node, self.facts, self.scope)

    # -- expressions ------------------------------------------------------------------------------------------
    def expr(self, node: ast.expr) -> str:
        return self._expr(node)[0]

    def _wrap(self, node: ast.expr, prec: int) -> str:
        text, p = self._expr(node)
        return f"({text})" if p < prec else text

    def _expr(self, node: ast.expr) -> tuple[str, int]:
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise Untranslatable(type(node).__name__)
        return method(node)

    def _Constant(self, node: ast.Constant) -> tuple[str, int]:
        v = node.value
        if v is None:
            return "nullptr", ATOM
        if isinstance(v, bool):
            return ("true" if v else "false"), ATOM
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"', ATOM
        if isinstance(v, float):
            return repr(v), ATOM
        if isinstance(v, int):
            return str(v), ATOM if v >= 0 else UNARY
        raise Untranslatable("constant")

    def _Name(self, node: ast.Name) -> tuple[str, int]:
        return self.ident(node.id), ATOM

    def _Attribute(self, node: ast.Attribute) -> tuple[str, int]:
        parts = infer.dotted(node)
        if parts:
            named = self._named(parts)
            if named is not None:
                return named, ATOM
            if parts[0] == "self" and len(parts) == 2:  # a member: ``this->`` where a local has its name
                shadowed = node.attr in self.facts.local_names(self.scope)
                return (f"this->{camel(node.attr)}", POSTFIX) if shadowed else (camel(node.attr), ATOM)
        if node.attr == "dtype":
            return self.dtype(node) or "T", ATOM
        if parts and "acl" in parts:  # an ACL function named, not called (``undo.append(acl.finalize)``)
            forms = by_key().get(".".join(parts[parts.index("acl") :]))
            if forms:
                return forms[0].cpp.split("(")[0], ATOM
        return f"{self._wrap(node.value, POSTFIX)}.{camel(node.attr)}", POSTFIX

    def _named(self, parts: list[str]) -> str | None:
        """A value of the API by its table name: ``asc.half`` -> ``half``, ``asc.TPosition.A1`` -> ``TPosition::A1``."""
        head = "asc" if infer.is_asc(self.facts, parts[0]) else parts[0]
        key = ".".join([head, *parts[1:]])
        if key in NAMES:
            return NAMES[key]
        prefix = ".".join([head, *parts[1:-1]]) + "."
        if prefix in NAMES:
            return NAMES[prefix].format(parts[-1])
        return None

    def _BinOp(self, node: ast.BinOp) -> tuple[str, int]:
        if isinstance(node.op, ast.Pow):
            return f"std::pow({self.expr(node.left)}, {self.expr(node.right)})", POSTFIX
        op, prec = BINOPS.get(type(node.op), (None, 0))
        if op is None:
            raise Untranslatable("operator")
        return f"{self._wrap(node.left, prec)} {op} {self._wrap(node.right, prec + 1)}", prec

    def _UnaryOp(self, node: ast.UnaryOp) -> tuple[str, int]:
        ceil = self._ceil_div(node)
        if ceil is not None:
            return ceil, MUL
        op = {ast.Not: "!", ast.USub: "-", ast.UAdd: "+", ast.Invert: "~"}[type(node.op)]
        return f"{op}{self._wrap(node.operand, UNARY)}", UNARY

    def _ceil_div(self, node: ast.UnaryOp) -> str | None:
        """Python's ceiling idiom ``-(-a // b)`` (C++'s ``/`` truncates, so ``-(-a / b)`` would be wrong)."""
        inner = node.operand
        if not (isinstance(node.op, ast.USub) and isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.FloorDiv)):
            return None
        if not (isinstance(inner.left, ast.UnaryOp) and isinstance(inner.left.op, ast.USub)):
            return None
        b = self._wrap(inner.right, ADD + 1)
        return f"({self._wrap(inner.left.operand, ADD)} + {b} - 1) / {self._wrap(inner.right, MUL + 1)}"

    def _BoolOp(self, node: ast.BoolOp) -> tuple[str, int]:
        op, prec = ("&&", AND) if isinstance(node.op, ast.And) else ("||", OR)
        return f" {op} ".join(self._wrap(v, prec + 1) for v in node.values), prec

    def _Compare(self, node: ast.Compare) -> tuple[str, int]:
        parts, left = [], node.left
        for op, right in zip(node.ops, node.comparators, strict=True):
            parts.append(self._compare(left, op, right))
            left = right
        return (parts[0] if len(parts) == 1 else " && ".join(f"({p})" for p in parts)), EQ if len(parts) == 1 else AND

    def _compare(self, left: ast.expr, op: ast.cmpop, right: ast.expr) -> str:
        if isinstance(op, ast.In | ast.NotIn):
            if isinstance(right, ast.Tuple | ast.List | ast.Set):
                any_of = " || ".join(f"{self._wrap(left, EQ + 1)} == {self._wrap(e, EQ + 1)}" for e in right.elts)
                return f"!({any_of})" if isinstance(op, ast.NotIn) else any_of
            found = f"{self._wrap(right, POSTFIX)}.count({self.expr(left)})"
            return f"!{found}" if isinstance(op, ast.NotIn) else found
        text, prec = CMPOPS[type(op)]
        return f"{self._wrap(left, prec + 1)} {text} {self._wrap(right, prec + 1)}"

    def _IfExp(self, node: ast.IfExp) -> tuple[str, int]:
        return f"{self._wrap(node.test, OR)} ? {self._wrap(node.body, OR)} : {self._wrap(node.orelse, COND)}", COND

    def _Tuple(self, node: ast.Tuple) -> tuple[str, int]:
        """A pair or tuple value (a braced list where the statement says the type: ``return {a, b};``)."""
        maker = "std::make_pair" if len(node.elts) == 2 else "std::make_tuple"
        return f"{maker}({', '.join(self.expr(e) for e in node.elts)})", POSTFIX

    def braced(self, node: ast.expr) -> str:
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return "{" + ", ".join(self.expr(e) for e in node.elts) + "}"
        return self.expr(node)

    def _List(self, node: ast.List | ast.Set) -> tuple[str, int]:
        return "{" + ", ".join(self.expr(e) for e in node.elts) + "}", ATOM

    _Set = _List

    def _Dict(self, node: ast.Dict) -> tuple[str, int]:
        if any(k is None for k in node.keys):
            raise Untranslatable("dict unpacking")
        items = ", ".join(f"{{{self.expr(k)}, {self.expr(v)}}}" for k, v in zip(node.keys, node.values, strict=True))
        return "{" + items + "}", ATOM

    def _Starred(self, node: ast.Starred) -> tuple[str, int]:
        return f"{self._wrap(node.value, POSTFIX)}...", POSTFIX

    def _JoinedStr(self, node: ast.JoinedStr) -> tuple[str, int]:
        fmt, args = [], []
        for part in node.values:
            if isinstance(part, ast.Constant):
                fmt.append(str(part.value).replace("{", "{{").replace("}", "}}"))
            else:
                fmt.append("{}")
                args.append(self.expr(part.value))
        text = "".join(fmt).replace("\\", "\\\\").replace('"', '\\"')
        return f'std::format("{text}"' + "".join(f", {a}" for a in args) + ")", POSTFIX

    def _Lambda(self, node: ast.Lambda) -> tuple[str, int]:
        """``lambda ptr=ptr: f(ptr)`` binds ptr's value now: a capture by copy, ``[ptr]() { ... }``."""
        bound = [a.arg for a in node.args.args[len(node.args.args) - len(node.args.defaults) :]]
        params = ", ".join(f"auto {camel(a.arg)}" for a in node.args.args if a.arg not in bound)
        capture = ", ".join(["&", *(camel(b) for b in bound)]) if bound else "&"
        return f"[{capture}]({params}) {{ return {self.expr(node.body)}; }}", ATOM

    def _ListComp(self, node: ast.ListComp | ast.GeneratorExp) -> tuple[str, int]:
        """``[f(x) for x in seq if c]`` as a C++23 range: ``seq | filter | transform | to<std::vector>()`` (two
        ``for`` clauses: over ``std::views::cartesian_product``)."""
        gens = node.generators
        if len(gens) > 2 or any(g.is_async for g in gens):
            raise Untranslatable("comprehension")
        sources = [self._source(g.iter) for g in gens]
        names = [self._unpack_names(g.target) for g in gens]
        if len(gens) == 1 and isinstance(gens[0].target, ast.Name):
            param, unpack = f"auto {names[0]}", ""
            source = sources[0]
        else:
            parts = [f"auto {n} = std::get<{i}>(e); " for i, n in enumerate(names)] if len(gens) > 1 else []
            unpack = "".join(parts) if len(gens) > 1 else f"auto {names[0]} = e; "
            param = "auto e"
            source = sources[0] if len(gens) == 1 else f"std::views::cartesian_product({', '.join(sources)})"
        conds = [c for g in gens for c in g.ifs]
        stages = [f"std::views::filter([&]({param}) {{ {unpack}return {self.expr(c)}; }})" for c in conds]
        stages.append(f"std::views::transform([&]({param}) {{ {unpack}return {self.expr(node.elt)}; }})")
        return " | ".join([source, *stages, "std::ranges::to<std::vector>()"]), BOR

    def _unpack_names(self, target: ast.expr) -> str:
        if isinstance(target, ast.Name):
            return camel(target.id)
        if isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
            return "[" + ", ".join(camel(e.id) for e in target.elts) + "]"
        raise Untranslatable("comprehension target")

    def _source(self, it: ast.expr) -> str:
        """What a comprehension runs over: ``range`` as ``std::views::iota`` (with ``stride``), zip, enumerate."""
        func = it.func.id if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) else ""
        if func == "range" and 1 <= len(it.args) <= 3:
            bounds = [self.expr(a) for a in it.args]
            lo, hi = ("0", bounds[0]) if len(bounds) == 1 else (bounds[0], bounds[1])
            iota = f"std::views::iota({lo}, {hi})"
            return iota + (f" | std::views::stride({bounds[2]})" if len(bounds) == 3 else "")
        if func in ("zip", "enumerate"):
            return f"std::views::{func}({', '.join(self.expr(a) for a in it.args)})"
        return self._wrap(it, BOR + 1)

    _GeneratorExp = _ListComp

    def _Subscript(self, node: ast.Subscript) -> tuple[str, int]:
        base = self._wrap(node.value, POSTFIX)
        index = node.slice
        if isinstance(index, ast.Slice):
            info = self.info(node.value)
            if info is not None and info.kind in ("GlobalTensor", "LocalTensor") and index.upper is None:
                return (f"{base}[{self.expr(index.lower)}]" if index.lower is not None else base), POSTFIX
            if index.step is not None:
                raise Untranslatable("slice step")
            lo = f" + {self._wrap(index.lower, ADD + 1)}" if index.lower is not None else ""
            hi = f"{base}.begin() + {self._wrap(index.upper, ADD + 1)}" if index.upper is not None else f"{base}.end()"
            return f"std::vector({base}.begin(){lo}, {hi})", POSTFIX
        if (
            isinstance(index, ast.UnaryOp)
            and isinstance(index.op, ast.USub)
            and isinstance(index.operand, ast.Constant)
        ):
            back = index.operand.value
            return (f"{base}.back()" if back == 1 else f"{base}[{base}.size() - {back}]"), POSTFIX
        return f"{base}[{self.expr(index)}]", POSTFIX

    def _Call(self, node: ast.Call) -> tuple[str, int]:
        key = infer.call_key(node, self.facts, self.scope)
        if key is not None:
            return self.api(node, key), POSTFIX
        func = node.func
        args = [self.expr(a) for a in node.args] + [self.expr(k.value) for k in node.keywords if k.arg]
        if isinstance(func, ast.Name):
            name = func.id
            if name in BUILTINS:
                return f"{BUILTINS[name]}({', '.join(args)})", POSTFIX
            if name in CASTS and len(args) == 1:
                return f"static_cast<{CASTS[name]}>({args[0]})", POSTFIX
            if name == "len" and len(args) == 1:
                return f"{self._wrap(node.args[0], POSTFIX)}.size()", POSTFIX
            if name in self.facts.structs:
                return f"{name}{{{', '.join(args)}}}", POSTFIX
            if name in self.facts.imports and name[:1].islower():  # a function of another module: CopyIn style
                return f"{pascal(name)}({', '.join(args)})", POSTFIX
            return f"{self.ident(name)}({', '.join(args)})", POSTFIX
        if isinstance(func, ast.Attribute):
            recv = self._wrap(func.value, POSTFIX)
            info = self.info(func.value)
            method = func.attr
            if (info is not None and info.kind == "list") or method in LIST_METHODS:
                method = LIST_METHODS.get(method, method)
            elif info is not None and info.kind in ("class", "struct"):
                method = pascal(method)
            return f"{recv}.{method}({', '.join(args)})", POSTFIX
        return f"{self._wrap(func, POSTFIX)}({', '.join(args)})", POSTFIX

    # -- API calls ----------------------------------------------------------------------------------------------
    def api(self, call: ast.Call, key: str) -> str:
        """A call of the API named ``key`` in the form its table entry gives (the first whose condition holds)."""
        forms = by_key().get(key)
        if not forms:
            self.missing.append(key)
            raise NoMapping(key)
        args = bind(call, parameters_of(key))
        entry = next(e for e in forms if not e.when or FORMS[e.when](self, call, args))
        self.used.append(entry)
        self.last = (entry, call, args)
        if entry.decl and not self.declaring and "{@name}" not in entry.cpp:  # a temporary: ``TPipe()``
            return self.fill(entry.cpp, entry, call, args) + "()"
        if entry.pre:
            pre = self.fill(entry.pre, entry, call, args)
            if entry.void and call is self.bare:
                return pre
            self.pre.append(pre)
        return self.fill(entry.cpp, entry, call, args)

    def fill(self, template: str, entry: Entry, call: ast.Call, args: dict) -> str:
        def one(match: re.Match) -> str:
            name, conv = match.group(1), match.group(2) or ""
            return special(self, entry, call, args, name, conv)

        text = PLACEHOLDER.sub(one, template)
        return text[: -len("[0]")] if text.endswith("[0]") and template == "{@recv}[{@at}]" else text


__all__ = ("NoMapping", "Renderer", "Untranslatable", "camel", "pascal")
