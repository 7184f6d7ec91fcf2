"""Chinese everywhere a trainee looks: every page of the dashboard in a real browser, opened in Chinese (the
terminal UI: tests/test_chinese_everywhere_tui.py); any Latin-script word outside the allow-list (tests/zh_text.py:
API, buffer and parameter names, units, the terms CANN's Chinese documents keep in English) fails. The code a
trainee reads (the Code pane, the editor) is Python and is left out."""

from __future__ import annotations

import pytest

from lessons.catalog import numbers
from tests.web_browser import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, Server, Tab, need_browser
from tests.zh_text import ui_english_left

pytestmark = pytest.mark.slow

# every visible text node and tooltip of the page, with where it is (the nearest id), code and editor left out;
# a tooltip that is a report id (class metric-id: the msprof id beside its Chinese name) is an id, not words
TEXTS = """() => {
  const skip = el => el.closest('#code-body, .cm-editor, #view-code, script, style');
  const out = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let n;
  while ((n = walk.nextNode())) {
    const el = n.parentElement;
    if (!el || skip(el) || !el.getClientRects().length) continue;
    const t = n.textContent.trim();
    if (t) out.push([t, (el.closest('[id]') || {}).id || el.tagName]);
  }
  document.querySelectorAll('[title]:not(.metric-id)').forEach(e => {
    if (!skip(e) && e.getAttribute('title').trim()) out.push([e.getAttribute('title'), 'title of ' + e.id]);
  });
  return out;
}"""


def english(texts) -> dict[str, list[str]]:
    return {f"{text[:100]} @ {where}": left for text, where in texts if (left := ui_english_left(text))}


@pytest.fixture(scope="module")
def zh_tab(tmp_path_factory):
    need_browser()
    from playwright.sync_api import sync_playwright

    server = Server(tmp_path_factory.mktemp("runs"))
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            tab = Tab(browser.new_context(viewport=VIEWPORT), server.url).open("/")
            tab.page.wait_for_selector("#step-label")
            tab.page.click("text=中文")  # the browser keeps the choice: every page opened afterwards is Chinese
            tab.page.wait_for_function("() => document.querySelector('header nav')?.innerText?.includes('课程')")
            yield tab
            tab.assert_no_errors()
            browser.close()
    finally:
        server.stop()


@pytest.mark.parametrize("number", numbers())
def test_every_lesson_page_is_chinese(zh_tab, number):
    """The lesson at its first step and at step 20 (system, core, timeline, matrices, pipeline, metrics with
    findings and recommendations, narration, questions, the exercise panel)."""
    p = zh_tab.page
    zh_tab.open(f"/?lesson={number}")
    p.wait_for_function("() => /\\d+ \\/ \\d+/.test(document.getElementById('step-label')?.innerText || '')")
    p.wait_for_selector("#metrics-body .card")
    found = english(p.evaluate(TEXTS))
    box = p.locator("#step-goto")
    box.fill("20")
    box.press("Enter")
    zh_tab.wait_step(20)
    p.wait_for_timeout(500)
    found |= english(p.evaluate(TEXTS))
    assert not found, found


@pytest.mark.parametrize("path", ["/playground", "/compare", "/export"])
def test_every_tool_page_is_chinese(zh_tab, path):
    p = zh_tab.page
    zh_tab.open(path)
    p.wait_for_function("() => document.querySelector('#page')?.innerText?.length > 20")
    if path == "/compare":  # its results too: both runs' figures, recommendations and findings
        p.click("#cmp-run")
        p.wait_for_selector("#cmp-body", timeout=60_000)
    p.wait_for_timeout(500)
    found = english(p.evaluate(TEXTS))
    assert not found, found
