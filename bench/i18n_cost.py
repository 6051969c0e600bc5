"""What the interface's languages cost a page run: the time spent inside the i18n functions (_, n_, later's
rendering, number, listing, sentences), measured by wrapping them before the app is imported, beside the page
run's own time, in English and in Chinese, side by side in one process (Streamlit AppTest):

    python bench/i18n_cost.py [--repeats 5] [--model NAME] [--pages attention,...]

Each repeat reads a new sentence (never cached), so the page runs the model, draws its figures and says every
word it says on a first visit; the first run of each page and language (the model load, the catalog's) is left
out. Prints, per page and language, the median run, the median time inside i18n, their ratio, and how many
messages the run said.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import i18n  # noqa: E402 - wrapped before the app imports its names

SPENT = {"seconds": 0.0, "calls": 0}
DEPTH = [0]  # a wrapped function calling another (n_ calls number) is counted once, at the outside


def _timed(function):
    def wrapper(*args, **kwargs):
        if DEPTH[0]:
            return function(*args, **kwargs)
        DEPTH[0] += 1
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            SPENT["seconds"] += time.perf_counter() - start
            SPENT["calls"] += 1
            DEPTH[0] -= 1

    return wrapper


for name in ("_", "n_", "number", "listing", "sentences"):
    setattr(i18n, name, _timed(getattr(i18n, name)))
i18n.Later.__str__ = _timed(i18n.Later.__str__)  # type: ignore[method-assign]

PAGES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "pages").glob("*.py"))
SENTENCES = ["The cat eats the apple.", "My sisters will see the old house.", "The boys did not close the blue door."]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--model", default="default")
    parser.add_argument("--pages", default="", help="comma-separated parts of page file names (default: all)")
    args = parser.parse_args()
    os.environ.setdefault("ANATOMY_CHECKPOINT", "")
    from streamlit.testing.v1 import AppTest

    chosen = [p for p in PAGES if not args.pages or any(part in p for part in args.pages.split(","))]
    print(f"{'page':32} {'lang':4} {'run ms':>8} {'i18n ms':>8} {'share':>7} {'calls':>6}")
    for number, page in enumerate(chosen):
        for side, lang in enumerate(("en", "zh")):
            i18n.set_language(lang)  # AppTest says the options of the widgets it reads back in this thread
            at = AppTest.from_file(str(ROOT / page), default_timeout=600)
            at.query_params["model"] = args.model
            at.query_params["lang"] = lang
            at.run()
            runs, spent, calls = [], [], []
            for i in range(args.repeats):
                # trailing spaces make each run's sentence new to the results cache, in either language
                text = SENTENCES[i % len(SENTENCES)] + " " * (1 + (2 * number + side) * args.repeats + i)
                SPENT.update(seconds=0.0, calls=0)
                start = time.perf_counter()
                at.sidebar.text_input(key="w_sentence").input(text).run()
                runs.append(time.perf_counter() - start)
                spent.append(SPENT["seconds"])
                calls.append(SPENT["calls"])
                if at.exception:
                    raise SystemExit(f"{page} ({lang}): {at.exception[0].message}")
            run, inside = statistics.median(runs), statistics.median(spent)
            print(
                f"{page:32} {lang:4} {run * 1000:8.0f} {inside * 1000:8.2f} {inside / run:7.2%} "
                f"{statistics.median(calls):6.0f}"
            )


if __name__ == "__main__":
    main()
