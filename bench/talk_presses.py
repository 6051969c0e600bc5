"""A talk given with the keyboard alone in chromium at 1280×720 (tests/talk_scenario.py): the shipped talk, PageDown
after PageDown, each press that moves to the next view timed from the key to that view's first picture drawn;
with the next view prepared while one is shown (ui/session/prepare.py) and, in the same run, without
($ANATOMY_PREPARE=off), the two servers started one after the other on the same machine.

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


def timed(prepare: bool, dwell: float) -> list:
    with running_app(None, env={"ANATOMY_PREPARE": "on" if prepare else "off"}) as app, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
        done = walk(page, app.url, dwell=dwell)
        browser.close()
    return done.views


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--dwell", type=float, default=5.0, help="seconds spoken on each view before its first press")
    args = parser.parse_args()
    results: dict[bool, list] = {True: [], False: []}
    for _ in range(args.rounds):
        for prepare in (True, False):
            results[prepare].append(timed(prepare, args.dwell))
    first = results[True][0]
    print(f"{'view':<64} {'prepared':>9} {'not':>9}")
    for k, shown in enumerate(first):
        ready = [views[k].seconds for views in results[True] if k < len(views)]
        cold = [views[k].seconds for views in results[False] if k < len(views)]
        print(f"{shown.title[:64]:<64} {statistics.median(ready):9.2f} {statistics.median(cold):9.2f}")
    for prepare, name in ((True, "prepared"), (False, "not prepared")):
        presses = [shown.seconds for views in results[prepare] for shown in views[1:]]
        print(
            f"{name}: a press to the next view's first picture: p50 {statistics.median(presses):.2f} s, "
            f"most {max(presses):.2f} s, over {len(presses)} presses; within 1.0 s: "
            f"{sum(s <= 1.0 for s in presses)} of {len(presses)}"
        )


if __name__ == "__main__":
    main()
