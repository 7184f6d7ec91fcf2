"""The C++ (Ascend C) view as the UIs get it: the C++ of the current event's line in a lesson's run (and in every
frame of a window), a lesson's whole program, ``ascendsim lesson show N --cpp``, the terminal UI's ``c`` and ``C``
keys, and the web's frames window and whole-program tab (as plain callbacks)."""

from __future__ import annotations

import pytest
from dash import html

from app.cli import main
from app.present import Replay
from app.present.cpp.view import cpp_view, lesson_program, program_text
from app.present.frames import CODE_CONTEXT, frame, frames
from app.present.messages import t as msg
from app.web import render
from app.web.markup import to_html
from app.web.pages import Callbacks
from app.web.runs import Runs
from engine import Simulation
from engine.trace.locations import CoreRef
from lessons.catalog import get
from tests.tui_helpers import drive, keybar_enabled, lesson, line, make_app, shown

SOLUTION3 = "lessons/l03_copyin_compute_copyout/solution.py"


@pytest.fixture(scope="module")
def lesson3():
    sim = Simulation()
    get(3).module("scenario").scenario(sim)
    return Replay(sim.finish())


def _step_at(replay: Replay, file: str, text: str) -> int:
    """The first step whose source line is the line of ``file`` holding ``text``."""
    lines = replay.source(file).splitlines()
    for step in range(len(replay)):
        src = replay.source_line(step)
        if src is not None and src.file == file and text in lines[src.line - 1]:
            return step
    raise AssertionError(f"no event comes from {file}: {text}")


def _current(view: dict) -> list[str]:
    return [view["lines"][i].strip() for i in view["current"]]


def test_the_current_line_of_a_lesson_run_shows_its_cpp(lesson3):
    step = _step_at(lesson3, SOLUTION3, "asc.data_copy(x_local, x_gm, count)")
    view = cpp_view(lesson3, step, context=4, lang="en")
    assert _current(view) == ["DataCopy(xLocal, xGm, count);"]
    assert view["title"] == "C++ (Ascend C)" and view["file"] == SOLUTION3 and len(view["lines"]) == 9
    assert "inQ.AllocTensor<half>()" in "\n".join(view["lines"])  # its neighbours: CopyIn around it
    step = _step_at(lesson3, SOLUTION3, "in_q.enque(x_local)")
    assert _current(cpp_view(lesson3, step, 4, "en")) == ["inQ.EnQue(xLocal);"]
    step = _step_at(lesson3, "lessons/hostkit.py", "acl.rt.launch_kernel(")
    launch = cpp_view(lesson3, step, 4, "zh")
    assert _current(launch) == [
        "kernel<<<blockDim, nullptr, stream>>>(gm..., args...);",
        'Check(aclrtGetLastError(ACL_RT_THREAD_LEVEL), "acl.rt.launch_kernel");',
    ]
    assert launch["title"] == "C++（Ascend C）" and any("<<<blockDim, l2ctrl, stream>>>" in n for n in launch["notes"])
    assert any("内核调用符" in n for n in launch["notes"])  # the note in the UI's language


def test_an_event_without_a_line_has_no_cpp(lesson3):
    step = next(s for s in range(len(lesson3)) if lesson3.source_line(s) is None)
    view = cpp_view(lesson3, step, 4, "en")
    assert view["lines"] == [] and view["note"] == msg("cpp.no_line", "en")


def test_every_frame_carries_the_cpp_view_of_its_step(lesson3):
    w = frames(lesson3, 0, len(lesson3), CoreRef("AIV", 0), "en")
    for step in range(0, len(lesson3), 7):
        f = frame(w, step)
        view = cpp_view(lesson3, step, CODE_CONTEXT, "en")
        notes = {"title": view.pop("notes_title"), "notes": view.pop("notes"), "src": view["file"] is not None}
        assert f["cpp"] == view and f["cppnotes"] == notes, step


def test_a_lesson_s_whole_program_puts_the_kernel_first_and_the_host_after(lesson3):
    program = lesson_program(3, get(3).solution_file, lesson3.trace, "en")
    files = [p["file"] for p in program["parts"]]
    assert files == [SOLUTION3, "lessons/hostkit.py"]
    kernel, host = ("\n".join(p["lines"]) for p in program["parts"])
    assert (
        'extern "C" __global__ __aicore__ void relu_axpb(GM_ADDR x, GM_ADDR y, GM_ADDR tiling)' in kernel
        and "GET_TILING_DATA(t, tiling);" in kernel
    )
    assert "KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);" in kernel and "PREDICTIONS" not in kernel
    assert "void *p = nullptr;\n        ret = aclrtMalloc(&p, size, ACL_MEM_MALLOC_HUGE_FIRST);" in host
    assert "Uniform(" not in host and "KernelUs(" not in host  # the host kit's functions the run never used
    assert program["notes"] and all(n == n.strip() for n in program["notes"])
    text = program_text(lesson_program(3, get(3).solution_file, lesson3.trace, "zh"))
    assert text.startswith("// 第 3 课：完整程序的 C++（Ascend C）") and "与 CANN 的差异" in text


