"""Issue 39, point 8: every page in the menu opens from its own address, the first one too, for the shipped
encoder-decoder and for a decoder-only model (a tiny Llama folder made by transformers), with no "Page not
found" dialog, its heading the title the menu gives it. Screenshots in artifacts/screenshots/address_*.png.

The dialog came for the first page's address (/translate) once app.py's st.navigation had run in the server
(after anyone opened "/"): Streamlit serves st.navigation's default page at "/" only, and looks up no other
address for it. The first test opens /translate before and after "/" on a fresh server.
"""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlparse

import pytest
from hf_fixtures import make_decoder_dir
from live_server import running_app
from test_browser import MENU_LINKS, SHOTS, _settle, _visit, browser  # noqa: F401  (browser: fixture)

from ui.session.nav import PAGES

pytestmark = pytest.mark.e2e

DECODER = "tiny-llama"
MODELS = {"default": "Translate", DECODER: "Continue"}  # model -> its first page's title
SENTENCE = "The small girl sees a white bird."
DIALOG = "[data-testid='stDialog']"  # Streamlit's modal: "Page not found" is one (h2 in a role=dialog section)


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    """The app on the shipped model, with a tiny decoder-only Llama folder offered as DECODER."""
    folder = make_decoder_dir(tmp_path_factory.mktemp("models") / DECODER, "llama", seed=3)
    with running_app(None, env={"ANATOMY_MODELS": str(folder)}) as app:
        yield app.url


def _titles(model: str) -> list[tuple[str, str]]:
    """(url path, title) of every page in menu order, as the menu names them for `model`."""
    return [(slug, MODELS[model] if index == 0 else title) for index, (_, title, slug) in enumerate(PAGES)]


def _open(page, address: str) -> None:
    """Open `address` and wait until its page has drawn its heading and menu and the script has finished."""
    page.goto(address)
    page.wait_for_function(
        f"() => document.querySelector('h1') && document.querySelectorAll({json.dumps(MENU_LINKS)}).length"
        f" === {len(PAGES)}",
        timeout=60000,
    )
    _settle(page, timeout_ms=60000)


def _assert_opened(page, slug: str, title: str) -> None:
    """The page `title` is shown at /`slug`, with no "Page not found" dialog, and the menu highlights it."""
    dialogs = page.locator(DIALOG).all_inner_texts()
    assert not any("Page not found" in text for text in dialogs), f"/{slug}: {dialogs}"
    assert page.get_by_text("Page not found").count() == 0, f"/{slug} shows a Page not found dialog"
    assert urlparse(page.url).path == f"/{slug}", page.url
    assert page.locator("h1").first.inner_text().strip() == title
    current = page.locator(MENU_LINKS).evaluate_all(
        "links => links.filter(a => getComputedStyle(a).backgroundColor !== 'rgba(0, 0, 0, 0)')"
        ".map(a => a.innerText.trim())"
    )
    assert current == [title], f"/{slug}: the menu highlights {current}"


def test_the_first_page_opens_from_its_address_before_and_after_the_root_is_opened(app_url, browser):  # noqa: F811
    """A fresh server looks /translate up among the pages/ files; once "/" has run app.py, through
    st.navigation, where it showed the dialog. "/" itself opens the first page at its address, with its query."""
    first = f"{app_url}/translate?model={DECODER}"
    with _visit(browser) as page:  # the server's first visitor
        _open(page, first)
        _assert_opened(page, "translate", "Continue")
    with _visit(browser) as page:
        _open(page, f"{app_url}/?model={DECODER}&sentence={SENTENCE.replace(' ', '+')}")
        _assert_opened(page, "translate", "Continue")
        query = parse_qs(urlparse(page.url).query)
        assert query["model"] == [DECODER] and query["sentence"] == [SENTENCE], page.url
    with _visit(browser) as page:  # the address that showed "Page not found"
        _open(page, first)
        _assert_opened(page, "translate", "Continue")
        page.screenshot(path=str(SHOTS / f"address_{DECODER}_translate_after_root.png"))


@pytest.mark.parametrize("model", list(MODELS))
def test_every_page_opens_from_its_own_address(app_url, browser, model):  # noqa: F811
    SHOTS.mkdir(parents=True, exist_ok=True)
    for slug, title in _titles(model):
        with _visit(browser) as page:  # a fresh page each: a shared link opened in a new tab
            _open(page, f"{app_url}/{slug}?model={model}&sentence={SENTENCE.replace(' ', '+')}")
            _assert_opened(page, slug, title)
            page.screenshot(path=str(SHOTS / f"address_{model}_{slug}.png"))


@pytest.mark.parametrize("model", list(MODELS))
def test_the_menu_links_every_page_at_its_own_address(app_url, browser, model):  # noqa: F811
    """Each menu link's address (what a right click copies) is its page's own, and opens that page."""
    with _visit(browser) as page:
        _open(page, f"{app_url}/attention?model={model}")
        links = page.locator(MENU_LINKS).evaluate_all("links => links.map(a => [a.innerText.trim(), a.href])")
    expected = _titles(model)
    assert [label for label, _ in links] == [title for _, title in expected]
    assert [urlparse(href).path for _, href in links] == [f"/{slug}" for slug, _ in expected]
    with _visit(browser) as page:
        _open(page, f"{app_url}{urlparse(links[0][1]).path}?model={model}")
        _assert_opened(page, expected[0][0], expected[0][1])
