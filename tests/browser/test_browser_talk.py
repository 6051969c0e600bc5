"""A talk, in chromium: each page's first picture whole in the first screen of a projector (presentation mode at
1280×720 and 1024×768), no label cut, a clicker's keys stepping through decoding, Play moving a
picture the room can see, a switch left off announced with one Reset, sentences the model reads
offered for one it cannot, and the phone layout. Screenshots go to artifacts/screenshots/."""

from __future__ import annotations

import pytest
from test_browser import SHOTS, _load, _query, _settle, _visit, browser, server  # noqa: F401
from test_browser_player import _step

pytestmark = pytest.mark.e2e

SENTENCE = "The+small+girl+sees+a+white+bird."
PROJECTORS = [(1280, 720), (1024, 768)]
TALK_PAGES = [  # page, charts it draws at least
    ("translate", 1),
    ("attention", 11),
    ("positional_encoding", 3),
    ("tensor_shapes", 1),
    ("masks_and_heads", 2),
    ("design_choices", 3),
    ("training", 2),
    ("why", 2),
]
# Every button, radio option, tab and pill label in the page's main column whose text is cut (an
# ellipsis drawn by CSS, or written): its text is wider than its box, or it ends in "…".
CUT_LABELS = """() => [...document.querySelector('[data-testid="stMain"]').querySelectorAll(
    'button, label, [role="tab"], [data-testid="stMarkdownContainer"] p')]
  .filter(e => e.closest('button, label, [role="tab"]'))
  .filter(e => e.getBoundingClientRect().width > 0)
  .filter(e => e.scrollWidth > e.clientWidth + 1 || e.innerText.trim().endsWith('…'))
  .map(e => e.innerText.trim())"""

# The titles of charts whose plotly toolbar, if shown, overlaps them.
TOOLBAR_OVER_TITLE = """() => [...document.querySelectorAll('.js-plotly-plot')].filter(plot => {
  const bar = plot.querySelector('.modebar-container'), title = plot.querySelector('.gtitle');
  if (!bar || !title || getComputedStyle(bar).display === 'none') return false;
  const a = bar.getBoundingClientRect(), b = title.getBoundingClientRect();
  return a.width > 0 && a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
}).map(plot => plot.querySelector('.gtitle').textContent)"""

# Every heading of the main column whose text runs under the element after it (a title's foot hidden by the room's
# panel on a projector: Streamlit pulls the next element up by a heading's padding, which presentation mode shrinks).
HEADINGS_UNDER_THE_NEXT = """() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stHeading"]')]
  .map(heading => [heading.querySelector('h1, h2, h3, h4'),
                   heading.closest('[data-testid="stElementContainer"]').nextElementSibling])
  .filter(([text, next]) => text && next && next.getBoundingClientRect().height > 0
    && next.getBoundingClientRect().top < text.getBoundingClientRect().bottom - 1)
  .map(([text]) => text.innerText)"""


def _first_chart_top(page) -> tuple[float, float]:
    """(top, height) in px of the page's first picture: a chart, or the Why page's shaded lines."""
    box = page.locator("[data-testid='stMain'] :is(.js-plotly-plot, .anatomy-lines)").first.bounding_box()
    return box["y"], box["height"]


@pytest.mark.parametrize("width,height", PROJECTORS)
def test_presentation_mode_shows_each_pages_picture_in_the_first_screen(server, browser, width, height):  # noqa: F811
    url, _ = server
    SHOTS.mkdir(parents=True, exist_ok=True)
    with _visit(browser) as page:
        page.set_viewport_size({"width": width, "height": height})
        for slug, charts in TALK_PAGES:
            _load(page, f"{url}/{slug}?sentence={SENTENCE}&present=on", minimum=charts)
            page.wait_for_timeout(800)  # plotly lays the charts out in the final width
            sidebar = page.locator("[data-testid='stSidebar']").bounding_box()
            assert sidebar is None or sidebar["x"] + sidebar["width"] <= 0, f"{slug}: the sidebar starts collapsed"
            top, chart_height = _first_chart_top(page)
            where = f"{slug} at {width}×{height}: first chart from {top} to {top + chart_height} px"
            assert 0 <= top and top + chart_height <= height, where  # whole, its title (inside its box) included
            assert page.evaluate(CUT_LABELS) == [], f"{slug} at {width}×{height}: a label is cut"
            hidden_feet = page.evaluate(HEADINGS_UNDER_THE_NEXT)
            assert hidden_feet == [], f"{slug} at {width}×{height}: these headings' feet are hidden"
            page.screenshot(path=str(SHOTS / f"projector_{slug}_{width}x{height}.png"))


