"""The C++ (Ascend C) view's mapping table covers every API call the lessons and shipped kernels make, every
export of engine.asc and every pyACL function; each entry binds to the real Python signature; and a table of
Python lines translates exactly to the C++ a trainee writes on hardware.

The coverage test finds API calls by reading the code (ast), independently of the translator: a call rooted at
``acl`` (pyACL), at the module ``engine.asc`` is imported as, of a name imported from one of the table's API
modules, or of a method of an API class (TQue.enque ...). A name another branch adds to the engine or a lesson
makes this test fail until the table has a line for it.
"""

from __future__ import annotations

import ast
import inspect
import re
from enum import Enum
from pathlib import Path

import pytest

from app.present.cpp.expr import PLACEHOLDER
from app.present.cpp.forms import FORMS
from app.present.cpp.infer import COMMON_METHODS
from app.present.cpp.module import translate
from app.present.cpp.table import (
    ACL,
    API_MODULES,
    CLASSES,
    NAMES,
    SOURCES,
    TABLE,
    TYPES_ONLY,
    by_key,
    parameters,
    python_object,
    source_of,
)
from app.present.messages import t as msg
from engine import asc

ROOT = Path(__file__).resolve().parent.parent
LESSON_FILES = ("exercise.py", "solution.py", "scenario.py", "drive.py")


def program_files() -> list[Path]:
    """Every file of lesson code (exercise, solution, scenario, drive; the shared host kit) and every shipped kernel."""
    files = [p for lesson in sorted((ROOT / "lessons").glob("l[0-9]*_*")) for p in sorted(lesson.glob("*.py"))]
    files = [p for p in files if p.name in LESSON_FILES]
    return [*files, ROOT / "lessons" / "hostkit.py", *sorted((ROOT / "engine" / "kernels").glob("*.py"))]


def _chain(node: ast.expr) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    return None


def _public_methods(cls) -> set[str]:
    own = {n for klass in cls.__mro__ if klass is not object for n, v in vars(klass).items()}
    return {n for n in own if not n.startswith("_") and callable(getattr(cls, n, None))} | (
        {"__getitem__"} if hasattr(cls, "__getitem__") else set()
    )


