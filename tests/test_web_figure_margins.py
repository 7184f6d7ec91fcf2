"""Every chart's tick labels and axis titles fit inside the chart, in English and in Chinese, in a real browser.

The charts' margins are computed on the server from their labels (``app.web.figures``) rather than measured by
plotly's ``automargin``, which draws each chart twice; this is what keeps that estimate honest: a label cut at the
chart's edge, or a y label running into the plot area, fails here."""

import pytest

from tests.web_browser import VIEWPORT, Tab, browser_and_server

pytestmark = pytest.mark.slow

# per drawn chart, the labels that do not fit: [where, text, how]
MISFITS_JS = """() => [...document.querySelectorAll('.js-plotly-plot')]
  .filter(gd => gd.offsetParent !== null && gd._fullLayout)
  .flatMap(gd => {
    const box = gd.getBoundingClientRect();
    const single = Object.keys(gd._fullLayout._plots || {}).length === 1;
    const plotLeft = box.left + gd._fullLayout._size.l;
    let n = gd; while (n && !n.id) n = n.parentElement;
    const where = n ? n.id : '?';
    const out = [];
    for (const t of gd.querySelectorAll('.ytick text, .xtick text, .g-xtitle text, .g-ytitle text')) {
      const r = t.getBoundingClientRect();
      if (!t.textContent || r.width === 0 || r.height === 0) continue;  // a tick plotly hides
      if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1) {
        out.push([where, t.textContent, 'outside the chart']);
      } else if (single && t.closest('.ytick') && r.right > plotLeft + 1) {
        out.push([where, t.textContent, 'into the plot area']);
      }
    }
    return out;
  })"""
CHARTS_JS = "() => [...document.querySelectorAll('.js-plotly-plot')].filter(gd => gd.offsetParent !== null).length"


@pytest.fixture(scope="module")
def tab(tmp_path_factory):
    with browser_and_server(tmp_path_factory.mktemp("margins")) as (browser, server):
        t = Tab(browser.new_context(viewport=VIEWPORT), server.url)
        yield t
        t.assert_no_errors()


def _charts_fit(tab: Tab, at_least: int) -> None:
    p = tab.page
    p.wait_for_function(f"() => ({CHARTS_JS})() >= {at_least}")
    p.wait_for_timeout(300)  # the last chart's labels drawn
    assert p.evaluate(MISFITS_JS) == []


def test_every_charts_labels_fit_inside_it_in_both_languages(tab):
    p = tab.page
    tab.open("/")
    p.wait_for_function("() => document.getElementById('step-label')?.innerText.includes(' / ')")
    p.wait_for_selector("#metrics-body .card")
    # lesson 1: the timeline (its lanes' long names), the tiles' stages, the pipes' busy shares and the roofline
    _charts_fit(tab, 4)
    p.click("text=中文")
    p.wait_for_function("() => document.getElementById('step-label').innerText.startsWith('第')")
    p.wait_for_function(
        "() => [...document.querySelectorAll('#timeline-graph text')].some(e => e.textContent.includes('主机'))"
    )
    _charts_fit(tab, 4)
    tab.open("/playground")  # a matmul's matrices: three subplots, each with its row and column labels
    for field in ("pg-m", "pg-n", "pg-k"):
        p.fill(f"#{field}", "384")
    p.click("#pg-run")
    p.wait_for_function(
        "() => document.querySelector('#matrices-graph .js-plotly-plot')?.data?.length === 3", timeout=60_000
    )
    p.wait_for_selector("#metrics-body .card")
    _charts_fit(tab, 4)
    tab.open("/compare")  # the two runs' bars, named in Chinese
    p.click("#cmp-run")
    p.wait_for_selector("#cmp-body .js-plotly-plot", timeout=60_000)
    _charts_fit(tab, 1)
