"""A whole Python file as C++ lines, each knowing the Python line it renders (:func:`translate`).

The translation is a pure function of the file's text (cached by it): the per-step pane looks up the current
line's C++ in it, a lesson's whole program prints it, and the coverage test reads which API calls it could not
map.
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass
from functools import lru_cache

from .infer import Facts, gather
from .stmt import Writer


@dataclass(frozen=True)
class CppLine:
    text: str
    py: int | None  # the first line of the Python statement it renders (None: a closing brace, a blank)


@dataclass(frozen=True)
class CppModule:
    """A file's C++: its lines, and per Python line the statement it belongs to, its notes and API keys."""

    lines: tuple[CppLine, ...]
    span: dict[int, int]  # any Python line -> the first line of its statement (or itself)
    notes: dict[int, tuple[str, ...]]  # statement line -> note keys (cpp.note.<key>)
    keys: dict[int, tuple[str, ...]]  # statement line -> the API keys its C++ used
    missing: tuple[tuple[int, str], ...]  # (line, API key) of calls the table has no entry for
    as_python: tuple[int, ...]  # statements shown as their Python in a comment
    top: tuple[tuple[int, int, int, int], ...] = ()  # per top-level statement: Python first, last; C++ start, end
    errors: tuple[tuple[int, str], ...] = ()  # statements the translator failed on (shown as Python: a bug to fix)
    error: str = ""  # the file did not parse (or could not be read): why

    def statement_of(self, line: int) -> int:
        return self.span.get(line, line)

    def rows_of(self, line: int) -> list[int]:
        """The indices of the C++ lines that render Python line ``line`` (its statement's)."""
        first = self.statement_of(line)
        return [i for i, c in enumerate(self.lines) if c.py == first]

    def notes_of(self, line: int) -> tuple[str, ...]:
        return self.notes.get(self.statement_of(line), ())

    def keys_of(self, line: int) -> tuple[str, ...]:
        return self.keys.get(self.statement_of(line), ())


def _comments(text: str) -> tuple[dict[int, str], set[int]]:
    comments: dict[int, str] = {}
    code: set[int] = set()
    skip = {tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER, tokenize.COMMENT}
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.string[1:].strip()
        elif tok.type not in skip:
            code.update(range(tok.start[0], tok.end[0] + 1))
    return comments, code


def device_names(facts: Facts) -> set[str]:
    """The kernels and every function and class of the module they use, transitively (they run on the AI core)."""
    seen: set[str] = set()
    todo = list(facts.kernels)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        node = facts.functions.get(name) or facts.classes.get(name)
        if node is None:
            continue
        if isinstance(node, ast.ClassDef):
            todo.extend(f"{name}.{f.name}" for f in node.body if isinstance(f, ast.FunctionDef))
        for call in ast.walk(node):
            named = isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
            if named and (call.func.id in facts.functions or call.func.id in facts.classes):
                todo.append(call.func.id)
    return seen


def _spans(tree: ast.Module) -> dict[int, int]:
    span: dict[int, int] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        body = getattr(node, "body", None)
        compound = isinstance(body, list) and body and isinstance(body[0], ast.stmt)
        last = body[0].lineno - 1 if compound else (node.end_lineno or node.lineno)
        is_doc = isinstance(node, ast.Expr) and isinstance(getattr(node.value, "value", None), str)
        for line in range(node.lineno, last + 1):
            span[line] = line if is_doc else node.lineno
    return span


@lru_cache(maxsize=128)
def translate(text: str) -> CppModule:
    """The C++ of a Python file's text (a file that does not parse gives no lines and says why)."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        return CppModule((), {}, {}, {}, (), (), error=f"line {exc.lineno}: {exc.msg}")
    try:
        facts = gather(tree)
        comments, code = _comments(text)
    except Exception as exc:  # a reading aid never stops the player: a trainee's file may hold anything
        return CppModule((), {}, {}, {}, (), (), error=f"{type(exc).__name__}: {exc}")
    source = text.splitlines()
    writer = Writer(facts, source, device_names(facts), comments, code)
    top = []
    declared: set[str] = set()
    for stmt in tree.body:  # Writer.block, with each top-level statement's extent in both languages
        decorators = getattr(stmt, "decorator_list", None)
        first = decorators[0].lineno if decorators else stmt.lineno
        writer.between(first, 0)
        start = len(writer.out.lines)
        writer.statement(stmt, 0, "", declared)
        writer.cursor = max(writer.cursor, stmt.end_lineno or stmt.lineno)
        top.append((first, stmt.end_lineno or stmt.lineno, start, len(writer.out.lines)))
    writer.between(len(source) + 1, 0)
    out = writer.out
    lines = tuple(CppLine(t.rstrip(), py) for t, py in out.lines)
    while lines and not lines[-1].text:
        lines = lines[:-1]
    return CppModule(
        lines=lines,
        span=_spans(tree),
        notes={k: tuple(v) for k, v in out.notes.items()},
        keys={k: tuple(v) for k, v in out.keys.items()},
        missing=tuple(out.missing),
        as_python=tuple(out.comments_only),
        top=tuple(top),
        errors=tuple(out.errors),
    )


__all__ = ("CppLine", "CppModule", "device_names", "translate")