def test_the_sidebar_opens_with_one_click_in_presentation_mode_and_keeps_its_controls(server, browser):  # noqa: F811
    url, _ = server
    with _visit(browser) as page:
        page.set_viewport_size({"width": 1280, "height": 720})
        _load(page, f"{url}/attention?sentence={SENTENCE}&present=on", minimum=11)
        page.get_by_test_id("stExpandSidebarButton").click()
        sidebar = page.get_by_test_id("stSidebarUserContent")
        sidebar.get_by_text("Causal mask").wait_for(timeout=10000)
        assert sidebar.get_by_text("Presentation mode").is_visible()


@pytest.mark.parametrize("width,height", PROJECTORS)
def test_a_clickers_keys_step_through_decoding_and_keep_the_step_in_the_url(server, browser, width, height):  # noqa: F811
    url, _ = server
    with _visit(browser) as page:
        page.set_viewport_size({"width": width, "height": height})
        _load(page, f"{url}/attention?sentence={SENTENCE}&present=on&step=1", minimum=11)
        assert _step(page) == 1
        back, on = (page.locator(f"[class*='st-key-{name}-'] button").first for name in ("pageup", "pagedown"))
        for button, icon in ((back, "chevron_left"), (on, "chevron_right")):  # ‹ and ›, not the keys' names
            shown = button.inner_text()
            assert icon in shown and "Page" not in shown and button.is_visible()
            assert not button.locator("kbd").first.is_visible()
        on.hover()
        page.get_by_test_id("stTooltipContent").get_by_text("A step on (PageDown or →)").wait_for(timeout=5000)
        page.mouse.move(0, 0)
        for key, step in (("PageDown", 2), ("ArrowRight", 3), ("PageUp", 2), ("ArrowLeft", 1)):
            page.keyboard.press(key)
            page.wait_for_function(f"() => /Step t = {step} of/.test(document.body.innerText)", timeout=30000)
            _settle(page)
            assert _query(page)["step"] == str(step), key
        page.keyboard.press("b")  # a clicker's blank-screen key is the browser's, not the app's
        page.keyboard.press(".")
        page.wait_for_timeout(1500)
        assert _step(page) == 1 and _query(page)["step"] == "1"
        again = page.context.new_page()  # the address as it is now, opened afresh: the same slide
        _load(again, page.url, minimum=11)
        assert _step(again) == 1


def test_keys_typed_into_a_text_box_never_step(server, browser):  # noqa: F811
    url, _ = server
    with _visit(browser) as page:
        page.set_viewport_size({"width": 1440, "height": 900})
        _load(page, f"{url}/attention?sentence={SENTENCE}&step=2", minimum=11)
        box = page.get_by_test_id("stSidebarUserContent").get_by_test_id("stTextInputField")
        box.click()
        for key in ("End", "PageDown", "ArrowRight", "ArrowLeft", "PageUp", "PageDown"):
            box.press(key)
        page.wait_for_timeout(2000)
        _settle(page)
        assert _step(page) == 2 and _query(page)["step"] == "2"


