"""Cold start of the real app on the shipped model, in a real browser (Debian chromium):
process launch -> health endpoint answering -> first page's charts drawn.

    python bench/bench_cold_start.py [--runs 3]

The browser is started before the server so that its own start-up is not counted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from common import ROOT

sys.path.insert(0, str(ROOT / "tests"))

from live_server import running_app  # noqa: E402

FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright
    healthy, fresh, cached = [], [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS)
        returning = browser.new_context(viewport={"width": 1500, "height": 1000})
        for run in range(args.runs + 1):
            # a new visitor (empty browser cache) and, after the first run, a returning one
            # (Streamlit's hashed static files already in the browser cache: a speaker who
            # restarts the server before a talk)
            visitors = [(browser.new_context(viewport={"width": 1500, "height": 1000}), fresh)]
            if run > 0:
                visitors.append((returning, cached))
            for context, times in visitors:
                page = context.new_page()
                with running_app(None) as app:
                    page.goto(app.url)
                    page.locator(".js-plotly-plot").first.wait_for(timeout=60000)
                    times.append(time.monotonic() - app.started)
                    healthy.append(app.seconds_to_healthy)
                page.close()
            if run == 0:  # fill the returning visitor's cache
                page = returning.new_page()
                with running_app(None) as app:
                    page.goto(app.url)
                    page.locator(".js-plotly-plot").first.wait_for(timeout=60000)
                page.close()
        browser.close()
    print(f"cold start of the server (median, min-max; server restarted for every measurement):")
    for label, values in (("process launch -> /_stcore/health answers", healthy),
                          ("-> first chart, new visitor (empty browser cache)", fresh),
                          ("-> first chart, returning visitor (browser cache)", cached)):
        print(f"  {label:<52}{statistics.median(values):5.2f} s ({min(values):.2f}-{max(values):.2f}, n={len(values)})")


if __name__ == "__main__":
    main()
