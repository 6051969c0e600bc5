"""Issue 12: a page address opened first on a fresh server shows the titled page menu, not file names.

Until app.py has run once in a server, Streamlit runs a page address's file directly (the pages/
folder's classic mode); each test here starts its own server so that its very first visit is that
case. Every wait is bounded (server start 60 s, each browser wait 30 s), so a test cannot hang.
"""

from __future__ import annotations

import json
from urllib.parse import quote_plus

import pytest
from live_server import running_app
from test_browser import MENU_LINKS, SHOTS, _load, _query, _settle, _visit, browser  # noqa: F401  (browser: fixture)

from ui.session.nav import PAGES

SENTENCE = "The small girl sees a white bird."
TITLES = [title for _, title, _ in PAGES]

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _menu(page) -> list[tuple[str, bool]]:
    """The sidebar menu's (label, highlighted) pairs, top to bottom; highlighted: a filled background."""
    return [
        (label.strip(), filled)
        for label, filled in page.locator(MENU_LINKS).evaluate_all(
            "links => links.map(a => [a.innerText, getComputedStyle(a).backgroundColor !== 'rgba(0, 0, 0, 0)'])"
        )
    ]


def _assert_page(page, title: str) -> None:
    """The page `title` is shown with the titled menu (it highlighted) and the URL's sentence and switch."""
    assert page.locator("h1").first.inner_text().strip() == title
    assert _menu(page) == [(t, t == title) for t in TITLES]
    assert page.locator("[data-testid='stSidebarNav']").count() == 0, "Streamlit's own menu is drawn too"
    assert page.get_by_label("English sentence", exact=True).and_(page.locator("input")).input_value() == SENTENCE
    assert not page.locator("[data-testid='stSidebar'] input[aria-label='Causal mask']").is_checked()
    assert _query(page).get("sentence") == SENTENCE and _query(page).get("causal") == "off"


@pytest.mark.parametrize("slug, then", [("attention", "Masks and heads lab"), ("training", "Translate")])
def test_a_page_address_opened_first_shows_the_titled_menu_and_keeps_its_state(browser, slug, then):  # noqa: F811
    title = next(t for _, t, s in PAGES if s == slug)
    address = f"/{slug}?sentence={quote_plus(SENTENCE)}&causal=off"
    with running_app(None, timeout=60) as app:
        with _visit(browser) as page:
            _load(page, app.url + address)
            _assert_page(page, title)
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.locator("[data-testid='stSidebar']").screenshot(path=str(SHOTS / f"menu_{slug}.png"))
            page.locator(MENU_LINKS, has_text=then).first.click()  # the menu keeps the view across pages
            page.wait_for_function(
                f"() => document.querySelector('h1')?.innerText.trim() === {json.dumps(then)}", timeout=30000
            )
            _settle(page)
            _assert_page(page, then)
        with _visit(browser) as page:  # the next visitor, still before anyone opened /
            _load(page, app.url + address)
            _assert_page(page, title)