def _outlined_row(page, key: str) -> dict:
    """The bounding box of the outline drawn on the step's row of a steady chart (ui/page/player.py): in its
    newest slot (while playing, the chart being replaced may still be in the page: the one drawn last)."""
    found = page.wait_for_function(
        """(key) => {
            const newest = `[class*="st-key-slot-${key}-"]:has(.anatomy-newest)`;
            const shown = [...document.querySelectorAll(`${newest} .js-plotly-plot .shapelayer path`)]
                .map(p => p.getBoundingClientRect()).filter(r => r.width > 0 && r.height > 0);
            return shown.length ? {y: shown.at(-1).y, height: shown.at(-1).height} : null;
        }""",
        arg=key,
        timeout=10000,
    )
    return found.json_value()


def test_play_moves_an_outlined_decoder_row_within_the_first_screen(server, browser):  # noqa: F811
    url, _ = server
    with _visit(browser) as page:
        page.set_viewport_size({"width": 1440, "height": 900})
        _load(page, f"{url}/attention?sentence={SENTENCE}&step=1", minimum=11)
        page.get_by_role("button", name="Play decoding").click()
        page.wait_for_function("() => /Step t = 2 of/.test(document.body.innerText)", timeout=30000)
        page.wait_for_timeout(300)
        first = _outlined_row(page, "step-dec-cross")
        shown = _step(page)
        page.wait_for_function(  # a frame or two on (the player does not wait for the test)
            "(t) => { const m = /Step t = (\\d+) of/.exec(document.body.innerText); return m && +m[1] >= t; }",
            arg=shown + 2,
            timeout=30000,
        )
        page.wait_for_timeout(300)
        later = _outlined_row(page, "step-dec-cross")
        page.screenshot(path=str(SHOTS / "talk_attention_playing_1440.png"))  # a frame while playing
        for box in (first, later):
            assert 0 <= box["y"] and box["y"] + box["height"] <= 900, box
        assert later["y"] > first["y"] + 10, (first, later)  # the row moved down with the steps
        assert _outlined_row(page, "step-dec-self") is not None


def test_the_play_buttons_tooltip_never_covers_the_page_while_playing(server, browser):  # noqa: F811
    url, _ = server
    with _visit(browser) as page:
        page.set_viewport_size({"width": 1440, "height": 900})
        _load(page, f"{url}/translate?sentence={SENTENCE}", minimum=1)
        play = page.get_by_role("button", name="Play decoding")
        play.hover()
        play.click()
        page.wait_for_function("() => /step t = 2 of/.test(document.body.innerText)", timeout=30000)
        page.get_by_role("button", name="Pause").hover()
        page.wait_for_timeout(1500)
        assert page.get_by_test_id("stTooltipContent").count() == 0
        page.get_by_role("button", name="Pause").click()


def test_a_switch_left_off_is_announced_and_reset_keeps_the_sentence(server, browser):  # noqa: F811
    url, _ = server
    with _visit(browser) as page:
        page.set_viewport_size({"width": 1440, "height": 900})
        _load(page, f"{url}/attention?sentence=The+cat+eats+the+apple.&pe=off&causal=off", minimum=3)
        banner = page.locator(".st-key-switches-banner")
        text = banner.inner_text()
        assert "causal mask is off" in text and "ositional encoding is off" in text, text
        page.screenshot(path=str(SHOTS / "talk_switches_banner_1440.png"))
        banner.get_by_role("button", name="Reset switches").click()
        page.wait_for_function("() => /pe=on/.test(location.search) && /causal=on/.test(location.search)")
        _settle(page)
        query = _query(page)
        assert (
            query["sentence"] == "The cat eats the apple." and query.get("ablate", "") == "" and query["fill"] == "-inf"
        )
        assert page.locator(".st-key-switches-banner").count() == 0
        for slug in ("translate", "why"):  # every page announces a switch left off
            _load(page, f"{url}/{slug}?sentence=The+cat+eats+the+apple.&embscale=off", minimum=1)
            assert "not scaled by √d_model" in page.locator(".st-key-switches-banner").inner_text()


