"""View-models of the C++ (Ascend C) view: the C++ of the current event's line and its neighbours
(:func:`cpp_view`, beside the code pane in both UIs), and a lesson's whole program (:func:`lesson_program`).

Both are pure functions of source text and the run's recorded source lines; the UIs only draw them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from engine.trace import Kind
from engine.trace.locations import SourceLine

from ..index import source_lines
from ..messages import t as msg
from .infer import gather
from .module import CppModule, translate

ROOT = Path(__file__).resolve().parents[3]  # the project folder: trace file names are relative to it


def _read(path: str) -> str | None:
    file = (ROOT / path).resolve()
    return file.read_text(encoding="utf-8") if file.is_file() and ROOT in file.parents else None


def cpp_view(replay, step: int, context: int = 0, lang: str = "en") -> dict:
    """The C++ of the file of the current event's source line (``context`` > 0: that many C++ lines around the
    ones that render the line), which lines render it (``current``, indices into ``lines``), and the notes of the
    API calls it makes (what CANN does differently, in ``lang``)."""
    out = {
        "title": msg("cpp.title", lang),
        "file": None,
        "line": None,
        "label": "",
        "lines": [],
        "first": 0,
        "current": [],
        "py": [],
        "notes": [],
        "notes_title": msg("cpp.notes", lang),
        "about": msg("cpp.about", lang),
        "note": "",
    }
    src = replay.source_line(step)
    if src is None:
        out["note"] = msg("cpp.no_line", lang)
        return out
    out["file"], out["line"] = src.file, src.line
    out["label"] = msg("cpp.of_file", lang, file=f"{src.file}:{src.line}")
    text = replay.source(src.file)
    if text is None:
        out["note"] = msg("cpp.unavailable", lang)
        return out
    module = translate(text)
    if module.error:
        out["note"] = msg("cpp.parse_error", lang, why=module.error)
        return out
    own = module.rows_of(src.line)
    if not own:
        out["note"] = msg("cpp.no_cpp", lang, line=src.line)
    rows = own or _nearest(module, src.line)
    lo, hi = 0, len(module.lines)
    if context > 0 and rows:
        middle = (rows[0] + rows[-1]) // 2
        lo = max(0, min(middle - context, len(module.lines) - 2 * context - 1))
        hi = min(len(module.lines), lo + 2 * context + 1)
        lo = max(0, min(lo, rows[0]))
        hi = max(hi, min(len(module.lines), rows[-1] + 1))
    out["lines"] = [line.text for line in module.lines[lo:hi]]
    shown = [line.py for line in module.lines[lo:hi]]  # the Python line of each C++ line, on the first of a run
    out["py"] = [p if p is not None and (i == 0 or shown[i - 1] != p) else None for i, p in enumerate(shown)]
    out["first"] = lo
    out["current"] = [r - lo for r in own if lo <= r < hi]
    out["notes"] = [msg(f"cpp.note.{key}", lang) for key in module.notes_of(src.line)]
    return out


def _nearest(module: CppModule, line: int) -> list[int]:
    """Where a line without C++ of its own sits: the C++ of the next statement that has some."""
    for i, c in enumerate(module.lines):
        if c.py is not None and c.py >= line:
            return [i]
    return [len(module.lines) - 1] if module.lines else []


# -- the whole program ----------------------------------------------------------------------------------------
def program_files(solution: Path, sources: Iterable[SourceLine], root: Path = ROOT) -> dict[str, set[int] | None]:
    """The files a lesson's program is made of: its solution (whole: None) and every file the lesson's run executed
    API calls from, with those lines (a lesson's exercise stands for its solution)."""
    solution_rel = solution.resolve().relative_to(root).as_posix()
    files: dict[str, set[int] | None] = {solution_rel: None}
    for src in sources:
        file = src.file
        if file.endswith("/exercise.py") and str(Path(file).parent) == str(Path(solution_rel).parent):
            file = solution_rel
        if files.get(file, set()) is not None:
            files.setdefault(file, set()).add(src.line)
    return files


def _definitions(tree: ast.Module) -> dict[str, int]:
    """Module-level name -> the index of the statement that defines it (a function, a class, a constant)."""
    names = {}
    for i, stmt in enumerate(tree.body):
        if isinstance(stmt, ast.FunctionDef | ast.ClassDef):
            names[stmt.name] = i
        elif isinstance(stmt, ast.Assign):
            names.update({n.id: i for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)})
    return names


def _imported(tree: ast.Module, file: str) -> dict[str, tuple[str, str]]:
    """Local name -> (the file it comes from, its name there), for ``from X import Y`` (relative ones too)."""
    package = Path(file).parent
    out = {}
    for stmt in ast.walk(tree):  # imports inside functions too
        if isinstance(stmt, ast.ImportFrom) and stmt.module:
            base = package.joinpath(*[".."] * (stmt.level - 1)) if stmt.level else Path()
            origin = (base / Path(*stmt.module.split("."))).as_posix() + ".py"
            for alias in stmt.names:
                out[alias.asname or alias.name] = (str(Path(origin)), alias.name)
    return {k: (Path(f).as_posix().replace("/./", "/"), n) for k, (f, n) in out.items()}


