"""A talk given with the keyboard alone in chromium at 1280×720 (tests/talk_scenario.py): the shipped talk, PageDown
after PageDown, each press that moves to the next view timed from the key to that view's first picture painted, on
the page's own clock. As shipped, then without the next view prepared while one is shown ($ANATOMY_PREPARE=off,
ui/session/prepare.py), then without the pause after a view's first picture ($ANATOMY_FIRST_PAUSE=0,
ui/page/talk.py): three servers, one after the other, on the same machine.

    python bench/talk_presses.py [--rounds 1] [--dwell 5]

Each view's first press comes --dwell seconds after it has finished its run (a speaker speaks for longer).
"""

from __future__ import annotations

import argparse
import statistics
import sys

from common import ROOT

sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from live_server import running_app
from playwright.sync_api import sync_playwright
from talk_scenario import walk
from test_browser import CHROMIUM, FLAGS


def timed(env: dict[str, str], dwell: float) -> list:
    with running_app(None, env=env) as app, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
        done = walk(page, app.url, dwell=dwell)
        browser.close()
    return done.views


# The talk as shipped, and each of its two aids taken away, one server after the other
SETUPS = {
    "as shipped": {},
    "not prepared": {"ANATOMY_PREPARE": "off"},
    "no first-picture pause": {"ANATOMY_FIRST_PAUSE": "0"},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--dwell", type=float, default=5.0, help="seconds spoken on each view before its first press")
    args = parser.parse_args()
    results: dict[str, list] = {name: [] for name in SETUPS}
    for _ in range(args.rounds):
        for name, env in SETUPS.items():
            results[name].append(timed(env, args.dwell))
    first = results["as shipped"][0]
    print(f"{'view':<60}" + "".join(f"{name:>24}" for name in SETUPS))
    for k, shown in enumerate(first):
        cells = [statistics.median(views[k].seconds for views in results[name] if k < len(views)) for name in SETUPS]
        print(f"{shown.title[:60]:<60}" + "".join(f"{cell:24.2f}" for cell in cells))
    for name in SETUPS:
        presses = [shown.seconds for views in results[name] for shown in views[1:]]
        print(
            f"{name}: a press to the next view's first picture: p50 {statistics.median(presses):.2f} s, "
            f"most {max(presses):.2f} s, over {len(presses)} presses; within 1.0 s: "
            f"{sum(s <= 1.0 for s in presses)} of {len(presses)}"
        )


if __name__ == "__main__":
    main()
