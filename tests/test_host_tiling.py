"""Tiling is the host's, as in Ascend C: no shipped lesson kernel computes its own tiling on the device.

A lesson's kernel reads the tiling the host's tiling function filled (``asc.get_tiling_data``, Ascend C's
GET_TILING_DATA). This test reads every lesson file (the stub, the reference, the scenario and the drive) and
fails on any use of the seed's tiling functions (``engine.aicore.tiling``: ``balanced_tiling``,
``get_block_range``, ``compute_optimal_tiling``), and for the lessons built on TilingData it checks that every
``@asc.jit`` kernel reads its tiling with ``get_tiling_data``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

LESSONS = Path(__file__).resolve().parent.parent / "lessons"
TILING_FUNCTIONS = frozenset(("balanced_tiling", "get_block_range", "compute_optimal_tiling"))
ON_TILING_DATA = (
    "l02_spmd_partition",
    "l03_copyin_compute_copyout",
    "l04_tiling_ub",
    "l05_double_buffer",
    "l10_debugging",
    "l11_mixed_matmul_leaky_relu",
    "l12_operator_project",
    "l13_unaligned_data",
)
FOLDERS = sorted(p for p in LESSONS.glob("l[0-9][0-9]_*") if p.is_dir())


def device_tiling(source: str) -> list[str]:
    """Where ``source`` uses the seed's tiling functions (an import of engine.aicore.tiling, or a call)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("aicore.tiling"):
            found.append(f"line {node.lineno}: from {node.module} import ...")
        elif isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name in TILING_FUNCTIONS:
                found.append(f"line {node.lineno}: {name}(...)")
    return found


def kernels_without_tiling_data(source: str) -> list[str]:
    """The ``@asc.jit`` functions of ``source`` that never call ``get_tiling_data``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef):
            continue
        if not any("jit" in ast.unparse(d) for d in node.decorator_list):
            continue
        calls = {getattr(c.func, "attr", None) for c in ast.walk(node) if isinstance(c, ast.Call)}
        if "get_tiling_data" not in calls:
            out.append(node.name)
    return out


@pytest.mark.parametrize("folder", [pytest.param(f, id=f.name) for f in FOLDERS])
def test_no_lesson_kernel_tiles_on_the_device(folder):
    used = {f.name: device_tiling(f.read_text(encoding="utf-8")) for f in sorted(folder.glob("*.py"))}
    assert {name: where for name, where in used.items() if where} == {}


@pytest.mark.parametrize("name", ON_TILING_DATA)
def test_every_kernel_of_a_tiling_data_lesson_reads_the_hosts_tiling(name):
    for file in ("exercise.py", "solution.py", "scenario.py"):
        source = (LESSONS / name / file).read_text(encoding="utf-8")
        assert kernels_without_tiling_data(source) == [], (name, file)


def test_the_scan_finds_a_kernel_that_tiles_on_the_device():
    kernel = (
        "from engine.aicore.tiling import balanced_tiling, get_block_range\n"
        "@asc.jit\n"
        "def k(x, total):\n"
        "    t = balanced_tiling(total, asc.get_block_num())\n"
        "    start, end = get_block_range(t, asc.get_block_idx())\n"
    )
    assert device_tiling(kernel) == [
        "line 1: from engine.aicore.tiling import ...",
        "line 4: balanced_tiling(...)",
        "line 5: get_block_range(...)",
    ]
    assert kernels_without_tiling_data(kernel) == ["k"]
