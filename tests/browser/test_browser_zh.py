"""The Chinese interface in chromium: each page's first chart inside the first screen at 1440×900, at 1280×720
in presentation mode and on a 390×844 phone, no label cut, Chinese characters drawn from a CJK font (not boxes),
and a browser set to Chinese opening the app in Chinese. Screenshots go to artifacts/screenshots/zh_*."""

from __future__ import annotations

import pytest
from test_browser import SHOTS, _load, _query, _visit, browser, server  # noqa: F401
from test_browser_talk import CUT_LABELS, SENTENCE, TALK_PAGES, _first_chart_top

pytestmark = pytest.mark.e2e

SCREENS = [(1440, 900, ""), (1280, 720, "&present=on"), (390, 844, "")]


def _fonts_drawing(page, selector: str) -> dict[str, int]:
    """The fonts chromium really drew the first `selector` element's text with: family -> glyphs (CDP's
    CSS.getPlatformFontsForNode), so a character drawn as a box by a missing font shows up as no CJK font."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1, "pierce": True})["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
    return {font["familyName"]: font["glyphCount"] for font in fonts}


@pytest.mark.parametrize("width,height,extra", SCREENS)
def test_every_page_in_chinese_fits_its_first_screen(server, browser, width, height, extra):  # noqa: F811
    url, _ = server
    SHOTS.mkdir(parents=True, exist_ok=True)
    with _visit(browser) as page:
        page.set_viewport_size({"width": width, "height": height})
        for slug, charts in TALK_PAGES:
            _load(page, f"{url}/{slug}?sentence={SENTENCE}&lang=zh{extra}", minimum=charts if width > 640 else 1)
            page.wait_for_timeout(800)  # plotly lays the charts out in the final width
            main = page.locator("[data-testid='stMain']").inner_text()
            assert sum("\u4e00" <= ch <= "\u9fff" for ch in main) > 20, f"{slug}: the page is in Chinese"
            top, chart_height = _first_chart_top(page)
            where = f"{slug} at {width}×{height}: first chart from {top} to {top + chart_height} px"
            assert 0 <= top < height, where  # the first chart starts inside the first screen
            if extra:  # on a projector it is whole, its title included
                assert top + chart_height <= height, where
            assert page.evaluate(CUT_LABELS) == [], f"{slug} at {width}×{height}: a label is cut"
            assert page.evaluate("() => document.documentElement.scrollWidth") <= width, f"{slug}: no sideways scroll"
            page.screenshot(path=str(SHOTS / f"zh_{slug}_{width}x{height}.png"))


def test_chinese_is_drawn_with_a_cjk_font_not_boxes(server, browser):  # noqa: F811
    url, _ = server
    with _visit(browser) as page:
        _load(page, f"{url}/attention?sentence={SENTENCE}&lang=zh", minimum=11)
        for where in ("h1", ".js-plotly-plot .gtitle"):  # the page's title, a chart's title
            fonts = _fonts_drawing(page, where)
            assert any("CJK" in family and glyphs >= 2 for family, glyphs in fonts.items()), (where, fonts)


def test_a_browser_set_to_chinese_opens_the_app_in_chinese_and_a_link_keeps_it(server, browser):  # noqa: F811
    url, _ = server
    with _visit(browser, locale="zh-CN") as page:
        _load(page, f"{url}/attention?sentence={SENTENCE}", minimum=11)
        assert _query(page)["lang"] == "zh"
        assert page.locator("h1").first.inner_text().strip() == "注意力"
    with _visit(browser, locale="en-US") as page:
        _load(page, f"{url}/attention?sentence={SENTENCE}&lang=zh", minimum=11)  # a shared link keeps its language
        assert page.locator("h1").first.inner_text().strip() == "注意力"
        page.get_by_test_id("stSidebarUserContent").get_by_text("English", exact=True).click()
        page.wait_for_function("() => /lang=en/.test(location.search)", timeout=30000)
        page.wait_for_function("() => document.querySelector('h1').innerText.trim() === 'Attention'", timeout=30000)
        assert _query(page)["sentence"] == "The small girl sees a white bird."
