"""Where each page's first chart starts, in px from the top of the window, in chromium at a
projector's sizes: the measure behind tests/browser/test_browser_talk.py's first-screen test.

    python bench/first_screen.py [--sizes 1280x720,1024x768] [--query present=on] [--pages attention,why]

Starts the app on the shipped model (tests/live_server.py), opens every page with "The small girl
sees a white bird." and the query, and prints per page and size: the first chart's top and height,
the px of it in the window, and any label cut with an ellipsis.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "browser"))  # the browser tests' helpers

from live_server import running_app  # noqa: E402
from test_browser import CHROMIUM, FLAGS, PAGES  # noqa: E402
from test_browser_talk import CUT_LABELS, SENTENCE  # noqa: E402

FIRST_CHART = """() => {
  const chart = document.querySelector('.js-plotly-plot');
  if (!chart) return null;
  const box = chart.getBoundingClientRect();
  return {top: Math.round(box.top), height: Math.round(box.height)};
}"""


def main() -> None:
    """Measure every page at every size and print a line each."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1280x720,1024x768")
    parser.add_argument("--query", default="present=on")
    parser.add_argument("--pages", default="", help="comma-separated page slugs (default: every page)")
    args = parser.parse_args()
    sizes = [tuple(int(n) for n in size.split("x")) for size in args.sizes.split(",")]
    slugs = args.pages.split(",") if args.pages else [slug for _, slug in PAGES]
    from playwright.sync_api import sync_playwright

    with running_app(None) as app, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        for width, height in sizes:
            for slug in slugs:
                page = browser.new_page(viewport={"width": width, "height": height})
                page.goto(f"{app.url}/{slug}?sentence={SENTENCE}&{args.query}")
                page.wait_for_function("() => document.querySelector('.js-plotly-plot .main-svg')", timeout=120000)
                page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')")
                page.wait_for_timeout(1500)  # plotly lays the charts out in their final width
                chart = page.evaluate(FIRST_CHART)
                shown = max(0, min(chart["height"], height - chart["top"])) if chart else 0
                print(f"{width}x{height} {slug:<20} {json.dumps(chart)} in window: {shown} px", end="")
                print(f" cut: {page.evaluate(CUT_LABELS)}", flush=True)
                page.close()
        browser.close()


if __name__ == "__main__":
    main()
