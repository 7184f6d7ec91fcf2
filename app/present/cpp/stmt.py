"""Python statements as C++ lines, each line knowing the Python statement it renders.

Assignments declare a variable the first time a function assigns it (``LocalTensor<half> xLocal = ...`` when the
type is known, ``auto`` otherwise), pyACL's ``value, ret = call(...)`` becomes ``aclError ret = call(&value, ...)``,
``for`` over ``range`` a counted loop, a kernel function an ``extern "C" __global__ __aicore__`` entry and the
functions it calls ``__aicore__ inline`` ones. A statement that cannot be rendered is shown as a comment with its
Python; an API call the table lacks, as a comment saying so.
"""

from __future__ import annotations

import ast

from .assign import Assigning
from .expr import NoMapping, Renderer, Untranslatable, camel
from .functions import Defining
from .infer import Facts, call_key, dotted, scalar_type
from .out import INDENT, Out
from .table import by_key

HARNESS = ("sim", "rec")  # the simulation and the grader's recorder: calls on them are the simulator's own
INCLUDES = {
    "engine.asc": ('#include "kernel_operator.h"', "using namespace AscendC;"),
    "engine.host.acl_codes": ('#include "acl/acl.h"',),
    "numpy": ("#include <vector>",),
}


class Writer(Assigning, Defining):
    """Writes the statements of one module (its facts, source lines and comments) into :class:`Out`."""

    def __init__(self, facts: Facts, source: list[str], device: set[str], comments: dict[int, str], code: set[int]):
        self.facts = facts
        self.source = source
        self.device = device  # functions and classes that run on the AI core (a kernel and what it calls)
        self.comments = comments  # line -> the text of its ``#`` comment
        self.code = code  # lines that hold code (a comment on one of them trails the code)
        self.cursor = 0  # the last Python line written out
        self.out = Out()

    # -- blocks -------------------------------------------------------------------------------------------------
    def block(self, body: list[ast.stmt], depth: int, scope: str, declared: set[str]) -> None:
        for stmt in body:
            decorators = getattr(stmt, "decorator_list", None)
            self.between(decorators[0].lineno if decorators else stmt.lineno, depth)
            self.statement(stmt, depth, scope, declared)
            self.cursor = max(self.cursor, stmt.end_lineno or stmt.lineno)

    def between(self, upto: int, depth: int) -> None:
        """The comment lines (and one blank line per gap) from the last line written up to line ``upto``."""
        blank = False
        for line in range(self.cursor + 1, upto):
            if line in self.comments and line not in self.code:
                self.out.add(f"// {self.comments[line]}", line, depth)
                blank = False
            elif not self.source[line - 1].strip() and not blank and self.out.lines and self.out.lines[-1][0]:
                self.out.lines.append(("", None))
                blank = True
        self.cursor = max(self.cursor, upto - 1)

    def statement(self, node: ast.stmt, depth: int, scope: str, declared: set[str]) -> None:
        r = Renderer(self.facts, scope)
        line = node.lineno
        start = len(self.out.lines)
        try:
            handler = getattr(self, f"_{type(node).__name__}", None)
            if handler is None:
                raise Untranslatable(type(node).__name__)
            handler(node, depth, scope, declared, r)
        except NoMapping as exc:
            del self.out.lines[start:]
            self.out.missing.append((line, exc.key))
            self._as_comment(node, depth, f"no C++ mapping for {exc.key}", scope, declared)
        except Untranslatable:
            del self.out.lines[start:]
            self._as_comment(node, depth, "(Python)", scope, declared)
        except Exception as exc:  # a reading aid never stops the player: a trainee's file may hold anything
            del self.out.lines[start:]
            self.out.errors.append((line, f"{type(exc).__name__}: {exc}"))
            self._as_comment(node, depth, "(Python)", scope, declared)
        self.comment_after(node, start)

    def comment_after(self, node: ast.stmt, start: int) -> None:
        """Comments trailing the statement's header lines, after its last C++ line of that header."""
        body = getattr(node, "body", None)
        last = body[0].lineno - 1 if isinstance(body, list) and body else (node.end_lineno or node.lineno)
        texts = [self.comments[i] for i in range(node.lineno, last + 1) if i in self.comments and i in self.code]
        if not texts:
            return
        lines = self.out.lines
        for i in range(len(lines) - 1, start - 1, -1):
            if lines[i][1] == node.lineno:
                lines[i] = (f"{lines[i][0]}  // {'; '.join(texts)}", node.lineno)
                return

    def _as_comment(self, node: ast.stmt, depth: int, why: str, scope: str, declared: set[str]) -> None:
        """The statement's Python as a comment (its body, if any, still rendered inside braces)."""
        self.out.comments_only.append(node.lineno)
        body = getattr(node, "body", None)
        compound = isinstance(body, list) and body and isinstance(body[0], ast.stmt)
        last = body[0].lineno - 1 if compound else (node.end_lineno or node.lineno)
        for i in range(node.lineno, max(node.lineno, last) + 1):
            text = self.source[i - 1].strip()
            self.out.add(f"// {why}: {text}" if i == node.lineno else f"//     {text}", node.lineno, depth)
        if compound:
            self.out.add("{", node.lineno, depth)
            self.block(body, depth + 1, scope, declared)
            self.out.add("}", None, depth)

    def emit(self, node: ast.stmt, text: str, depth: int, r: Renderer, extra: tuple[str, ...] = ()) -> None:
        """The statement's C++ (after what its calls need first), and the notes of the entries it used."""
        for pre in r.pre:
            self.out.add(pre + ";", node.lineno, depth)
        self.out.add(text, node.lineno, depth)
        self.out.used(node.lineno, r.used, extra)

    # -- simple statements --------------------------------------------------------------------------------------
    def _Expr(self, node: ast.Expr, depth: int, scope: str, declared: set[str], r: Renderer) -> None:
        value = node.value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):  # a docstring: its lines as comments
            for i, text in enumerate(value.value.strip("\n").splitlines()):
                self.out.add(f"// {text.strip()}".rstrip(), node.lineno + i, depth)
            return
        if isinstance(value, ast.Call):
            r.bare = value
            root = dotted(value.func)
            if root and root[0] in HARNESS and "acl" not in root:
                self.out.add(f"// (simulator only) {ast.unparse(value)}", node.lineno, depth)
                return
        text = r.expr(value)
        if text.startswith("//") or text.endswith("}"):  # a comment-form entry, or a block (a loop of LoadData)
            self.emit(node, text, depth, r)
        else:
            self.emit(node, text + ";", depth, r)

    def _Pass(self, node, depth, scope, declared, r) -> None:
        return

    def _Break(self, node, depth, scope, declared, r) -> None:
        self.out.add("break;", node.lineno, depth)

    def _Continue(self, node, depth, scope, declared, r) -> None:
        self.out.add("continue;", node.lineno, depth)

    def _Return(self, node: ast.Return, depth, scope, declared, r: Renderer) -> None:
        self.emit(node, "return;" if node.value is None else f"return {r.braced(node.value)};", depth, r)

    def _Raise(self, node: ast.Raise, depth, scope, declared, r: Renderer) -> None:
        exc = node.exc
        if isinstance(exc, ast.Call) and exc.args:
            self.emit(node, f"throw std::runtime_error({r.expr(exc.args[0])});", depth, r)
        else:
            self.emit(node, "throw;", depth, r)

    def _Assert(self, node: ast.Assert, depth, scope, declared, r: Renderer) -> None:
        self.emit(node, f"assert({r.expr(node.test)});", depth, r)

    def _Global(self, node, depth, scope, declared, r) -> None:
        return

    _Nonlocal = _Global

    def _Import(self, node: ast.stmt, depth, scope, declared, r) -> None:
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom):
            names = [f"{node.module}.{a.name}" for a in node.names] + ([node.module] if node.module else [])
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            return
        for name, lines in INCLUDES.items():
            if name == "engine.asc" and not self.facts.kernels and not self.device:
                continue  # host code that names asc types only: no kernel header
            if any(n == name or n.startswith(name + ".") for n in names):
                for text in lines:
                    self.out.add(text, node.lineno, depth)
                return
        self.out.add(f"// Python import: {ast.unparse(node)}", node.lineno, depth)

    _ImportFrom = _Import

    def _AugAssign(self, node: ast.AugAssign, depth, scope, declared, r: Renderer) -> None:
        op = ast.unparse(ast.BinOp(ast.Name("a"), node.op, ast.Name("b")))[2:-2].strip()
        op = "/" if op == "//" else op
        self.emit(node, f"{r.expr(node.target)} {op}= {r.expr(node.value)};", depth, r)

    def _AnnAssign(self, node: ast.AnnAssign, depth, scope, declared, r: Renderer) -> None:
        ann = dotted(node.annotation)
        ctype = {"int": "int32_t", "float": "float", "bool": "bool", "str": "const char *"}.get(ann[-1] if ann else "")
        ctype = ctype or (ann[-1] if ann else "auto")
        name = r.expr(node.target)
        if isinstance(node.target, ast.Name):
            declared.add(node.target.id)
        value = f" = {r.expr(node.value)}" if node.value is not None else ""
        self.emit(node, f"{ctype} {name}{value};", depth, r)

    # -- compound statements ------------------------------------------------------------------------------------
    def _If(self, node: ast.If, depth, scope, declared, r: Renderer, keyword: str = "if") -> None:
        self.emit(node, f"{keyword} {self.condition(node.test, r)} {{", depth, r)
        self.block(node.body, depth + 1, scope, declared)
        orelse = node.orelse
        if len(orelse) == 1 and isinstance(orelse[0], ast.If):
            self.out.lines.append((INDENT * depth + "}", None))
            self._If(orelse[0], depth, scope, declared, Renderer(self.facts, scope), "else if")
            return
        if orelse:
            self.out.add("} else {", orelse[0].lineno - 1 if self._is_else(orelse[0]) else None, depth)
            self.block(orelse, depth + 1, scope, declared)
        self.out.add("}", None, depth)

    def _is_else(self, first: ast.stmt) -> bool:
        return self.source[first.lineno - 2].strip().startswith("else")

    def condition(self, test: ast.expr, r: Renderer) -> str:
        """``(cond)``; ``ASCEND_IS_AIC`` / ``ASCEND_IS_AIV`` bare, as CANN's mixed kernels write them."""
        inner, negated = test, False
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner, negated = test.operand, True
        key = call_key(inner, self.facts, r.scope) if isinstance(inner, ast.Call) else None
        if key in ("asc.ascend_is_aic", "asc.ascend_is_aiv"):
            core = key.endswith("aic") != negated
            r.used.append(by_key()["asc.ascend_is_aic" if core else "asc.ascend_is_aiv"][0])
            return "ASCEND_IS_AIC" if core else "ASCEND_IS_AIV"
        return f"({r.expr(test)})"

    def _While(self, node: ast.While, depth, scope, declared, r: Renderer) -> None:
        if node.orelse:
            raise Untranslatable("while-else")
        self.emit(node, f"while {self.condition(node.test, r)} {{", depth, r)
        self.block(node.body, depth + 1, scope, declared)
        self.out.add("}", None, depth)

    def _For(self, node: ast.For, depth, scope, declared, r: Renderer) -> None:
        if node.orelse:
            raise Untranslatable("for-else")
        head, first = self.loop_head(node, r, declared)
        self.emit(node, head, depth, r)
        if first:
            self.out.add(first, node.lineno, depth + 1)
        self.block(node.body, depth + 1, scope, declared)
        self.out.add("}", None, depth)

    def loop_head(self, node: ast.For, r: Renderer, declared: set[str]) -> tuple[str, str]:
        """The ``for (...) {`` line, and the first line of the body that names the elements (or "")."""
        it, target = node.iter, node.target
        names = [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]
        declared.update(names)
        func = it.func.id if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) else ""
        if func == "range" and isinstance(target, ast.Name) and 1 <= len(it.args) <= 3:
            var = camel(target.id)
            args = it.args
            start = r.expr(args[0]) if len(args) > 1 else "0"
            stop = r.expr(args[1] if len(args) > 1 else args[0])
            step = args[2] if len(args) == 3 else None
            ctype = scalar_type(args[0], self.facts, r.scope) if len(args) > 1 else "int32_t"
            ctype = "int32_t" if ctype in ("", "float") else ctype
            down = isinstance(step, ast.UnaryOp) and isinstance(step.op, ast.USub)
            inc = "++" + var if step is None else f"{var} += {r.expr(step)}"
            return f"for ({ctype} {var} = {start}; {var} {'>' if down else '<'} {stop}; {inc}) {{", ""
        if func in ("enumerate", "zip") and it.args and isinstance(target, ast.Tuple):
            seqs = [r._wrap(a, 90) for a in it.args]
            if func == "enumerate":
                index, elems = (
                    camel(target.elts[0].id) if isinstance(target.elts[0], ast.Name) else "i",
                    [target.elts[1]],
                )
                seqs = seqs[:1]
            else:
                index, elems = "i", list(target.elts)
            head = f"for (size_t {index} = 0; {index} < {seqs[0]}.size(); ++{index}) {{"
            binds = " ".join(f"auto {self._binding(e, r)} = {s}[{index}];" for e, s in zip(elems, seqs, strict=False))
            return head, binds
        return f"for (auto {self._binding(target, r)} : {r.braced(it)}) {{", ""

    def _binding(self, target: ast.expr, r: Renderer) -> str:
        if isinstance(target, ast.Tuple):
            return "[" + ", ".join(self._binding(e, r) for e in target.elts) + "]"
        return r.expr(target)

    def _Try(self, node: ast.Try, depth, scope, declared, r: Renderer) -> None:
        if node.orelse or node.finalbody:
            raise Untranslatable("try-else / finally")
        self.emit(node, "try {", depth, r)
        self.block(node.body, depth + 1, scope, declared)
        for handler in node.handlers:
            name = camel(handler.name) if handler.name else ""
            caught = f"const std::exception &{name}".rstrip() if handler.type is not None else "..."
            self.out.add(f"}} catch ({caught}) {{", handler.lineno, depth)
            self.block(handler.body, depth + 1, scope, declared)
        self.out.add("}", None, depth)


__all__ = ("INDENT", "Out", "Writer")
