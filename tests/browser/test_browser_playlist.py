"""A talk given in chromium at a projector's 1280×720 (ui/page/talk.py): the shipped talk steps through all 20 of its
views with the keyboard alone, each view's first picture whole in the first screen, and the speaker's notes window,
in a second window, stays in step with the projector over the whole talk; shared with the room, and given in Chinese
there (so that both languages are walked), a phone follows every view with its title. Each view's screenshot goes
to artifacts/screenshots/talk/, and the time from each key to the next view's first picture to
artifacts/talk_presses.json (measured, never asserted: bench/talk_presses.py reports it)."""

from __future__ import annotations

import json

import pytest
from talk_scenario import walk
from test_browser import SHOTS, _visit, browser, server  # noqa: F401

pytestmark = pytest.mark.e2e

PROJECTOR = {"width": 1280, "height": 720}
PHONE = {"width": 390, "height": 844}


def test_the_shipped_talk_steps_through_its_views_with_the_keyboard_and_the_notes_follow(server, browser):  # noqa: F811
    url, _ = server
    shots = SHOTS / "talk"
    shots.mkdir(parents=True, exist_ok=True)
    notes_context = browser.new_context(viewport={"width": 900, "height": 600})
    notes = notes_context.new_page()
    said: list[str] = []

    def follow(page, shown) -> None:
        if shown.at == 1:  # the notes window, opened from the projector's own sidebar link
            notes.goto(url + page.locator("a", has_text="Speaker's notes").first.get_attribute("href"))
        page.screenshot(path=str(shots / f"view_{shown.at:02d}.png"))
        notes.wait_for_function(f"() => document.body.innerText.includes('{shown.at} / 20 · ')", timeout=15000)
        said.append(notes.locator("[data-testid='stMain']").inner_text())
        if shown.at in (1, 13, 20):
            notes.screenshot(path=str(shots / f"notes_{shown.at:02d}.png"))

    try:
        with _visit(browser) as projector:
            projector.set_viewport_size(PROJECTOR)
            done = walk(projector, url, on_view=follow)
    finally:
        notes_context.close()
    (SHOTS.parent / "talk_presses.json").write_text(
        json.dumps([vars(shown) for shown in done.views], ensure_ascii=False, indent=1)
    )
    assert [shown.at for shown in done.views] == list(range(1, 21)), [shown.title for shown in done.views]
    for shown in done.views:
        assert 0 <= shown.top and shown.bottom <= PROJECTOR["height"], f"{shown.title}: {shown.top}-{shown.bottom} px"
    assert "Ask the room to predict the French" in said[3], "view 4's own note"
    assert "Next: Scaled dot-product attention" in said[3]
    assert "13 / 20 · Cross-attention" in said[12]


def test_a_phone_in_the_room_follows_every_view_of_the_talk_given_in_chinese(server, browser):  # noqa: F811
    url, _ = server
    phone_context = browser.new_context(viewport=PHONE, device_scale_factor=1, is_mobile=True, has_touch=True)
    phone = phone_context.new_page()
    titles: list[str] = []

    def follow(page, shown) -> None:
        if shown.at == 1:
            phone.goto(page.locator(".anatomy-room-link").first.inner_text().strip())
        phone.wait_for_function(
            f"() => (document.getElementById('talk') || {{}}).innerText?.startsWith('{shown.at} / 20')", timeout=15000
        )
        titles.append(phone.locator("#talk").inner_text())
        if shown.at in (1, 19):
            phone.screenshot(path=str(SHOTS / "talk" / f"phone_zh_{shown.at:02d}.png"))
            page.screenshot(path=str(SHOTS / "talk" / f"view_zh_{shown.at:02d}.png"))

    try:
        with _visit(browser) as projector:
            projector.set_viewport_size(PROJECTOR)
            walk(projector, url, "&share=on&lang=zh", on_view=follow)
    finally:
        phone_context.close()
    assert [title.split(" · ")[0] for title in titles] == [f"{k} / 20" for k in range(1, 21)]
    assert titles[0] == "1 / 20 · 输入一句英语，输出一句法语"
    assert titles[18] == "19 / 20 · 注意力汇点：为什么头都看向第一个词元"