def test_a_lesson_run_on_its_exercise_shows_the_solution():
    """Lesson 10 plays its buggy exercise; its whole program is the fixed solution."""
    sim = Simulation()
    get(10).module("scenario").scenario(sim)
    replay = Replay(sim.finish())
    program = lesson_program(10, get(10).solution_file, replay.trace, "en")
    assert [p["file"] for p in program["parts"]] == ["lessons/l10_debugging/solution.py"]
    text = "\n".join(program["parts"][0]["lines"])
    assert "outQ.EnQue(yLocal);" in text and "aclrtStreamWaitEvent(work, uploaded)" in text


def test_lesson_show_cpp_prints_the_whole_program(capsys):
    assert main(["lesson", "show", "1", "--cpp"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("// Lesson 1: the whole program in C++ (Ascend C)")
    assert "add_kernel<<<BLOCKS, nullptr, stream>>>(args..., n, TILE, BUFFER_NUM);" in out
    assert "template <typename T>\n__global__ __aicore__ void add_kernel(" in out  # the kernel it launches (any dtype)
    assert main(["lesson", "show", "1", "--cpp", "--json"]) == 2
    assert "--cpp and --json" in capsys.readouterr().err


# -- the terminal UI ----------------------------------------------------------------------------------------------
def test_c_toggles_the_code_pane_to_cpp_and_C_opens_the_whole_program():
    walk = lesson(3)
    step = _step_at(walk.replay, SOLUTION3, "asc.data_copy(x_local, x_gm, count)")
    app = make_app(walk, steps=step - walk.start)

    async def script(pilot):
        assert app.step == step
        assert "asc.data_copy(x_local, x_gm, count)" in shown(app, "code")
        assert "c C++" in line(app, "keybar") and keybar_enabled(app)["cpp"] is True
        await pilot.press("c")
        code = shown(app, "code")
        assert "DataCopy(xLocal, xGm, count);" in code and "asc.data_copy" not in code
        assert app.query_one("#code-pane").border_title == "C++ (Ascend C)"
        await pilot.press("right")  # the C++ follows the step
        assert app.show_cpp and "C++" in app.query_one("#code-pane").border_title
        await pilot.press("l")
        assert app.query_one("#code-pane").border_title == "C++（Ascend C）"
        await pilot.press("l", "c")
        assert "asc.data_copy" in shown(app, "code") or "x_local" in shown(app, "code")
        await pilot.press("question_mark")
        help_text = str(app.screen.query_one("#help-text").render())
        assert msg("cpp.toggle", "en") in help_text and msg("cpp.whole_key", "en") in help_text
        await pilot.press("escape", "C")
        body = str(app.screen.query_one("#check-text").render())
        assert "__global__ __aicore__ void relu_axpb" in body and "aclrtMemcpyAsync(" in body

    drive(app, script, size=(160, 48))


def test_a_scenario_has_no_whole_program_to_open():
    from tests.tui_helpers import matmul

    app = make_app(matmul(), lesson=None)

    async def script(pilot):
        assert app.check_action("program", ()) is None
        assert app.check_action("cpp", ()) is True

    drive(app, script)


# -- the web (its builders and callbacks as plain functions) -------------------------------------------------------
@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return Runs(tmp_path_factory.mktemp("runs"))


def test_the_web_window_sends_the_cpp_of_each_step(runs):
    loaded = runs.load({"lesson": 3})
    w = render.window(loaded, 0, len(loaded.replay), "AIV 0", "en", ())
    step = _step_at(loaded.replay, SOLUTION3, "asc.data_copy(x_local, x_gm, count)")
    html_text = w["parts"]["cpp"][w["index"]["cpp"][step]]
    assert '<span class="l c">' in html_text and "DataCopy(xLocal, xGm, count);" in html_text
    blank = [i for i, k in enumerate(w["index"]["cpp"]) if k in w["cpp_blank"]]
    assert blank and all(loaded.replay.source_line(s) is None for s in blank)


def test_the_whole_program_tab_renders_the_lesson_in_both_languages(runs):
    cb = Callbacks(runs, "en")
    with pytest.raises(Exception):  # noqa: B017  (PreventUpdate: the tab was never opened)
        cb.whole_program(0, 3, "en")
    panel = to_html(cb.whole_program(1, 3, "en"))
    assert "Lesson 3: the whole program in C++ (Ascend C)" in panel and "Relu(yLocal, yLocal, count);" in panel
    assert "第 3 课" in to_html(cb.whole_program(1, 3, "zh"))
    assert isinstance(cb.whole_program(1, 99, "en"), html.Div)  # no such lesson: said in the page