def test_a_sentence_outside_the_models_language_offers_ones_it_reads(server, browser):  # noqa: F811
    url, _ = server
    with _visit(browser) as page:
        page.set_viewport_size({"width": 1440, "height": 900})
        _load(page, f"{url}/translate?sentence=Attention+is+all+you+need", minimum=1)
        offers = page.locator(".st-key-offers button[kind='secondary']", has_not_text="vocabulary")
        assert offers.count() >= 2
        page.screenshot(path=str(SHOTS / "talk_offers_1440.png"))
        chosen = offers.first.inner_text().strip()
        offers.first.click()
        page.wait_for_function(
            "(s) => new URLSearchParams(location.search).get('sentence') === s", arg=chosen, timeout=30000
        )
        _settle(page)
        assert page.locator("[data-testid='stAlertContentWarning']").count() == 0
        assert "outside the language" not in page.locator("[data-testid='stMain']").inner_text()
        assert page.locator(".st-key-offers").count() == 0


def test_a_phone_has_the_sentence_at_the_top_and_the_sidebar_closes_after_enter(server, browser):  # noqa: F811
    url, _ = server
    with _visit(browser) as page:
        page.set_viewport_size({"width": 390, "height": 844})
        _load(page, f"{url}/attention?sentence={SENTENCE}", minimum=3)
        top = page.locator(".st-key-top-sentence input")
        assert top.is_visible() and top.bounding_box()["y"] < 400
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390, "no sideways scrolling"
        steps = page.locator("[class*='st-key-pageup-'] button, [class*='st-key-pagedown-'] button")
        # a button with a tooltip comes with a zero-sized copy of itself (Streamlit measures its width with it)
        assert len([step for step in steps.all() if step.is_visible()]) == 2
        assert not page.locator("[class*='st-key-pageup-'] kbd").first.is_visible(), "a phone has no PageUp key"
        page.locator(".js-plotly-plot").first.hover()  # plotly shows its toolbar over the chart touched
        assert page.evaluate(TOOLBAR_OVER_TITLE) == [], "plotly's toolbar covers a chart's title"
        page.screenshot(path=str(SHOTS / "talk_phone_attention_390.png"))
        top.fill("The cat eats the apple.")
        top.press("Enter")
        page.wait_for_function("() => /cat\\+eats/.test(location.search)", timeout=30000)
        _settle(page)
        page.get_by_test_id("stExpandSidebarButton").click()
        box = page.get_by_test_id("stSidebarUserContent").get_by_test_id("stTextInputField")
        box.fill("My sisters will see the old house.")
        box.press("Enter")
        page.wait_for_function("() => /sisters/.test(location.search)", timeout=30000)
        page.wait_for_function(
            "() => document.querySelector('[data-testid=\"stSidebar\"]').getBoundingClientRect().right <= 0",
            timeout=10000,
        )
        _settle(page)
        page.screenshot(path=str(SHOTS / "talk_phone_after_enter_390.png"))


def test_a_phone_shows_the_candidates_words(server, browser):  # noqa: F811
    """On a phone the heatmaps' cell numbers are dropped (they cannot fit); Continue's candidates are words, the chart
    itself: each step's first five pieces stay written (issue 50 point 6: ranks 2-5 were an empty block)."""
    url, _ = server
    with _visit(browser) as page:
        page.set_viewport_size({"width": 390, "height": 844})
        _load(page, f"{url}/translate?sentence={SENTENCE}", minimum=1)
        words = page.evaluate(
            """() => [...document.querySelectorAll('.st-key-steady-steps .heatmaplayer text')]
                .filter(t => t.getBoundingClientRect().width > 0).map(t => t.textContent)"""
        )
        assert len(words) >= 10 and any("✔" in word for word in words), words
        numbers = page.evaluate(
            """() => [...document.querySelectorAll('.heatmaplayer text')]
                .filter(t => !t.closest('.st-key-steady-steps') && t.getBoundingClientRect().width > 0).length"""
        )
        assert numbers == 0, "the other heatmaps' numbers stay dropped on a phone"
