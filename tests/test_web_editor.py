"""The Exercise panel's code editor (``app/web/editor.py``, ``assets/editor.bundle.js``, ``assets/editor-init.js``).

Without a browser: the Dash components carry what the browser needs in both languages (the bundle's build, pins
and licences: tests/test_web_bundles.py).

In Debian's headless Chromium: a tiny Dash app holding only the editor and its buttons (the real dashboard's
assets, loaded as it loads them: the bundle by the init script once the editor is in sight), served from this
process on a free port. Typing edits the code, Ctrl+Z undoes, brackets close, Tab and Enter indent, a marked line
gets ``#ex-error-line``, the draft survives a reload and a re-render, Reset brings the stub back, Download saves the
code, and the page asks nothing of any host but this one.
"""

from __future__ import annotations

import json
import re
import threading
from urllib.parse import urlparse

import pytest
from dash import Dash, Input, Output, html

from app.web import editor as ed
from tests.web_browser import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, Tab, need_browser

STUB = 'def kernel(x):\n    """Add one."""\n    # TODO\n    return x\n'
GET = "id => window.AscendSimEditor.getValue(id)"
KEY = ed.DRAFT_PREFIX + "3"


# -- the Dash components, without a browser (the bundle's build and licences: tests/test_web_bundles.py) ------
def test_components_carry_the_lesson_and_stub_and_speak_both_languages():
    div = ed.editor(3, STUB, "zh", filename="lesson3.py")
    assert div.id == "ex-editor" and div.className == "ascendsim-editor"
    props = div.to_plotly_json()["props"]
    assert props["data-lesson"] == "3" and props["data-stub"] == STUB and props["data-filename"] == "lesson3.py"
    assert props["data-label"] == "练习代码"
    en, zh = ed.editor_buttons("en"), ed.editor_buttons("zh")
    assert [b.id for b in en] == ["ex-reset", "ex-download"] == [b.id for b in zh]
    assert [b.children for b in en] == ["Reset to the stub", "Download"]
    assert [b.children for b in zh] == ["恢复为初始代码", "下载"]
    assert en[0].to_plotly_json()["props"]["data-editor-action"] == "reset"
    with pytest.raises(ValueError, match="lang"):
        ed.editor_buttons("fr")


# -- in the browser --------------------------------------------------------------------------------------------
def page_app() -> Dash:
    """The editor, its buttons, and a button that makes Dash render the editor again (for another lesson)."""
    app = Dash(__name__, assets_folder=str(ed.ASSETS), assets_ignore=ed.LAZY_ASSETS, title="editor test")
    app.layout = html.Div(
        [
            html.Div([*ed.editor_buttons("en"), html.Button("3", id="show-3"), html.Button("4", id="show-4")]),
            html.Div(ed.editor(3, STUB), id="holder"),
        ]
    )

    # not at load: the initial call would draw the editor again after the page is up, and a test that had
    # already found it would then act on the one replaced (a CI failure: a marked line on the replaced editor)
    @app.callback(
        Output("holder", "children"),
        Input("show-3", "n_clicks"),
        Input("show-4", "n_clicks"),
        prevent_initial_call=True,
    )
    def show(_a, _b):
        from dash import ctx

        return ed.editor(4 if ctx.triggered_id == "show-4" else 3, STUB)

    return app


@pytest.fixture(scope="module")
def site():
    need_browser()
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, page_app().server, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(10)


@pytest.fixture(scope="module")
def browser():
    need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def tab(browser, site):
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    t = Tab(context, site)
    requests: list[str] = []
    t.page.on("request", lambda r: requests.append(r.url))
    t.open("/")
    t.page.wait_for_selector("#ex-editor .cm-content")
    yield t
    elsewhere = [u for u in requests if urlparse(u.removeprefix("blob:")).hostname not in ("127.0.0.1", "localhost")]
    assert not elsewhere, f"the page asked other hosts: {elsewhere}"
    assert requests, "no request was recorded"
    t.assert_no_errors()
    context.close()


def value(tab: Tab) -> str:
    return tab.page.evaluate(GET, "ex-editor")


