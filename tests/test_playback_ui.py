"""One playback, two UIs: for every lesson the same sequence of moves (a lesson-step button, the → and ←
buttons or keys, next and previous lesson step) gives the same (event, lesson step, narration) in the web
(Playwright, one page, the lessons loaded in turn) and in the TUI (Pilot), and the narration never moves
back while the event moves forward."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from app.present.text import reflow
from lessons import catalog
from tests.tui_helpers import drive, lesson, make_app
from tests.web_browser import CHROMIUM, CHROMIUM_ARGS, STEP, VIEWPORT, Server, Tab, need_browser

pytestmark = pytest.mark.slow

NUMBERS = [ls.number for ls in catalog.lessons()]
TUI_KEYS = {"right": "right", "left": "left", "next": "n", "prev": "p"}
WEB_BUTTONS = {
    "right": "#step-forward",
    "left": "#step-back",
    "next": f"[id='{json.dumps({'dir': 1, 'type': 'ls-nav'}, separators=(',', ':'))}']",
    "prev": f"[id='{json.dumps({'dir': -1, 'type': 'ls-nav'}, separators=(',', ':'))}']",
}


def moves(steps: int) -> list[tuple]:
    """The sequence played in both UIs for a lesson of ``steps`` lesson steps (the issue's: step 7, then → x5)."""
    mid = min(6, steps - 1)
    return [
        ("open",),
        ("click", mid),
        *[("right",)] * 5,
        *[("left",)] * 2,
        ("next",),
        ("next",),
        *[("prev",)] * 3,
        ("click", 0),
        ("left",),
        ("prev",),
        ("next",),
        *[("right",)] * 2,
        ("click", steps - 1),
        ("next",),
        ("right",),
        ("left",),
        ("prev",),
    ]


def _plain(text: str) -> str:
    return " ".join(text.split())


def tui_sequence(number: int) -> list[tuple[int, int, str]]:
    """The TUI's states along :func:`moves` (its event loop on a thread of its own: Playwright runs one here)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(_tui_sequence, number).result()


def _tui_sequence(number: int) -> list[tuple[int, int, str]]:
    walk = lesson(number)
    app = make_app(walk)
    seen = []

    def record():
        stop = app.stop
        text = walk.stops[stop].text["en"] if stop >= 0 else walk.summary["en"]
        assert _plain(reflow(text)) == _plain(app.query_one("#narration-pane").view.model["text"])
        subtitle = app.query_one("#narration-pane").border_subtitle
        assert subtitle == (f"lesson step {stop + 1} / {len(walk.stops)}" if stop >= 0 else "")
        seen.append((app.step, stop, _plain(reflow(text))))

    async def script(pilot):
        for move in moves(len(walk.stops)):
            if move[0] == "click":
                await app.run_action(f"lesson_step({move[1]})")
            elif move[0] != "open":
                await pilot.press(TUI_KEYS[move[0]])
            await pilot.pause()
            record()

    drive(app, script, size=(120, 40))
    return seen


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


SHOWN = """() => {
    const head = document.querySelector('#narration .nhead'), text = document.querySelector('#narration .ntext');
    return [(document.getElementById('step-label') || {}).innerText || '', head ? head.innerText : '',
            text ? text.innerText : ''];
}"""


WAIT = (  # the page shows (step, lesson step, narration) = want
    "want => { const s = (" + SHOWN + ")(); const m = s[0].match(/(\\d+) \\/ (\\d+)/);"
    " const head = s[1].trim() ? +s[1].split('/')[0] - 1 : -1;"
    " return !!m && +m[1] - 1 === want[0] && head === want[1] && s[2].split(/\\s+/).join(' ').trim() === want[2]; }"
)


def web_state(tab) -> tuple[int, int, str]:
    label, head, text = tab.page.evaluate(SHOWN)
    m = STEP.search(label)
    step = int(m.group(1)) - 1 if m else -1
    lesson_step = int(head.split("/")[0]) - 1 if head.strip() else -1
    return step, lesson_step, _plain(text)


def web_sequence(tab, number: int, expected: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The web's states along :func:`moves`; after each move it waits (up to 30 s, a loaded CI machine's slow
    window) for the TUI's state, so a slow window costs time, not a false difference, and a real difference
    shows as the state the page kept (after the first one, the remaining moves wait 1 s each)."""
    from playwright.sync_api import Error as PlaywrightError

    p = tab.page
    n = len(lesson(number).replay)
    tab.open(f"/?lesson={number}")
    tab.wait_steps(n)
    seen, patience = [], 30_000
    for move, want in zip(moves(len(lesson(number).stops)), expected, strict=True):
        if move[0] == "click":
            p.click(f".lstep >> nth={move[1]}")
        elif move[0] != "open":
            p.click(WEB_BUTTONS[move[0]])
        try:
            p.wait_for_function(WAIT, arg=list(want), timeout=patience)
        except PlaywrightError:  # a difference is reported by the comparison, not here
            patience = 1_000
        seen.append(web_state(tab))
    return seen


@pytest.mark.parametrize("number", NUMBERS)
def test_the_web_and_the_tui_narrate_the_same_moves_the_same(tab, number):
    expected = tui_sequence(number)
    got = web_sequence(tab, number, expected)
    played = moves(len(lesson(number).stops))
    pairs = zip(played, got, expected, strict=True)
    diff = [(i, m, w, t) for i, (m, w, t) in enumerate(pairs) if w != t]
    assert got == expected, f"lesson {number}: first differences (move, web, tui): {diff[:3]}"
    for move, before, after in zip(played[1:], expected[:-1], expected[1:], strict=True):
        if move[0] == "right" and after[0] > before[0]:
            assert after[1] >= before[1], f"lesson {number}: the narration went back while stepping forward"


def test_lesson_1_step_7_then_five_steps_on_never_narrates_backwards():
    """The issue's report: from lesson step 7, → five times went 7/10 → 9/10 → 8/10; and event 21
    (synchronize_stream) showed the text about launch_kernel."""
    seq = tui_sequence(1)
    walk = lesson(1)
    after_click = seq[1:7]
    assert after_click[0][1] == 6
    assert [s for _e, s, _t in after_click] == sorted(s for _e, s, _t in after_click)
    sync = walk.replay.event(20)
    assert sync.name == "acl.rt.synchronize_stream"
    assert [e for e, _s, _t in after_click] == [18, 19, 20, 21, 22, 23]
    at_sync = {e: s for e, s, _t in after_click}[20]
    assert "synchronize_stream" in walk.stops[at_sync].text["en"]
