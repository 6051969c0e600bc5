"""Today's decoders in a real browser: the rotary page, the grouped model view, the KV cache at a middle
step and the sink view, on tiny Llama and Gemma 3 folders made by transformers (screenshots in
artifacts/screenshots/, to look at)."""

from __future__ import annotations

import pytest
from hf_fixtures import make_decoder_dir
from live_server import running_app
from test_browser import SHOTS, _charts, _screenshot, _settle, _visit, browser  # noqa: F401

pytestmark = pytest.mark.e2e

TEXT = "The+small+girl+sees+a+white+bird+in+the+old+garden+near+the+river."


@pytest.fixture(scope="module")
def anatomy_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    folders = [
        make_decoder_dir(root / "tiny-llama", "llama", seed=3),
        make_decoder_dir(root / "tiny-gemma", "gemma3_text", seed=3),
    ]
    with running_app(None, env={"ANATOMY_MODELS": ":".join(str(f) for f in folders)}) as app:
        yield app.url


def _element(page, key: str, path) -> None:
    """A screenshot of one keyed element (a chart and its caption), scrolled into view."""
    box = page.locator(f".st-key-{key}").first
    box.scroll_into_view_if_needed()
    page.wait_for_timeout(800)
    box.screenshot(path=str(path))


def test_rotary_page(anatomy_server, browser):  # noqa: F811
    SHOTS.mkdir(parents=True, exist_ok=True)
    with _visit(browser) as page:
        page.goto(f"{anatomy_server}/positional_encoding?model=tiny-gemma&sentence={TEXT}&shift=100")
        _charts(page, minimum=4, timeout_ms=60000)
        _settle(page, timeout_ms=60000)
        page.get_by_text("RoPE", exact=False).first.wait_for(timeout=30000)
        assert page.locator("[data-testid='stException']").count() == 0
        _screenshot(page, SHOTS / "rope_page.png")


def test_grouped_view_cache_and_sinks(anatomy_server, browser):  # noqa: F811
    with _visit(browser) as page:
        page.goto(f"{anatomy_server}/attention?model=tiny-llama&sentence={TEXT}&step=10&view=dec-self")
        _charts(page, minimum=6, timeout_ms=60000)
        _settle(page, timeout_ms=60000)
        assert page.locator("[data-testid='stException']").count() == 0
        _element(page, "model-view", SHOTS / "grouped_model_view.png")
        _element(page, "kv-cache", SHOTS / "kv_cache_step10.png")
        _element(page, "sink-shares", SHOTS / "sink_shares.png")
        _element(page, "sink-norms", SHOTS / "sink_norms.png")
        _screenshot(page, SHOTS / "attention_anatomy.png")
        page.goto(f"{anatomy_server}/attention?model=tiny-gemma&sentence={TEXT}&step=5")
        _charts(page, minimum=6, timeout_ms=60000)
        _settle(page, timeout_ms=60000)
        _element(page, "windows", SHOTS / "gemma_windows.png")
