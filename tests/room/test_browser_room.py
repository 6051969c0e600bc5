"""Follow the talk in chromium: a presenter's page with share=on shows the audience link and its QR code; a
390×844 phone opening the link shows the presenter's sentence and charts without sideways scrolling, no two words
of a chart overprinting, and follows a change of sentence within 3 s; a forged presenter key moves nobody; a phone
steps out to explore and back, and sees the presenter's played decoding step by step. Screenshots go to
artifacts/screenshots/."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlencode, urlparse

import pytest
from chart_text import OVERPRINTED
from test_browser import SHOTS, _settle, _visit, browser, server  # noqa: F401

pytestmark = pytest.mark.e2e

PHONE = {"width": 390, "height": 844}
FIRST, SECOND = "The cat eats the apple.", "My sisters will see the old house."
NO_SIDEWAYS = "() => document.documentElement.scrollWidth <= window.innerWidth"


def _phone(browser):  # noqa: F811
    context = browser.new_context(viewport=PHONE, device_scale_factor=1, is_mobile=True, has_touch=True)
    return context, context.new_page()


def test_the_room_follows_the_presenter_on_a_phone_and_a_forged_key_moves_nobody(server, browser):  # noqa: F811
    url, _ = server
    SHOTS.mkdir(parents=True, exist_ok=True)
    with _visit(browser) as presenter:
        presenter.goto(f"{url}/attention?{urlencode({'sentence': FIRST, 'share': 'on'})}")
        presenter.locator("img[alt='QR code']").wait_for(timeout=60000)
        _settle(presenter)
        qr = presenter.locator("img[alt='QR code']").bounding_box()
        assert qr["width"] >= 250, "the QR code is big enough to scan from the back of a hall"
        link = presenter.locator(".anatomy-room-link").inner_text().strip()
        query = parse_qs(urlparse(presenter.url).query)
        code, key = query["room"][0], query["key"][0]
        assert link.endswith(f"/room/{code}") and key not in link, "the audience link carries no key"
        presenter.screenshot(path=str(SHOTS / "room_presenter.png"))

        context, phone = _phone(browser)
        files: list[str] = []
        phone.on("request", lambda request: files.append(request.url) if "/room-files/" in request.url else None)
        try:
            phone.goto(link)
            phone.wait_for_function("() => document.body.dataset.version", timeout=20000)
            phone.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= 5")
            assert FIRST in phone.locator("#texts").inner_text()
            assert f"following {code}" in phone.locator("#following").inner_text()
            assert "presenter is here" in phone.locator("#presence").inner_text()
            assert phone.evaluate(NO_SIDEWAYS), "the phone scrolls sideways"
            phone.wait_for_timeout(1000)  # plotly lays a wide chart out again in its 760 px
            overprinted = phone.evaluate(OVERPRINTED)
            assert not overprinted, f"words of a chart overprint on the audience's phone: {overprinted}"
            phone.screenshot(path=str(SHOTS / "room_phone_390.png"))

            box = presenter.get_by_label("English sentence", exact=True)
            box.fill(SECOND)
            box.press("Enter")
            _settle(presenter)
            ran = time.monotonic()
            phone.wait_for_function(
                f"() => document.getElementById('texts').innerText.includes({SECOND!r})", timeout=3000
            )
            assert time.monotonic() - ran <= 3.0
            assert not files, f"the views ride in the events, yet the phone fetched {files}"
            assert phone.evaluate(NO_SIDEWAYS)
            phone.locator(".chart").first.click()
            phone.locator("#zoom .js-plotly-plot").wait_for(timeout=5000)
            phone.screenshot(path=str(SHOTS / "room_phone_390_enlarged.png"))
            phone.locator("#zoom-close").click()

            shown = phone.evaluate("() => document.body.dataset.version")
            with _visit(browser) as forger:
                forged = "A" + key[1:] if key[0] != "A" else "B" + key[1:]
                forger.goto(
                    f"{url}/attention?{urlencode({'sentence': 'The boys see a dog.', 'room': code, 'key': forged})}"
                )
                forger.get_by_text("does not open with its key").wait_for(timeout=60000)
                _settle(forger)
                assert forger.locator("img[alt='QR code']").count() == 0
            phone.wait_for_timeout(1500)
            assert phone.evaluate("() => document.body.dataset.version") == shown
            assert SECOND in phone.locator("#texts").inner_text(), "the forged key moved the room"

            phone.locator("#explore").click()  # step out to explore on one's own, then back to the room
            phone.locator(".anatomy-room-back").wait_for(timeout=60000)
            assert "follow=" in phone.url and "key=" not in phone.url
            phone.locator(".anatomy-room-back").click()
            phone.wait_for_url(f"**/room/{code}", timeout=10000)
            phone.wait_for_function("() => document.body.dataset.version", timeout=20000)
            assert SECOND in phone.locator("#texts").inner_text()

            presenter.get_by_role("button", name="Play decoding").click()  # each played frame reaches the phone
            for step in (2, 3):
                phone.wait_for_function(
                    f"() => document.getElementById('controls').innerText.includes('step {step} ·')", timeout=20000
                )
            # A playing page re-draws at every frame: Playwright's wait for a navigation after the click asks the
            # busy renderer and timed out on a loaded CI machine, though the click had landed. None is expected.
            presenter.get_by_role("button", name="Pause").click(no_wait_after=True)
            presenter.get_by_role("button", name="Resume").wait_for(timeout=60000)
        finally:
            context.close()


CROSS_TITLES = (
    "() => Array.from(document.querySelectorAll('.js-plotly-plot .gtitle'))"
    ".filter(t => t.textContent.toLowerCase().includes('cross-attention')).length"
)


def test_a_question_to_the_room_hides_its_answer_on_every_phone_until_the_reveal(server, browser):  # noqa: F811
    url, _ = server
    with _visit(browser) as presenter:
        presenter.goto(f"{url}/attention?{urlencode({'sentence': FIRST, 'share': 'on', 'view': 'dec-cross'})}")
        presenter.locator(".anatomy-room-link").wait_for(timeout=60000)
        _settle(presenter)
        link = presenter.locator(".anatomy-room-link").inner_text().strip()
        context, phone = _phone(browser)
        try:
            phone.goto(link)
            phone.wait_for_function(f"() => ({CROSS_TITLES})() >= 2", timeout=20000)
            presenter.get_by_role("button", name="Ask the room").click()
            phone.wait_for_function(
                "() => document.body.innerText.includes('which English piece does the decoder look at most')",
                timeout=20000,
            )
            phone.wait_for_function(f"() => ({CROSS_TITLES})() === 0", timeout=20000)
            _settle(presenter)
            assert presenter.evaluate(CROSS_TITLES) == 0, "the presenter's screen gives the answer away"
            assert presenter.locator("[class*='st-key-hidden-']").count() >= 2
            phone.screenshot(path=str(SHOTS / "room_phone_question_open.png"))
            presenter.get_by_role("button", name="Reveal the model's answer").click()
            phone.wait_for_function(f"() => ({CROSS_TITLES})() >= 2", timeout=20000)
            _settle(presenter)
            assert presenter.evaluate(CROSS_TITLES) >= 2
            phone.screenshot(path=str(SHOTS / "room_phone_question_revealed.png"))
        finally:
            context.close()
