"""How fast the dashboard is in a real browser, and how much it sends: the first lesson page (cold: the server's
first request for lesson 1; warm: the run stored, a new browser context each time), one step of lesson 1, a 2048^3
playground matmul from the click to its views (and when the page saw each phase of its job), and the bytes an
8192^3 timing-only run sends while it is played and jumped through. The figures are written to
tests/artifacts/measurements.json."""

import json
import statistics
import time

import pytest

from engine.scenarios.runner import run_scenario
from tests.web_browser import ARTIFACTS, VIEWPORT, Tab, browser_and_server

pytestmark = [pytest.mark.slow, pytest.mark.alone]  # they measure speed

STEP_JS = """
async (count) => {
    const label = document.getElementById('step-label');
    const out = [];
    for (let k = 0; k < count; k++) {
        const before = label.innerText;
        const t0 = performance.now();
        const changed = new Promise(res => {
            const obs = new MutationObserver(() => { if (label.innerText !== before) { obs.disconnect(); res(); } });
            obs.observe(label, {childList: true, characterData: true, subtree: true});
        });
        document.getElementById('step-forward').click();
        await changed;
        const dom = performance.now() - t0;
        await new Promise(res => requestAnimationFrame(() => setTimeout(res, 0)));
        out.push([dom, performance.now() - t0]);
    }
    return out;
}
"""


def _record(key: str, value) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / "measurements.json"
    doc = json.loads(path.read_text()) if path.is_file() else {}
    doc[key] = value
    path.write_text(json.dumps(doc, indent=1))
    print(f"{key}: {value}")


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    with browser_and_server(tmp_path_factory.mktemp("scale")) as both:
        yield both


def _tab(browser, server) -> Tab:
    return Tab(browser.new_context(viewport=VIEWPORT), server.url)


def _steps(tab: Tab, count: int) -> dict:
    times = tab.page.evaluate(STEP_JS, count)
    dom = sorted(t[0] for t in times)
    painted = sorted(t[1] for t in times)
    return {
        "median_ms": round(statistics.median(painted), 1),
        "p90_ms": round(painted[int(0.9 * len(painted))], 1),
        "dom_median_ms": round(statistics.median(dom), 1),
        "steps": count,
    }


def _load_lesson_page(browser, server) -> float:
    """Seconds from opening the lessons page in a new browser context until it is ready to step: the step label
    counts the run's steps and the timeline and metrics are drawn."""
    tab = _tab(browser, server)
    t0 = time.perf_counter()
    tab.open("/")
    tab.page.wait_for_function(
        "() => document.getElementById('step-label')?.innerText.includes(' / ')"
        " && document.querySelector('#timeline-graph .js-plotly-plot')?.data?.length > 0"
        " && document.querySelector('#metrics-body .card')",
        polling=20,
    )
    seconds = time.perf_counter() - t0
    tab.assert_no_errors()
    tab.page.context.close()
    return seconds


def test_the_first_lesson_page_loads(setup):  # first in this file: its first load is the server's first
    browser, server = setup
    cold = _load_lesson_page(browser, server)
    warm = sorted(_load_lesson_page(browser, server) for _ in range(5))
    _record("lesson_page_load_s", {"cold": round(cold, 2), "warm_median": round(statistics.median(warm), 2)})


def test_one_step_of_lesson_1_renders_quickly(setup):
    browser, server = setup
    tab = _tab(browser, server).open("/")
    tab.page.wait_for_selector("#metrics-body .card")
    tab.page.wait_for_function("() => document.getElementById('step-label').innerText.includes(' / ')")
    tab.choose("jump-kind", "MOVE")
    tab.page.click("#jump-next")  # into the kernel, where every view changes
    tab.page.wait_for_timeout(500)
    figures = _steps(tab, 40)
    _record("lesson1_step_render", figures)
    tab.assert_no_errors()


PHASES_JS = """() => { window.__phases = []; window.__t0 = performance.now();
    new MutationObserver(() => {
        const text = (document.getElementById('pg-progress') || {}).innerText || '';
        const seen = window.__phases;
        if (text && (!seen.length || seen[seen.length - 1][1] !== text)) { seen.push([performance.now(), text]); }
    }).observe(document.getElementById('pg-progress'), {childList: true, characterData: true, subtree: true}); }"""
