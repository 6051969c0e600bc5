"""Cold start of the real app on the shipped model, in a real browser (Debian chromium), measured
side by side with a yardstick: a Streamlit script that draws one three-point plotly chart and
nothing else (bench/floor_app.py), started the same way.

    python bench/bench_cold_start.py [--runs 3]

For each server start (a fresh process every time) it records:
  * process launch -> /_stcore/health answers;
  * early visitor: the browser opens the page the moment health answers -> first chart,
    counted from process launch (the worst case: the visitor races the model's warm-up);
  * later visitor: the browser opens the page 6 s after launch (the warm-up has finished)
    -> first chart, counted from navigation;
  * the same later visitor again, with Streamlit's static files in its browser cache.
The browser is started once, before any server, so its own start-up is not counted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict

from common import ROOT

sys.path.insert(0, str(ROOT / "tests"))

from live_server import running_app

FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LATER = 6.0
VIEWPORT = {"width": 1500, "height": 1000}
APPS = {"Transformer Anatomy (serve.py)": "serve.py", "one-chart yardstick (floor_app.py)": "bench/floor_app.py"}


def _seconds_to_chart(page, url: str) -> float:
    started = time.monotonic()
    page.goto(url)
    page.locator(".js-plotly-plot").first.wait_for(timeout=60000)
    return time.monotonic() - started


def measure(browser, script: str, returning, times: dict[str, list[float]]) -> None:
    """One fresh server for the early visitor, another for the later ones."""
    with running_app(None, script=script) as app:
        page = browser.new_context(viewport=VIEWPORT).new_page()
        _seconds_to_chart(page, app.url)
        times["launch -> health"].append(app.seconds_to_healthy)
        times["early visitor: launch -> first chart"].append(time.monotonic() - app.started)
        page.context.close()
    with running_app(None, script=script) as app:
        time.sleep(max(0.0, app.started + LATER - time.monotonic()))
        page = browser.new_context(viewport=VIEWPORT).new_page()
        times["later visitor: navigation -> first chart"].append(_seconds_to_chart(page, app.url))
        page.context.close()
        page = returning.new_page()
        times["same, returning (browser cache)"].append(_seconds_to_chart(page, app.url))
        page.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    results: dict[str, dict[str, list[float]]] = {name: defaultdict(list) for name in APPS}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS)
        returning = {name: browser.new_context(viewport=VIEWPORT) for name in APPS}
        for name, script in APPS.items():  # fill each returning visitor's cache once
            with running_app(None, script=script) as app:
                _seconds_to_chart(returning[name].new_page(), app.url)
        for _ in range(args.runs):
            for name, script in APPS.items():  # alternate, so both see the same machine
                measure(browser, script, returning[name], results[name])
        browser.close()
    print(f"cold start, {args.runs} server starts per row (median, min-max; a fresh server process each time)")
    ours, floor = results.values()
    for label in ours:
        mine, base = statistics.median(ours[label]), statistics.median(floor[label])
        print(
            f"  {label:<44} ours {mine:5.2f} s ({min(ours[label]):.2f}-{max(ours[label]):.2f})   "
            f"yardstick {base:5.2f} s ({min(floor[label]):.2f}-{max(floor[label]):.2f})   ratio {mine / base:4.2f}"
        )


if __name__ == "__main__":
    main()
