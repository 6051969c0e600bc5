"""The play button in a real browser: decoding steps itself forward about once a second, in
presentation mode, and stops when paused."""

from __future__ import annotations

import re
import time
import warnings

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from test_browser import SHOTS, _load, _screenshot, _settle, _visit, browser, server  # noqa: F401

pytestmark = pytest.mark.e2e
STEP = re.compile(r"Step t = (\d+) of (\d+)")


def _step(page) -> int:
    text = page.locator("[data-testid='stMarkdownContainer']", has_text="Step t =").first.inner_text()
    return int(STEP.search(text).group(1))


def test_attention_page_plays_three_steps_and_pauses(server, browser):  # noqa: F811
    url, _ = server
    SHOTS.mkdir(parents=True, exist_ok=True)
    with _visit(browser) as page:
        _load(page, f"{url}/attention?sentence=My+sisters+will+see+the+old+house.&step=1&present=on", minimum=6)
        assert _step(page) == 1
        page.get_by_role("button", name="Play decoding").click()
        page.wait_for_function("() => /Step t = 2 of/.test(document.body.innerText)", timeout=30000)  # goes on
        started = time.monotonic()
        page.wait_for_function("() => /Step t = 4 of/.test(document.body.innerText)", timeout=30000)
        elapsed = time.monotonic() - started
        # two steps on, about a second each: never both at once (step 2 may be drawn late on a busy machine, so the
        # interval from its drawing to step 4's can be shorter than two ticks)
        assert 1.0 < elapsed < 20.0, elapsed
        assert "step=" in page.url
        page.get_by_role("button", name="Pause").click()
        resume = page.get_by_role("button", name="Resume")
        try:
            resume.wait_for(timeout=5000)
        except PlaywrightTimeout:  # as a presenter would, click again; the warning says it happened
            warnings.warn("the first Pause click did not pause the player within 5 s", stacklevel=1)
            pause = page.get_by_role("button", name="Pause")
            if pause.is_visible():
                pause.click(timeout=5000)
            try:
                resume.wait_for(timeout=15000)
            except PlaywrightTimeout:
                _screenshot(page, SHOTS / "player_pause_lost.png")
                buttons = page.get_by_role("button").all_inner_texts()
                raise AssertionError(f"not paused at step {_step(page)}; buttons {buttons}") from None
        _settle(page)
        paused = _step(page)
        page.wait_for_timeout(2500)
        assert _step(page) == paused, "paused: the step stays"
        _screenshot(page, SHOTS / "player_attention_presentation.png")


def test_training_page_plays_the_time_lapse_of_the_shipped_model(server, browser):  # noqa: F811
    url, _ = server
    SHOTS.mkdir(parents=True, exist_ok=True)
    with _visit(browser) as page:
        _load(page, f"{url}/training?sentence=The+small+girl+sees+a+white+bird.&present=on", minimum=3)
        page.get_by_role("button", name="Play the time-lapse").click()
        page.wait_for_function("() => /At step 50\\b/.test(document.body.innerText)", timeout=30000)
        page.wait_for_function("() => /snapshot=3/.test(location.search)", timeout=30000)
        page.get_by_role("button", name="Pause").click()
        page.get_by_role("button", name="Resume").wait_for(timeout=15000)
        _settle(page)
        shown = page.locator("[data-testid='stCaptionContainer']", has_text="At step").first.inner_text()
        page.wait_for_timeout(2500)
        assert page.locator("[data-testid='stCaptionContainer']", has_text="At step").first.inner_text() == shown
        _screenshot(page, SHOTS / "timelapse_training_presentation.png")
