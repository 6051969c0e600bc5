"""Server-side rerun time of every page after a control change (Streamlit AppTest), and page sizes.

    python bench/app_timing.py [--checkpoint DIR | --model NAME] [--repeats 7] [--pages attention,...] [--copies 1]
                               [--cpu] [--lang en|zh]

Prints, per page, the median time of: the first run (model already loaded), a view change
(head picker), and a switch change (causal mask switched off, so a new translation is needed the
first time and comes from the cache afterwards; the padding mask for an encoder-only model; the
switch goes back on, untimed; at a real size a decoder-only model's pages show the button that
continues without the mask instead, ui.page.ondemand.without_the_mask), plus a new sentence each rerun
(never cached, on any page) under the default switches. A page that fails on the model (an exception
in the page, an error it shows instead of its content, or a control it does not have) is reported and
the others are timed; the exit status then says which failed.
--copies N reads each sentence N times over (a longer prompt: at SmolLM2-135M's shapes with the tiny
test tokenizer, --copies 2 makes prompts of about 80 pieces).
--cpu prints a second line per page: the same medians in CPU seconds of this process (AppTest runs the page
in it), which waiting for a core on a machine shared with other work does not inflate.
--lang zh opens every page in Chinese (lang= in the URL; a tree from before the languages ignores it).
--model picks a model of the app's picker
(e.g. all-MiniLM-L6-v2, or a folder's name under models/ or in $ANATOMY_MODELS).
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

PAGES = [
    "pages/1_translate.py",
    "pages/2_attention.py",
    "pages/3_positional_encoding.py",
    "pages/4_tensor_shapes.py",
    "pages/5_masks_and_heads.py",
    "pages/6_design_choices.py",
    "pages/7_training.py",
    "pages/8_why.py",
]
SENTENCES = [
    "The cat eats the apple.",
    "My sisters will see the old house.",
    "The boys did not close the blue door.",
    "She gives the new book to the teacher.",
    "Do you love the red car?",
    "This man buys the newspaper.",
    "Your daughter sells phones in the train.",
    "Good children do not leave every week.",
    "This red bird will walk with the boys.",
    "The small girl sees a white bird.",
    "Seven sons will not sing long songs in eight old parks.",
]


CPU: list[float] = []  # the CPU seconds of each _timed call, in order (--cpu)


def _timed(action) -> float:
    start, cpu = time.perf_counter(), time.process_time()
    at = action()
    elapsed = time.perf_counter() - start
    CPU.append(time.process_time() - cpu)
    if at.exception:
        raise RuntimeError(at.exception[0].message)
    if at.error:  # the page said it cannot do this (e.g. a kind of model it does not serve yet): nothing to time
        raise RuntimeError("the page shows an error: " + at.error[0].value.replace("\\", ""))
    return elapsed


def main() -> None:
    """Run the measurements and print one line per page."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default=os.environ.get("ANATOMY_CHECKPOINT", ""))
    parser.add_argument("--model", default="default", help="a model name of the app's picker")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--pages", default="", help="comma-separated parts of page file names (default: all)")
    parser.add_argument("--copies", type=int, default=1, help="each sentence this many times over")
    parser.add_argument("--cpu", action="store_true", help="also print the medians in CPU seconds")
    parser.add_argument("--lang", default="en", help="the interface's language: en or zh")
    args = parser.parse_args()
    os.environ["ANATOMY_CHECKPOINT"] = args.checkpoint
    from streamlit.testing.v1 import AppTest

    from i18n import set_language

    set_language(args.lang)  # AppTest says a widget's options again in this thread, in the page's language

    def app(page: str) -> AppTest:
        at = AppTest.from_file(str(ROOT / page), default_timeout=600)
        at.query_params["model"] = args.model
        at.query_params["lang"] = args.lang
        return at

    warm = app(PAGES[0])
    start = time.perf_counter()
    warm.run()  # loads the model (its page may fail on it: that page's own row says so below)
    load = time.perf_counter() - start
    switch = "w_causal" if any(t.key == "w_causal" for t in warm.sidebar.toggle) else "w_padding"
    print(
        f"model: {args.model}, checkpoint: {args.checkpoint or 'default'}, language: {args.lang}; "
        f"first run incl. model load: {load * 1000:.0f} ms" + (" (the page failed)" if warm.exception else "")
    )
    print(f"{'page':34} {'first':>7} {'head':>7} {switch[2:]:>7} {'sentence':>9}   (median ms)")
    chosen = [p for p in PAGES if not args.pages or any(part in p for part in args.pages.split(","))]
    failed = []
    for number, page in enumerate(chosen):
        try:
            CPU.clear()
            row = _page_row(app(page), switch, number, args.repeats, args.copies)
        except Exception as exc:  # a page that fails on this model: say so, time the others
            failed.append(page)
            print(f"{page:34} FAILED: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
            continue
        print(f"{page:34} " + " ".join(f"{v * 1000:7.0f}" for v in row[:3]) + f" {row[3] * 1000:9.0f}")
        if args.cpu:  # CPU holds the first run, then head, switch and sentence of each repeat in turn
            cpu = [CPU[0]] + [statistics.median(CPU[1 + kind :: 3]) for kind in range(3)]
            print(f"{'  (CPU)':34} " + " ".join(f"{v * 1000:7.0f}" for v in cpu[:3]) + f" {cpu[3] * 1000:9.0f}")
    if failed:
        sys.exit(f"{len(failed)} page(s) failed on {args.model}: {', '.join(failed)}")


def _page_row(at, switch: str, number: int, repeats: int, copies: int = 1) -> list[float]:
    """Seconds of a page's first run, then the medians of its head, switch and sentence changes."""
    first = _timed(at.run)
    head, causal, sentence = [], [], []
    for i in range(repeats):
        head.append(_timed(at.sidebar.selectbox(key="w_head").set_value(2 if i % 2 == 0 else 1).run))
        causal.append(_timed(at.sidebar.toggle(key=switch).set_value(False).run))
        at.sidebar.toggle(key=switch).set_value(True).run()  # back to the default: the sentence is timed as it comes
        # trailing spaces make every page's sentences new to the result cache (the model reads them alike)
        text = " ".join([SENTENCES[i % len(SENTENCES)]] * copies) + " " * (1 + number * repeats + i)
        sentence.append(_timed(at.sidebar.text_input(key="w_sentence").input(text).run))
    return [first] + [statistics.median(v) for v in (head, causal, sentence)]


if __name__ == "__main__":
    main()
