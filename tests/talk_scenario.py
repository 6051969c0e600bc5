"""A talk given in chromium with the keyboard alone (ui/page/talk.py): the walk the browser test checks and
bench/talk_presses.py times. Each press of PageDown is followed until the page has finished its run. A press that
moves to another view is timed, on the page's own clock, from the key to the new view's first picture painted (a
chart of the new run, or the Why page's shaded lines). Where the page's first picture sits in the first screen is
read once the run is done (a chart lower down may be drawn first, while the page's first words are laid out)."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from playwright.sync_api import TimeoutError as PlaywrightTimeout

TALK = "transformer-in-20-views"
# Before the last view a press that moved nothing in the walk's whole patience is pressed again, this many times:
# a loaded CI lost one on the training view's time-lapse steps (the walk stopped at view 16 of 20, twice)
KEY_RETRIES = 2
BAR = ".st-key-talk-bar [data-testid='stMarkdownContainer']"
# the first picture of the run on show: stale elements (the run before's, still on screen) are left out
FIRST_PICTURE = (
    "[data-testid='stMain'] [data-stale='false'] :is(.js-plotly-plot .main-svg, .anatomy-lines), "
    "[data-testid='stMain'] [data-stale='false'].anatomy-lines"
)
RUN_DONE = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
# after a press: the bar names another view, or the run is done at another address
MOVED = f"""([before, address]) => {{
  const bar = document.querySelector({BAR!r}), found = bar && bar.innerText.trim().match(/^(\\d+) \\//);
  if (found && +found[1] !== before) return true;
  return location.href !== address && !document.querySelector('[data-testid="stStatusWidget"]');
}}"""


@dataclass
class Shown:
    """One view as the walk met it."""

    at: int
    title: str
    seconds: float  # from the key that moved to it to its first picture painted (the first view: from the address)
    top: float  # px, the first picture's top and bottom in the window
    bottom: float


@dataclass
class Walk:
    views: list[Shown] = field(default_factory=list)
    presses: int = 0


# Put before a press: the page's own clock notes when the bar names another view, when the new view's first picture
# is in the document, and when the browser has painted it (the next frame after it): Playwright's own waits poll
# once a frame, and a page that keeps the browser busy drawing holds their answers back.
WATCH = f"""(before) => {{
  const t0 = performance.now(), walk = window.__walk = {{moved: null, shown: null, painted: null}};
  const watch = new MutationObserver(() => {{
    const bar = document.querySelector({BAR!r}), found = bar && bar.innerText.trim().match(/^(\\d+) \\//);
    if (walk.moved === null && found && +found[1] !== before) walk.moved = performance.now() - t0;
    if (walk.moved !== null && walk.shown === null && document.querySelector({FIRST_PICTURE!r})) {{
      walk.shown = performance.now() - t0;
      requestAnimationFrame(() => setTimeout(() => {{ walk.painted = performance.now() - t0; }}, 0));
      watch.disconnect();
    }}
  }});
  watch.observe(document.body, {{subtree: true, childList: true, attributes: true, characterData: true}});
}}"""


def bar_text(page) -> str:
    node = page.locator(BAR).first
    return node.inner_text().strip() if node.count() else ""


def _at(text: str) -> int:
    found = re.match(r"(\d+) / (\d+)", text)
    return int(found.group(1)) if found else 0


def _views(text: str) -> int:
    found = re.match(r"(\d+) / (\d+)", text)
    return int(found.group(2)) if found else 0


def _first_picture(page, timeout_ms: int) -> tuple[float, float]:
    page.wait_for_selector(FIRST_PICTURE, timeout=timeout_ms)
    box = page.locator(FIRST_PICTURE).first.bounding_box()
    return (box["y"], box["y"] + box["height"]) if box else (-1.0, -1.0)


def _settle(page, timeout_ms: int) -> None:
    page.wait_for_timeout(200)
    page.wait_for_function(RUN_DONE, timeout=timeout_ms)


def walk(page, url: str, query: str = "", timeout_ms: int = 90_000, on_view=None, dwell: float = 0.0) -> Walk:
    """Open the talk at `url` (with `query` added) and press PageDown until its last view's steps are played;
    `on_view(page, shown)` is called at each new view, once its page has finished its run; `dwell` seconds are
    spent on each view before its first press (a speaker speaks, and its next view is prepared meanwhile)."""
    done = Walk()
    started = time.monotonic()
    page.goto(f"{url}/?talk={TALK}{query}")
    page.wait_for_function(f"() => document.querySelector({BAR!r})", timeout=timeout_ms)
    _first_picture(page, timeout_ms)
    seconds = time.monotonic() - started
    _settle(page, timeout_ms)
    top, bottom = _first_picture(page, timeout_ms)
    shown = Shown(_at(bar_text(page)), bar_text(page), seconds, top, bottom)
    done.views.append(shown)
    if on_view:
        on_view(page, shown)
    last_address = page.url
    dwelled = 0
    unmoved = 0  # presses in a row that moved nothing
    while done.presses < 400:
        before = done.views[-1].at
        if dwell and dwelled != before:  # once a view, before its first press
            page.wait_for_timeout(dwell * 1000)
            dwelled = before
        page.evaluate(WATCH, before)
        page.locator("body").press("PageDown")
        done.presses += 1
        # before the last view a press always moves on, however long a loaded machine takes; on the last one,
        # nothing moving for 15 s means its steps are all played
        patience = 15_000 if before >= _views(bar_text(page)) else timeout_ms
        try:  # a new view's bar, or the same view's run done at a new address (a Play step)
            page.wait_for_function(MOVED, arg=[before, last_address], timeout=patience)
        except PlaywrightTimeout:  # nothing moved: the talk is at its end, or (before it) the key went unheard
            unmoved += 1
            if before >= _views(bar_text(page)) or unmoved > KEY_RETRIES:
                break
            continue
        unmoved = 0
        if _at(bar_text(page)) == before:
            _settle(page, timeout_ms)
            last_address = page.url
            if _at(bar_text(page)) == before:
                continue
        page.wait_for_function("() => window.__walk.painted !== null", timeout=timeout_ms)
        seconds = page.evaluate("() => window.__walk.painted") / 1000
        _settle(page, timeout_ms)
        top, bottom = _first_picture(page, timeout_ms)  # where it sits once the run is done, as the room sees it
        last_address = page.url
        shown = Shown(_at(bar_text(page)), bar_text(page), seconds, top, bottom)
        done.views.append(shown)
        if on_view:
            on_view(page, shown)
    return done