def _used(stmt: ast.stmt):
    """The names a statement uses, its decorators aside (a kernel's ``fast_path=`` is the simulator's)."""
    skip = {id(n) for d in getattr(stmt, "decorator_list", ()) for n in ast.walk(d)}
    return (n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and id(n) not in skip)


def _kept(files: dict[str, set[int] | None], texts: dict[str, str], modules: dict[str, CppModule], kernels) -> dict:
    """Per file, the top-level statements to show: all of the solution's; elsewhere those holding a traced line, the
    kernels the run launched and the imports; then, transitively, the definitions they use, in their file or in
    another file of the program."""
    trees = {f: ast.parse(t) for f, t in texts.items()}
    defs = {f: _definitions(tree) for f, tree in trees.items()}
    imports = {f: _imported(tree, f) for f, tree in trees.items()}
    keep: dict[str, set[int]] = {}
    for f, tree in trees.items():
        lines = files[f]
        if lines is None:
            keep[f] = set(range(len(tree.body)))
            continue
        top = modules[f].top
        keep[f] = {i for i, (a, b, _s, _e) in enumerate(top) if any(a <= x <= b for x in lines)}
        keep[f] |= {i for i, stmt in enumerate(tree.body) if isinstance(stmt, ast.Import | ast.ImportFrom)}
        keep[f] |= {defs[f][k] for k in kernels if k in defs[f]}
    for f, tree in trees.items():
        keep[f] -= {i for i, stmt in enumerate(tree.body) if _lesson_only(stmt)}
    todo = [(f, i) for f, kept in keep.items() for i in kept]
    while todo:
        f, i = todo.pop()
        for name in _used(trees[f].body[i]):
            where = (f, defs[f].get(name))
            if where[1] is None and name in imports[f] and imports[f][name][0] in trees:
                other, original = imports[f][name]
                where = (other, defs[other].get(original))
            if where[1] is not None and where[1] not in keep[where[0]]:
                keep[where[0]].add(where[1])
                todo.append(where)
    return {f: sorted(k) for f, k in keep.items()}


LESSON_ONLY = ("PREDICTIONS",)  # a lesson module's answers to its questions: not part of the program


def _lesson_only(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id in LESSON_ONLY for t in stmt.targets)


def launched(trace) -> set[str]:
    """The names of the kernels a run launched (its kernel rows are named by them)."""
    names = trace.name[trace.kind == Kind.KERNEL]
    return {trace.names[int(i)] for i in np.unique(names)}


def lesson_program(number: int, solution: Path, trace, lang: str = "en") -> dict:
    """Lesson ``number``'s whole program in C++ from its run's ``trace``: per file (kernels first), the C++ of the
    statements the program uses (where the run made API calls, the kernels it launched, and what they use), and the
    notes of every API call in them."""
    parts, notes = [], []
    files = program_files(solution, source_lines(trace))
    texts = {f: t for f in files if (t := _read(f)) is not None and not translate(t).error}
    modules = {f: translate(t) for f, t in texts.items()}
    for file, kept in _kept(files, texts, modules, launched(trace)).items():
        text, module = texts[file], modules[file]
        rows: list[str] = []
        before = None  # the last Python line of the statement shown before
        for i in kept:
            first, last, start, end = module.top[i]
            chunk = [c.text for c in module.lines[start:end]]
            if rows and rows[-1] and before is not None and first - before > 1:  # a gap in the Python: one here
                rows.append("")
            rows.extend(chunk)
            before = last
            for line in range(first, last + 1):
                for key in module.notes.get(line, ()):
                    if key not in notes:
                        notes.append(key)
        has_kernel = bool(gather(ast.parse(text)).kernels)
        label = msg("cpp.whole_file", lang, file=file)
        parts.append({"file": file, "label": label, "lines": rows, "kernel": has_kernel})
    parts.sort(key=lambda p: not p["kernel"])
    return {
        "title": msg("cpp.whole_title", lang, n=number),
        "intro": msg("cpp.whole_intro", lang),
        "about": msg("cpp.about", lang),
        "parts": parts,
        "notes_title": msg("cpp.notes", lang),
        "notes": [msg(f"cpp.note.{key}", lang) for key in notes],
    }


def program_text(program: dict) -> str:
    """A whole program as plain text (the CLI and the terminal UI): a comment header per file, the notes last."""
    out = [f"// {program['title']}", f"// {program['intro']}", f"// {program['about']}", ""]
    for part in program["parts"]:
        out += [f"// ===== {part['label']} =====", *part["lines"], ""]
    if program["notes"]:
        out.append(f"// {program['notes_title']}:")
        out += [f"//  - {note}" for note in program["notes"]]
    return "\n".join(out).rstrip() + "\n"


__all__ = ("cpp_view", "lesson_program", "program_files", "program_text")
