"""View-models of the C++ (Ascend C) view: the C++ of the current event's line and its neighbours
(:func:`cpp_view`, beside the code pane in both UIs), and a lesson's whole program (:func:`lesson_program`).

Both are pure functions of source text and the run's recorded source lines; the UIs only draw them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from engine.trace.locations import SourceLine

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


def _kept(text: str, lines: set[int] | None, module: CppModule) -> list[int]:
    """The top-level statements to show: all (``lines`` None), else those holding a traced line, the imports, and
    the module-level definitions and constants they use (transitively)."""
    if lines is None:
        return [i for i, stmt in enumerate(ast.parse(text).body) if not _lesson_only(stmt)]
    tree = ast.parse(text)
    names = {}
    for i, stmt in enumerate(tree.body):
        if isinstance(stmt, ast.FunctionDef | ast.ClassDef):
            names[stmt.name] = i
        elif isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                for n in ast.walk(target):
                    if isinstance(n, ast.Name):
                        names[n.id] = i
    keep = {i for i, (first, last, _a, _b) in enumerate(module.top) if any(first <= x <= last for x in lines)}
    keep -= {i for i, stmt in enumerate(tree.body) if _lesson_only(stmt)}
    keep |= {i for i, stmt in enumerate(tree.body) if isinstance(stmt, ast.Import | ast.ImportFrom)}
    todo = list(keep)
    while todo:
        stmt = tree.body[todo.pop()]
        for n in ast.walk(stmt):
            used = n.id if isinstance(n, ast.Name) else None
            j = names.get(used) if used else None
            if j is not None and j not in keep:
                keep.add(j)
                todo.append(j)
    return sorted(keep)


LESSON_ONLY = ("PREDICTIONS",)  # a lesson module's answers to its questions: not part of the program


def _lesson_only(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id in LESSON_ONLY for t in stmt.targets)


def lesson_program(number: int, solution: Path, sources: Iterable[SourceLine], lang: str = "en") -> dict:
    """Lesson ``number``'s whole program in C++: per file (kernels first), the C++ of the statements the program
    uses, and the notes of every API call in them."""
    parts, notes = [], []
    for file, lines in program_files(solution, sources).items():
        text = _read(file)
        if text is None:
            continue
        module = translate(text)
        if module.error:
            continue
        rows: list[str] = []
        for i in _kept(text, lines, module):
            first, last, start, end = module.top[i]
            chunk = [c.text for c in module.lines[start:end]]
            if rows and chunk and rows[-1] and chunk[0] and not chunk[0].startswith(("#include", "using")):
                rows.append("")
            rows.extend(chunk)
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