def api_calls(path: Path) -> set[str]:
    """The API calls a file makes, as table keys (or, for a method on an object of unknown class, every key
    ``Class.method`` could be, joined by ``|``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    asc_names, imported = set(), {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                origin = f"{node.module}.{alias.name}"
                if origin == "engine.asc":
                    asc_names.add(alias.asname or alias.name)
                imported[alias.asname or alias.name] = origin
    methods = {cls: _public_methods(obj) for cls, obj in CLASSES.items()}
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        parts = _chain(node.func)
        if parts and "acl" in parts[:-1]:
            found.add(".".join(parts[parts.index("acl") :]))
            continue
        if parts and parts[0] in asc_names and len(parts) == 2:
            found.add(f"asc.{parts[1]}")
            continue
        if parts and len(parts) == 1 and imported.get(parts[0], "").rpartition(".")[0] in API_MODULES:
            found.add(imported[parts[0]])
            continue
        if isinstance(node.func, ast.Attribute):
            name = node.func.attr
            owners = [cls for cls, names in methods.items() if name in names]
            if owners and name not in COMMON_METHODS:
                found.add("|".join(f"{cls}.{name}" for cls in owners))
    return found


@pytest.mark.parametrize("path", program_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_api_call_of_the_lessons_and_kernels_has_a_mapping(path):
    keys = by_key()
    missing = sorted(k for k in api_calls(path) if not any(option in keys for option in k.split("|")))
    assert not missing, f"{path.relative_to(ROOT)} calls {missing}: add a line for each to app/present/cpp/table.py"
    module = translate(path.read_text(encoding="utf-8"))  # and the translator itself found none it could not map
    assert not module.error and module.missing == (), module.missing
    assert module.errors == (), module.errors  # every statement rendered without the translator failing


def test_the_discovery_finds_what_the_lessons_call():
    """The finder above is not blind: it sees the calls a lesson is known to make."""
    found = api_calls(ROOT / "lessons" / "l03_copyin_compute_copyout" / "solution.py")
    for key in ("asc.data_copy", "asc.muls", "asc.get_tiling_data", "TPipe.init_buffer"):
        assert key in found
    assert any("TQue.alloc_tensor" in k for k in found) and any("TQue.enque" in k for k in found)
    host = api_calls(ROOT / "lessons" / "hostkit.py")
    assert {"acl.rt.malloc", "acl.rt.memcpy_async", "acl.rt.launch_kernel", "acl.util.ptr_to_numpy"} <= host


def test_every_export_of_asc_and_every_pyacl_function_has_an_entry():
    keys = set(by_key())
    for name in asc.__all__:
        value = getattr(asc, name)
        key = f"asc.{name}"
        if isinstance(value, type) and issubclass(value, Enum):
            assert f"{key}." in NAMES, f"{key}: its members need a form in NAMES"
            for member in value:
                assert NAMES[f"{key}."].format(member.name), member
        elif isinstance(value, asc.DType):
            assert key in NAMES, f"{key}: a dtype needs its C++ type in NAMES"
        else:
            assert key in keys or key in TYPES_ONLY, f"{key} has no line in app/present/cpp/table.py"
    for prefix, cls in ACL.items():
        for name in _public_methods(cls):
            assert f"{prefix}.{name}" in keys, f"{prefix}.{name} (pyACL) has no line in the table"
    for prefix, cls in CLASSES.items():
        for name in _public_methods(cls):
            key = f"{prefix}.{name}"
            if isinstance(inspect.getattr_static(cls, name, None), property):
                continue
            assert key in keys, f"{key} has no line in the table"


def test_every_entry_binds_to_the_real_python_signature():
    for entry in TABLE:
        python_object(entry.key)  # the API exists
        names = {p.name for p in parameters(entry.key)}
        for template in (entry.cpp, entry.result, entry.pre):
            for match in PLACEHOLDER.finditer(template):
                name = match.group(1)
                if name.startswith("@"):
                    assert name in {"@recv", "@T", "@out", "@name", "@fields", "@at"}, (entry.key, name)
                    continue
                assert name.split(".")[0] in names, f"{entry.key}: {{{name}}} is not a parameter of {sorted(names)}"
        assert not entry.when or entry.when in FORMS, entry
        assert source_of(entry) in SOURCES, entry
        if entry.note:
            en, zh = msg(f"cpp.note.{entry.note}", "en"), msg(f"cpp.note.{entry.note}", "zh")
            assert en and zh and en != zh
    for key, forms in by_key().items():
        assert not forms[-1].when, f"{key}: its last form must have no condition (the default)"


# -- exact translations ------------------------------------------------------------------------------------------
KERNEL = """
from engine import asc

TILE = 4096


