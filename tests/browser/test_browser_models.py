"""A real pretrained model in a real browser: the packaged all-MiniLM-L6-v2 on the Attention page."""

from __future__ import annotations

import pytest
from test_browser import SHOTS, _charts, _screenshot, _settle, _visit, browser, server  # noqa: F401

pytestmark = pytest.mark.e2e


def test_minilm_attention_page_renders_encoder_heads(server, browser):  # noqa: F811
    url, _ = server
    SHOTS.mkdir(parents=True, exist_ok=True)
    with _visit(browser) as page:
        page.goto(f"{url}/attention?model=all-MiniLM-L6-v2&sentence=The+cat+sat+on+the+mat.&layer=3&head=5")
        _charts(page, minimum=4, timeout_ms=60000)
        _settle(page, timeout_ms=60000)
        page.get_by_text("encoder-only", exact=False).first.wait_for(timeout=30000)
        titles = page.evaluate(
            "() => [...document.querySelectorAll('.js-plotly-plot')]"
            ".map(p => (p.layout && p.layout.title && p.layout.title.text) || '')"
        )
        assert "encoder self-attention, L3: every head" in titles and "Encoder self-attention L3 H5" in titles, titles
        assert not any("cross" in t.lower() for t in titles), titles
        # the model's own pieces are on the axes: lower-cased WordPiece tokens between [CLS] and [SEP]
        axis_text = page.evaluate(
            "() => [...document.querySelectorAll('.js-plotly-plot .xtick text')].map(t => t.textContent)"
        )
        assert "[CLS]" in axis_text and "[SEP]" in axis_text and "cat" in axis_text, axis_text[:20]
        heatmaps = page.evaluate(
            "() => [...document.querySelectorAll('.js-plotly-plot')]"
            ".flatMap(p => p.data || []).filter(d => d.type === 'heatmap').length"
        )
        assert heatmaps >= 12 + 2, heatmaps  # every head of layer 3, the average, the chosen head
        assert "model=all-MiniLM-L6-v2" in page.url
        _screenshot(page, SHOTS / "minilm_attention.png")