PHASES = ("queued", "simulating", "storing", "preparing")  # a job's progress lines (web.phase.*) on the page


def _playground(tab: Tab, m: int, numerics: bool) -> float:
    p = tab.page
    p.wait_for_selector("#pg-params .param")
    for field in ("pg-m", "pg-n", "pg-k"):
        p.fill(f"#{field}", str(m))
    if p.is_checked("#pg-numerics input") != numerics:
        p.click("#pg-numerics input")
    p.evaluate(PHASES_JS)  # the job's progress lines as the page shows them, timed from the click
    t0 = time.perf_counter()
    p.click("#pg-run")
    return t0


def _phases_seen(tab: Tab) -> dict:
    """When the page first showed each phase of its job (seconds from the click: as its polls saw them)."""
    seen = tab.page.evaluate("() => window.__phases.map(([t, text]) => [(t - window.__t0) / 1000, text])")
    out = {}
    for at, text in seen:
        phase = next((name for name in PHASES if text.startswith(name)), None)
        if phase is not None and phase not in out:
            out[phase] = round(at, 2)
    return out


def test_2048_cubed_from_click_to_views(setup):
    browser, server = setup
    n = len(run_scenario("matmul", m=2048, n=2048, k=2048, numerics=False).result.trace)
    tab = _tab(browser, server).open("/playground")
    t0 = _playground(tab, 2048, numerics=True)
    tab.wait_steps(n, timeout=120_000)
    tab.page.wait_for_function(
        "() => document.querySelector('#timeline-graph .js-plotly-plot')?.data?.length > 0"
        " && document.querySelector('#metrics-body .card')"
    )
    seconds = round(time.perf_counter() - t0, 2)
    _record("matmul_2048_numerics_click_to_views_s", seconds)
    _record("matmul_2048_numerics_phases_seen_s", _phases_seen(tab))
    tab.shot("playground-2048")
    tab.assert_no_errors()


def test_8192_cubed_timing_only_stays_responsive_and_sends_little(setup):
    browser, server = setup
    n = len(run_scenario("matmul", m=1024, n=1024, k=1024, numerics=False).result.trace)  # warm the engine
    tab = _tab(browser, server).open("/playground")
    received = []
    tab.page.on("response", lambda r: received.append(len(r.body())) if "_dash-update-component" in r.url else None)
    t0 = _playground(tab, 8192, numerics=False)
    tab.page.wait_for_function(
        "() => / \\/ \\d{7}/.test(document.getElementById('step-label').innerText)", timeout=240_000
    )
    tab.page.wait_for_selector("#metrics-body .card", timeout=120_000)
    loaded_s = round(time.perf_counter() - t0, 1)
    phases = _phases_seen(tab)
    assert "simulating" in phases, phases  # the page showed the job's progress
    total = tab.step()[1]
    assert total > 3_000_000 and total != n
    tab.page.wait_for_timeout(1000)
    first = sum(received)
    steps = _steps(tab, 20)
    track = tab.page.locator("#step-slider .dash-slider-track").bounding_box()
    t1 = time.perf_counter()
    tab.page.mouse.click(track["x"] + track["width"] * 0.5, track["y"] + track["height"] / 2)
    tab.page.wait_for_function(
        "() => { const t = document.getElementById('step-label').innerText; return /\\d+ \\/ \\d+/.test(t) && "
        "document.getElementById('event-label').innerText !== '…' && +t.match(/(\\d+) \\//)[1] > 1000000; }",
        timeout=60_000,
    )
    jump_s = round(time.perf_counter() - t1, 2)
    tab.page.keyboard.press("ArrowRight")
    tab.page.wait_for_timeout(1500)
    figures = {
        "steps": total,
        "click_to_views_s": loaded_s,
        "phases_seen_s": phases,
        "bytes_until_ready": first,
        "bytes_after_steps_and_a_jump": sum(received),
        "step_render": steps,
        "slider_jump_to_middle_s": jump_s,
    }
    _record("matmul_8192_timing_only", figures)
    tab.shot("playground-8192")
    tab.assert_no_errors()
    assert sum(received) < 6 * 2**20  # a few MB at most