@asc.jit(kernel_type=asc.KernelType.AIV_ONLY)
def scale(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, a: float):
    x_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + asc.get_block_idx() * n, n)
    pipe = asc.TPipe()
    in_q, out_q = asc.TQue(asc.TPosition.VECIN, 2), asc.TQue(asc.TPosition.VECOUT, 2)
    pipe.init_buffer(que=in_q, num=2, len=TILE * asc.half.sizeof())
    for offset in range(0, n, TILE):
        count = min(TILE, n - offset)
        x_local = in_q.alloc_tensor(asc.half)
        asc.data_copy(x_local, x_gm[offset:], count)
        in_q.enque(x_local)
        x_local = in_q.deque()
        y_local = out_q.alloc_tensor(asc.half)
        asc.muls(y_local, x_local, a, count)
        asc.data_copy_pad(x_local, x_gm[offset:], count)
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
        in_q.free_tensor(x_local)
    tiles = -(-n // TILE)
"""
HOST = """
from engine import asc


def host(acl, src, nbytes, stream):
    ptr, ret = acl.rt.malloc(nbytes, ACL_MEM_MALLOC_HUGE_FIRST)
    ret = acl.rt.memcpy_async(ptr, nbytes, src, nbytes, ACL_MEMCPY_HOST_TO_DEVICE, stream)
    ret = acl.rt.launch_kernel(scale, 8, stream, ptr, nbytes)
    acl.rt.launch_kernel(scale, 8, stream, ptr, nbytes)
    other, ret = acl.rt.create_stream()
    event, ret = acl.rt.create_event()
    ret = acl.rt.record_event(event, other)
    ret = acl.rt.stream_wait_event(stream, event)
    ret = acl.rt.synchronize_stream(stream)
    acl.rt.free(ptr)
    ret = acl.finalize()
    asc.no_such_instruction(ptr)
"""
CASES = (  # (source, the Python line, its C++ lines)
    (KERNEL, "@asc.jit(", ["KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);"]),
    (
        KERNEL,
        "def scale(",
        ['extern "C" __global__ __aicore__ void scale(GM_ADDR x, GM_ADDR z, int32_t n, float a)', "{"],
    ),
    (KERNEL, "TILE = 4096", ["constexpr int32_t TILE = 4096;"]),
    (KERNEL, "x_gm = asc.GlobalTensor()", ["GlobalTensor<half> xGm;"]),
    (KERNEL, "x_gm.set_global_buffer", ["xGm.SetGlobalBuffer((__gm__ half *)x + GetBlockIdx() * n, n);"]),
    (KERNEL, "pipe = asc.TPipe()", ["TPipe pipe;"]),
    (KERNEL, "in_q, out_q =", ["TQue<TPosition::VECIN, 2> inQ; TQue<TPosition::VECOUT, 2> outQ;"]),
    (KERNEL, "pipe.init_buffer", ["pipe.InitBuffer(inQ, 2, TILE * sizeof(half));"]),
    (KERNEL, "for offset in", ["for (int32_t offset = 0; offset < n; offset += TILE) {"]),
    (KERNEL, "count = min(", ["auto count = std::min(TILE, n - offset);"]),
    (KERNEL, "x_local = in_q.alloc_tensor", ["LocalTensor<half> xLocal = inQ.AllocTensor<half>();"]),
    (KERNEL, "asc.data_copy(x_local", ["DataCopy(xLocal, xGm[offset], count);"]),
    (KERNEL, "in_q.enque(", ["inQ.EnQue(xLocal);"]),
    (KERNEL, "x_local = in_q.deque()", ["xLocal = inQ.DeQue<half>();"]),
    (KERNEL, "asc.muls(", ["Muls(yLocal, xLocal, (half)a, count);"]),
    (
        KERNEL,
        "asc.data_copy_pad(",
        [
            "DataCopyPad(xLocal, xGm[offset], DataCopyExtParams{1, static_cast<uint32_t>(count * sizeof(half)), 0, 0, "
            "0}, DataCopyPadExtParams<half>{false, 0, 0, 0});"
        ],
    ),
    (KERNEL, "asc.set_flag(", ["SetFlag<HardEvent::MTE2_V>(EVENT_ID0);"]),
    (KERNEL, "asc.wait_flag(", ["WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);"]),
    (KERNEL, "in_q.free_tensor(", ["inQ.FreeTensor(xLocal);"]),
    (KERNEL, "tiles = -(-n // TILE)", ["auto tiles = (n + TILE - 1) / TILE;"]),
    (HOST, "def host(", ["void Host(auto src, auto nbytes, auto stream)", "{"]),
    (
        HOST,
        "acl.rt.malloc(",
        ["void *ptr = nullptr;", "aclError ret = aclrtMalloc(&ptr, nbytes, ACL_MEM_MALLOC_HUGE_FIRST);"],
    ),
    (
        HOST,
        "acl.rt.memcpy_async(",
        ["ret = aclrtMemcpyAsync(ptr, nbytes, src, nbytes, ACL_MEMCPY_HOST_TO_DEVICE, stream);"],
    ),
    (
        HOST,
        "ret = acl.rt.launch_kernel(",
        ["scale<<<8, nullptr, stream>>>(ptr, nbytes);", "ret = aclrtGetLastError(ACL_RT_THREAD_LEVEL);"],
    ),
    (HOST, "    acl.rt.launch_kernel(", ["scale<<<8, nullptr, stream>>>(ptr, nbytes);"]),
    (HOST, "acl.rt.create_stream()", ["aclrtStream other = nullptr;", "ret = aclrtCreateStream(&other);"]),
    (HOST, "acl.rt.create_event()", ["aclrtEvent event = nullptr;", "ret = aclrtCreateEvent(&event);"]),
    (HOST, "acl.rt.record_event(", ["ret = aclrtRecordEvent(event, other);"]),
    (HOST, "acl.rt.stream_wait_event(", ["ret = aclrtStreamWaitEvent(stream, event);"]),
    (HOST, "acl.rt.synchronize_stream(", ["ret = aclrtSynchronizeStream(stream);"]),
    (HOST, "acl.rt.free(", ["aclrtFree(ptr);"]),
    (HOST, "acl.finalize()", ["ret = aclFinalize();"]),
    (HOST, "asc.no_such_instruction(", ["// no C++ mapping for asc.no_such_instruction: asc.no_such_instruction(ptr)"]),
)


def _line_of(source: str, start: str) -> int:
    for i, text in enumerate(source.splitlines(), 1):
        if text.startswith(start) or (start.strip() == start and start in text):
            return i
    raise AssertionError(f"no line starts with {start!r}")


@pytest.mark.parametrize(("source", "start", "expected"), CASES, ids=[c[1].strip() for c in CASES])
def test_a_python_line_becomes_its_cpp(source, start, expected):
    module = translate(source)
    line = _line_of(source, start)
    assert [module.lines[i].text.strip() for i in module.rows_of(line)] == expected


def test_an_unknown_api_call_is_a_comment_and_reported_missing():
    module = translate(HOST)
    assert module.missing == ((_line_of(HOST, "asc.no_such_instruction("), "asc.no_such_instruction"),)


def test_dtype_follows_copies_across_helper_functions():
    """A kernel's GM tensor learns its element type from the local tensor a helper copies it into."""
    module = translate((ROOT / "lessons" / "l03_copyin_compute_copyout" / "solution.py").read_text(encoding="utf-8"))
    text = "\n".join(c.text for c in module.lines)
    assert "GlobalTensor<half> xGm, yGm;" in text and "(__gm__ half *)x + start" in text
    assert re.search(r"__aicore__ inline void CopyIn\(GlobalTensor<half> xGm, TQue<TPosition::VECIN, 1> &inQ", text)


def test_matrix_copies_show_cann_params_structs():
    module = translate((ROOT / "lessons" / "l06_cube_matmul" / "solution.py").read_text(encoding="utf-8"))
    text = "\n".join(c.text for c in module.lines)
    assert "DataCopy(l1, gm, Nd2NzParams{1, rows, cols, 0, width, Up16(rows), 1, 0});" in text  # ND -> NZ
    assert "LoadData(aL0[i * k1 * F * F], aL1[i * F * F], LoadData2DParams{0, k1, m1, 0, 0, false, 0});" in text
    assert "LoadData(bL0[i * n1 * F * F], bL1[i * F * F], LoadData2DParams{0, n1, k1, 0, 0, true, 0});" in text
    assert "Mmad(acc, aL0, bL0, MmadParams{m, cols, kk, 0, false, first});" in text
    assert (
        "Fixpipe(cGm, acc, FixpipeParamsV220{cols, rows, Up16(rows), n, false, QuantMode_t::NoQuant, 0, 1, 0, 0, 0});"
        in text
    )
    kernel = translate((ROOT / "engine" / "kernels" / "matmul.py").read_text(encoding="utf-8"))
    text = "\n".join(c.text for c in kernel.lines)
    assert "return Nd2NzParams{1, rows, cols, 0, width, Up(rows, FRACTAL), 1, 0};" in text
    assert ".l1H = 1, .l1W = height, .channelSize = width, .kExtension = cols, .mExtension = rows" in text


@pytest.mark.slow
def test_any_python_translates_without_the_translator_failing():
    """A trainee's file may hold anything: every module of the project (a broad sample of Python) renders, each
    statement as C++ or as its Python in a comment, never as a failure of the translator."""
    failed = {}
    for package in ("engine", "app", "lessons", "tests"):
        for path in sorted((ROOT / package).rglob("*.py")):
            module = translate(path.read_text(encoding="utf-8"))
            if module.errors or module.error:
                failed[str(path.relative_to(ROOT))] = module.errors[:3] or module.error
    assert not failed, failed
