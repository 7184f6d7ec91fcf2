"""The C++ (Ascend C) view in a real browser (Debian's Chromium through Playwright, as tests/web_browser.py starts
it): lesson 3's current line in C++ beside its Python, following the step; the lesson's whole program in its tab."""

import pytest

from app.present import Replay
from app.present.cpp.view import cpp_view
from engine import Simulation
from lessons.catalog import get
from tests.web_browser import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, Server, Tab, need_browser

pytestmark = pytest.mark.slow
SOLUTION3 = "lessons/l03_copyin_compute_copyout/solution.py"


@pytest.fixture(scope="module")
def lesson3():
    sim = Simulation()
    get(3).module("scenario").scenario(sim)
    return Replay(sim.finish())


@pytest.fixture(scope="module")
def tab(tmp_path_factory):
    need_browser()
    from playwright.sync_api import sync_playwright

    server = Server(tmp_path_factory.mktemp("runs"))
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport=VIEWPORT)
            t = Tab(context, server.url)
            yield t
            t.assert_no_errors()
            browser.close()
    finally:
        server.stop()


def _step_of(replay: Replay, text: str) -> int:
    lines = replay.source(SOLUTION3).splitlines()
    for step in range(len(replay)):
        src = replay.source_line(step)
        if src is not None and src.file == SOLUTION3 and text in lines[src.line - 1]:
            return step
    raise AssertionError(text)


def test_the_cpp_of_the_current_line_follows_the_step_and_the_whole_program_has_its_tab(tab, lesson3):
    tab.open("/?lesson=3")
    n = len(lesson3)
    tab.wait_steps(n)
    p = tab.page
    step = _step_of(lesson3, "asc.data_copy(x_local, x_gm, count)")
    box = p.locator("#step-goto")
    box.fill(str(step + 1))
    box.press("Enter")
    tab.wait_step(step + 1, n)
    p.wait_for_function(
        "() => ((document.querySelector('#cpp-body .l.c') || {}).innerText || '').includes('DataCopy(xLocal, xGm')"
    )
    assert "asc.data_copy(x_local, x_gm, count)" in tab.text("#code-body .line.current")
    assert tab.text("#cpp-body .l.c").strip().endswith("DataCopy(xLocal, xGm, count);")
    p.click("#step-forward")  # the next event's line, in both columns
    tab.wait_step(step + 2, n)
    for k in range(step + 1, step + 4):  # three more steps: each shows its line's C++ (a line without one keeps it)
        if k > step + 1:
            p.click("#step-forward")
            tab.wait_step(k + 1, n)
        want = cpp_view(lesson3, k, 10, "en")
        current = [want["lines"][i].strip() for i in want["current"]]
        if current:
            p.wait_for_function(
                "t => ((document.querySelector('#cpp-body .l.c') || {}).innerText || '').includes(t)", arg=current[0]
            )
    tab.shot("cpp-view")
    p.click("#tab-cpp")
    p.wait_for_selector("#cpp-program")
    program = tab.text("#cpp-program")
    assert "Lesson 3: the whole program in C++ (Ascend C)" in program
    assert "__global__ __aicore__ void relu_axpb" in program and "aclrtMemcpyAsync(" in program
    assert not p.is_visible("#player-area")
    tab.shot("cpp-program")
    p.click("#tab-views")
    p.wait_for_selector("#player-area", state="visible")