def type_at_end(tab: Tab, text: str) -> None:
    tab.page.click("#ex-editor .cm-content")
    tab.page.wait_for_selector("#ex-editor .cm-editor.cm-focused")  # the keys go to the editor, not the page
    tab.page.keyboard.press("Control+End")
    tab.page.keyboard.type(text)


@pytest.mark.slow
def test_editor_mounts_on_the_stub_with_line_numbers_and_highlighting(tab):
    p = tab.page
    assert value(tab) == STUB
    assert p.get_attribute("#ex-editor .cm-content", "contenteditable") == "true"
    assert p.get_attribute("#ex-editor .cm-content", "aria-label") == "Exercise code"
    assert p.locator("#ex-editor .cm-editor").count() == 1
    assert p.locator("#ex-editor .cm-lineNumbers .cm-gutterElement", has_text=re.compile(r"^4$")).count() == 1
    keyword = p.locator("#ex-editor .cm-line").first.locator("span").first
    assert keyword.inner_text() == "def" and keyword.evaluate("e => getComputedStyle(e).color") == "rgb(138, 28, 124)"
    p.click("#ex-editor .cm-content")
    assert p.locator("#ex-editor .cm-activeLine").count() == 1


@pytest.mark.slow
def test_typing_edits_the_code_and_ctrl_z_undoes_it(tab):
    type_at_end(tab, "y = 1")
    assert value(tab) == STUB + "y = 1"
    tab.page.keyboard.press("Control+z")
    assert value(tab) == STUB
    tab.page.keyboard.press("Control+Shift+z")
    assert value(tab) == STUB + "y = 1"


@pytest.mark.slow
def test_brackets_close_themselves_and_match(tab):
    p = tab.page
    type_at_end(tab, "print(")
    assert value(tab).endswith("print()")
    p.keyboard.type("[1, 2")
    assert value(tab).endswith("print([1, 2])")
    p.keyboard.type("]")  # typing the closer steps over it
    assert value(tab).endswith("print([1, 2])")
    assert p.locator("#ex-editor .cm-matchingBracket").count() == 2


@pytest.mark.slow
def test_tab_and_enter_indent_with_four_spaces(tab):
    p = tab.page
    type_at_end(tab, "def g(a):")
    p.keyboard.press("Enter")
    p.keyboard.type("if a:")
    p.keyboard.press("Enter")
    p.keyboard.type("pass")
    assert value(tab).endswith("def g(a):\n    if a:\n        pass")
    p.keyboard.press("Home")
    p.keyboard.press("Tab")
    assert value(tab).endswith("\n            pass")
    p.keyboard.press("Shift+Tab")
    assert value(tab).endswith("\n        pass")
    assert "\t" not in value(tab)


@pytest.mark.slow
def test_mark_line_creates_the_error_line_element_and_null_removes_it(tab):
    p = tab.page
    assert p.locator("#ex-error-line").count() == 0
    p.evaluate("() => window.AscendSimEditor.markLine('ex-editor', 3)")
    assert p.is_visible("#ex-error-line[data-line='3']")
    marked = p.locator("#ex-editor .cm-line.cm-errorLine")
    assert marked.count() == 1 and marked.inner_text() == "    # TODO"
    assert p.locator("#ex-editor .cm-gutterElement.cm-errorGutter").inner_text() == "3"
    p.click("#ex-editor .cm-content")
    p.keyboard.press("Control+Home")
    p.keyboard.type("import numpy\n")  # a line above: the mark follows its line
    assert p.get_attribute("#ex-error-line", "data-line") == "4"
    assert p.locator("#ex-editor .cm-line.cm-errorLine").inner_text() == "    # TODO"
    p.evaluate("() => window.AscendSimEditor.markLine('ex-editor', 99)")  # past the end: the last line
    assert p.get_attribute("#ex-error-line", "data-line") == "6"
    p.evaluate("() => window.AscendSimEditor.markLine('ex-editor', null)")
    assert p.locator("#ex-error-line").count() == 0
    assert p.locator("#ex-editor .cm-errorLine, #ex-editor .cm-errorGutter").count() == 0
    p.evaluate("() => window.AscendSimEditor.markLine('ex-editor', 4)")
    p.click("#ex-editor .cm-line.cm-errorLine")
    p.keyboard.press("Control+Shift+k")  # the marked line deleted: its mark goes with it
    assert "# TODO" not in value(tab)
    assert p.locator("#ex-error-line").count() == 0


