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
    healthy, charts = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS)
        for _ in range(args.runs):
            page = browser.new_page(viewport={"width": 1500, "height": 1000})
            with running_app(None) as app:
                page.goto(app.url)
                page.locator(".js-plotly-plot").first.wait_for(timeout=60000)
                charts.append(time.monotonic() - app.started)
                healthy.append(app.seconds_to_healthy)
            page.close()
        browser.close()
    print(f"cold start over {args.runs} runs (median, min-max):")
    print(f"  process launch -> /_stcore/health answers: {statistics.median(healthy):5.2f} s "
          f"({min(healthy):.2f}-{max(healthy):.2f})")
    print(f"  process launch -> first chart in the browser: {statistics.median(charts):5.2f} s "
          f"({min(charts):.2f}-{max(charts):.2f})")


if __name__ == "__main__":
    main()
