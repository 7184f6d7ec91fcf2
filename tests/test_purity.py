"""The engine imports numpy and the standard library only, holds no module-level mutable state, and no source
module is over 500 lines, and no two modules import each other."""

import ast
import subprocess
import sys
from pathlib import Path

ENGINE = Path(__file__).resolve().parent.parent / "engine"


def test_import_engine_loads_no_ui_module():
    code = (
        "import sys, engine, engine.scenarios.runner, engine.trace.chrome, engine.host.stream_manager\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in {'dash', 'plotly', 'textual', 'rich', 'click'})\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_engine_imports_only_numpy_and_stdlib():
    allowed = set(sys.stdlib_module_names) | {"numpy", "engine"}
    for path in ENGINE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                roots = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                roots = [node.module.split(".")[0]]
            else:
                continue
            for root in roots:
                assert root in allowed, f"{path.name} imports {root}"


def test_no_module_level_mutable_state():
    """Module-level assignments are constants: no lists, dicts or sets that code could mutate."""
    for path in ENGINE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, ast.Assign | ast.AnnAssign):
                value = node.value
                assert not isinstance(
                    value, ast.List | ast.Dict | ast.Set | ast.ListComp | ast.DictComp | ast.SetComp
                ), f"{path.name}:{node.lineno} module-level mutable container"


MAX_MODULE_LINES = 500


def test_no_source_module_is_over_500_lines():
    """A module a newcomer reads in one sitting (tests are exempt: a test file is a list of cases)."""
    root = ENGINE.parent
    long = {
        str(p.relative_to(root)): n
        for package in ("engine", "app", "lessons")
        for p in (root / package).rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"over {MAX_MODULE_LINES} lines: {long}"


def test_no_import_cycle_among_the_projects_modules():
    """Every import that runs (module level or deferred in a function; ``TYPE_CHECKING`` blocks only name
    types) goes one way: no two modules of engine/, app/ or lessons/ import each other, directly or round a
    loop."""
    from import_graph import cycles, graph

    g = graph()
    assert len(g) > 200 and sum(len(v) for v in g.values()) > 500  # the graph was read, not empty
    assert cycles(g) == []


def test_the_cycle_finder_finds_a_cycle():
    from import_graph import cycles

    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