@pytest.mark.slow
def test_the_draft_survives_a_reload_and_reset_brings_the_stub_back(tab):
    p = tab.page
    type_at_end(tab, "z = 2")
    p.wait_for_function("k => localStorage.getItem(k) !== null", arg=KEY)  # saved without leaving the page
    assert p.evaluate("k => localStorage.getItem(k)", KEY) == STUB + "z = 2"
    p.keyboard.type("3")
    p.reload()  # at once: the last keystroke is saved as the page goes
    p.wait_for_selector("#ex-editor .cm-content")
    assert value(tab) == STUB + "z = 23"
    p.evaluate("() => window.AscendSimEditor.markLine('ex-editor', 2)")
    p.click("#ex-reset")
    assert value(tab) == STUB
    assert p.evaluate("k => localStorage.getItem(k)", KEY) is None
    assert p.locator("#ex-error-line").count() == 0
    p.reload()
    p.wait_for_selector("#ex-editor .cm-content")
    assert value(tab) == STUB


@pytest.mark.slow
def test_reset_and_set_value_through_the_api(tab):
    p = tab.page
    p.evaluate("() => window.AscendSimEditor.setValue('ex-editor', 'x = 1\\n')")
    assert value(tab) == "x = 1\n"
    p.wait_for_function("k => localStorage.getItem(k) === 'x = 1\\n'", arg=KEY)
    p.evaluate("s => window.AscendSimEditor.reset('ex-editor', s)", "# stub\n")
    assert value(tab) == "# stub\n"
    p.click("#ex-editor .cm-content")
    p.keyboard.press("Control+z")  # a reset by mistake can be undone
    assert value(tab) == "x = 1\n"


@pytest.mark.slow
def test_mounting_again_or_a_dash_re_render_makes_no_second_editor(tab):
    p = tab.page
    type_at_end(tab, "w = 0")
    p.evaluate("s => window.AscendSimEditor.mount('ex-editor', {doc: s, lesson: 3})", "other")
    p.evaluate("s => window.AscendSimEditor.mount('ex-editor', {doc: s, lesson: 3})", "other")
    assert p.locator(".cm-editor").count() == 1
    assert value(tab) == STUB + "w = 0"
    p.click("#show-4")  # Dash renders the editor for lesson 4: its own (empty) draft, then lesson 3's again
    p.wait_for_function(f"() => window.AscendSimEditor.getValue('ex-editor') === {json.dumps(STUB)}")
    assert p.get_attribute("#ex-editor", "data-lesson") == "4"
    p.click("#show-3")
    p.wait_for_function(f"() => window.AscendSimEditor.getValue('ex-editor') === {json.dumps(STUB + 'w = 0')}")
    # the element replaced by a new one with the same id (as a page re-render does): one editor, in the new one
    p.evaluate("() => { const e = document.getElementById('ex-editor'); e.replaceWith(e.cloneNode(false)); }")
    p.wait_for_selector("#ex-editor .cm-content")
    assert p.locator(".cm-editor").count() == 1
    assert value(tab) == STUB + "w = 0"


@pytest.mark.slow
def test_mount_before_the_element_exists_mounts_when_it_appears(tab):
    p = tab.page
    assert p.evaluate("() => window.AscendSimEditor.mount('later', {doc: 'a = 1\\n', lesson: 9})") is False
    p.evaluate("() => { const d = document.createElement('div'); d.id = 'later'; document.body.appendChild(d); }")
    p.wait_for_selector("#later .cm-content")
    assert p.evaluate(GET, "later") == "a = 1\n"
    assert p.evaluate(GET, "nowhere") is None


@pytest.mark.slow
def test_download_saves_the_code_as_a_file(tab, tmp_path):
    type_at_end(tab, "v = 9\n")
    with tab.page.expect_download() as info:
        tab.page.click("#ex-download")
    download = info.value
    assert download.suggested_filename == "exercise.py"
    target = tmp_path / "exercise.py"
    download.save_as(target)
    assert target.read_text() == STUB + "v = 9\n"
