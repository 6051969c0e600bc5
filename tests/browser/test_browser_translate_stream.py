"""A translation drawn while it is written, in chromium, on a Marian of opus-mt-en-fr's widths and depths (random
weights, the tiny fixture's vocabulary, so that it writes every piece it may): after a new sentence, the Attention
page draws the encoder's self-attention over the sentence before the translation ends, and the Translate page's
translation grows before it is whole. Screenshots taken mid-way go to artifacts/screenshots/."""

from __future__ import annotations

import pytest
from hf_fixtures import make_marian_dir
from live_server import running_app
from test_browser import SHOTS, _visit, browser  # noqa: F401
from test_browser_stream import GROWING, STREAM_TIMES, WATCH

pytestmark = pytest.mark.e2e
MODEL = "marian-opus-widths"
BOX = "[data-testid='stSidebar'] input[aria-label='English sentence']"
FIRST = "The girl sees the red house."
NEW = {
    "attention": "The old man walks slowly to the small village near the river every morning.",
    "translate": "The young woman reads a long letter from her brother in the quiet garden.",
}
BIG = "[data-testid='stMarkdownContainer'] div[style*='2.2rem']"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = make_marian_dir(
        tmp_path_factory.mktemp("models") / MODEL, d_model=512, layers=6, heads=8, ffn=2048, max_positions=512
    )
    with running_app(None, env={"ANATOMY_MODELS": str(folder)}) as app:
        yield app.url


def _new_sentence(page, url: str, path: str, finished: str, before_enter: str = "") -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{url}/{path}?model={MODEL}&sentence={FIRST.replace(' ', '+')}")
    page.locator(finished).first.wait_for(timeout=180000)
    page.wait_for_timeout(1000)
    page.evaluate(WATCH, [])
    if before_enter:
        page.evaluate(before_enter)
    page.locator(BOX).fill(NEW[path])
    page.locator(BOX).press("Enter")


def test_the_encoders_heads_are_drawn_before_the_translation_ends(server, browser):  # noqa: F811
    final = ".st-key-steady-step-dec-cross .js-plotly-plot"
    with _visit(browser) as page:
        _new_sentence(page, server, "attention", final, before_enter=STREAM_TIMES)
        page.wait_for_function("() => window.anatomyStream.heads", timeout=120000)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "stream_translation_encoder.png"))
        page.wait_for_function("() => window.anatomyStream.ended", timeout=180000)
        times = page.evaluate("() => window.anatomyStream")
        assert times["line"] <= times["heads"] < times["ended"], times
        page.locator(final).first.wait_for(timeout=120000)
        assert page.locator("[data-testid='stException']").count() == 0


def test_the_translation_grows_on_the_translate_page_before_it_is_whole(server, browser):  # noqa: F811
    with _visit(browser) as page:
        _new_sentence(page, server, "translate", ".st-key-steady-steps .js-plotly-plot")
        page.wait_for_function("() => window.anatomyMarks.texts.length >= 1", timeout=60000)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "stream_translation_growing.png"))
        page.wait_for_function(f"() => {GROWING}().every(d => !d.textContent.endsWith('…'))", timeout=120000)
        page.locator(".st-key-steady-steps .js-plotly-plot").first.wait_for(timeout=120000)
        texts = [
            " ".join(mark["text"].removesuffix("…").split())
            for mark in page.evaluate("() => window.anatomyMarks.texts")
        ]
        assert len(texts) >= 2, texts  # it grew at least once before it was whole
        assert all(len(later) >= len(earlier) for earlier, later in zip(texts, texts[1:], strict=False)), texts
        whole = " ".join(page.locator(BIG).first.inner_text().split())
        assert all(whole.startswith(text) for text in texts), (texts, whole)
        assert page.locator("[data-testid='stException']").count() == 0
