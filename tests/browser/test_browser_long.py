"""A pasted paragraph in a real browser: the Attention page draws, its views are usable, nothing breaks."""

from __future__ import annotations

import re
import sys
import time
from urllib.parse import urlencode

import pytest
from test_browser import ROOT, SHOTS, _charts, _screenshot, _settle, _visit, browser, server  # noqa: F401

sys.path.insert(0, str(ROOT / "bench"))
from chart_bytes import paragraph

pytestmark = pytest.mark.e2e


def _chart_titled(page, start: str):
    """The chart whose title starts with `start` (a window adds " · queries 0–39 of 413" to titles)."""
    title = page.locator("text.gtitle", has_text=re.compile("^" + re.escape(start)))
    return page.locator(".js-plotly-plot", has=title).first


def test_a_pasted_paragraph_draws_every_view_of_the_attention_page(server, browser):  # noqa: F811
    url, _ = server
    SHOTS.mkdir(parents=True, exist_ok=True)
    query = urlencode({"model": "all-MiniLM-L6-v2", "sentence": paragraph(2000)})
    with _visit(browser) as page:
        start = time.monotonic()
        page.goto(f"{url}/attention?{query}")
        _charts(page, minimum=5, timeout_ms=120000)
        _settle(page, timeout_ms=120000)
        print(f"attention page, 2,000 characters on all-MiniLM-L6-v2: drawn in {time.monotonic() - start:.1f} s")
        _screenshot(page, SHOTS / "attention-paragraph.png")

        # the hover of a row-scaled heatmap reads the real weight, not the colour value
        single = _chart_titled(page, "Head H1 alone")
        single.scroll_into_view_if_needed()
        area = single.locator(".nsewdrag").first.bounding_box()
        page.mouse.move(area["x"] + area["width"] * 0.3, area["y"] + area["height"] * 0.3)
        label = single.locator(".hovertext").first
        label.wait_for(timeout=10000)
        assert re.search(r"weight 0\.\d{3}", label.text_content()), label.text_content()

        # the text view reads the whole sentence: one shaded piece per key, per head and the average
        page.get_by_text("One piece's attention, as text").scroll_into_view_if_needed()
        spans = page.locator("span[title]")
        assert spans.count() >= 13 * 300

        # a dot of the pooled model view opens that head at full resolution below
        view = _chart_titled(page, "Encoder self-attention: layers × heads")
        view.scroll_into_view_if_needed()
        dot = view.locator(".scatterlayer .point").nth(12 + 2).bounding_box()  # L2 H3 (12 heads a layer)
        page.mouse.click(dot["x"] + dot["width"] / 2, dot["y"] + dot["height"] / 2)
        page.wait_for_function(
            "() => location.search.includes('layer=2') && location.search.includes('head=3')", timeout=60000
        )
        _settle(page, timeout_ms=120000)
        _chart_titled(page, "Encoder self-attention L2 H3 · queries 0–39").wait_for(timeout=60000)
