"""T5 and GPT-2 in a real browser: GPT-2's Continue page and Attention page, T5's relative-position
bias on the Positional encoding page (tiny folders made by transformers, offered through $ANATOMY_MODELS)."""

from __future__ import annotations

import pytest
from live_server import running_app
from test_app_models import GPT2, T5, gpt2_folder, t5_folder
from test_browser import SHOTS, _charts, _screenshot, _settle, _visit, browser  # noqa: F401

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def families_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    folders = [gpt2_folder(root), t5_folder(root)]
    with running_app(None, env={"ANATOMY_MODELS": ":".join(str(f) for f in folders)}) as app:
        yield app.url


def _titles(page) -> list[str]:
    return page.evaluate(
        "() => [...document.querySelectorAll('.js-plotly-plot')]"
        ".map(p => (p.layout && p.layout.title && p.layout.title.text) || '')"
    )


def test_gpt2_continues_the_prompt_and_shows_its_self_attention_alone(families_server, browser):  # noqa: F811
    SHOTS.mkdir(parents=True, exist_ok=True)
    with _visit(browser) as page:
        page.goto(f"{families_server}/?model={GPT2}&sentence=The+old+man+reads")
        _charts(page, timeout_ms=60000)
        _settle(page, timeout_ms=60000)
        assert page.locator("h1").first.inner_text().strip() == "Continue"
        page.get_by_text("decoder-only", exact=False).first.wait_for(timeout=30000)
        assert page.locator("[data-testid='stException']").count() == 0
        _screenshot(page, SHOTS / "gpt2_continue.png")
        page.goto(f"{families_server}/attention?model={GPT2}&sentence=The+old+man+reads&layer=2&head=1")
        _charts(page, minimum=3, timeout_ms=60000)
        _settle(page, timeout_ms=60000)
        titles = _titles(page)
        assert titles and not any("cross" in t.lower() or "encoder" in t.lower() for t in titles), titles
        assert page.locator("[data-testid='stException']").count() == 0
        _screenshot(page, SHOTS / "gpt2_attention.png")


def test_t5_positional_page_draws_the_bias_of_every_head(families_server, browser):  # noqa: F811
    with _visit(browser) as page:
        page.goto(f"{families_server}/positional_encoding?model={T5}&sentence=The+cat+sleeps+in+the+garden.")
        _charts(page, minimum=4, timeout_ms=60000)
        _settle(page, timeout_ms=60000)
        titles = _titles(page)
        assert any(t.startswith("Encoder self-attention: the bias each head adds") for t in titles), titles
        assert any(t.startswith("Encoder: each head's bias against distance") for t in titles), titles
        heatmaps = page.evaluate(
            "() => [...document.querySelectorAll('.js-plotly-plot')]"
            ".flatMap(p => p.data || []).filter(d => d.type === 'heatmap').length"
        )
        assert heatmaps >= 2 * 2, heatmaps  # every head of both stacks
        assert page.locator("[data-testid='stException']").count() == 0
        _screenshot(page, SHOTS / "t5_positional.png")
