"""What every page sends to the browser at a sentence length: chart bytes per page (AppTest, server side).

    python bench/chart_bytes.py [--model default|all-MiniLM-L6-v2] [--chars 2000 | --copies N] [--pages attention,...]

Prints, per page, the number of charts, the bytes of their plotly specs (what the browser downloads
and draws) and the largest chart, for a paragraph cut at --chars characters (the sentence box's limit
is 2,000), and the page's server-side run time.
--copies N reads app_timing's longest sentence N times over instead of the paragraph (the prompts
`app_timing.py --copies N` times: at SmolLM2-135M's shapes, `--copies 3` is its longest, 116 pieces with
the tiny test tokenizer), e.g. `ANATOMY_MODELS=<folder> bench/chart_bytes.py --model smollm2-random --copies 3`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app_timing import PAGES, SENTENCES  # noqa: E402

PARAGRAPH = (
    "The old teacher gives the red book to my sister in the small house near the park, and the boys "
    "will not close the blue door because the children sing long songs with their good friends. "
)


def paragraph(chars: int, variant: int = 0) -> str:
    """A paragraph of ordinary sentences cut at `chars` characters (a different one per variant)."""
    words = (PARAGRAPH * (chars // len(PARAGRAPH) + 2)).split()
    words = words[variant % len(words) :] + words[: variant % len(words)]
    return " ".join(words)[:chars].strip()


def main() -> None:
    """Measure each page once and print one line per page."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default", help="a model name of the app's picker")
    parser.add_argument("--chars", type=int, default=2000)
    parser.add_argument("--copies", type=int, default=0, help="app_timing's longest sentence this many times over")
    parser.add_argument("--pages", default="", help="comma-separated parts of page file names (default: all)")
    args = parser.parse_args()
    os.environ.setdefault("ANATOMY_CHECKPOINT", "")
    from streamlit.testing.v1 import AppTest

    text = " ".join([max(SENTENCES, key=len)] * args.copies) if args.copies else paragraph(args.chars)
    print(f"model {args.model}, sentence of {len(text)} characters")
    print(f"{'page':34} {'charts':>6} {'MB':>7} {'largest MB':>10} {'run s':>6}")
    total = 0
    for page in [p for p in PAGES if not args.pages or any(part in p for part in args.pages.split(","))]:
        at = AppTest.from_file(str(ROOT / page), default_timeout=900)
        at.query_params["model"] = args.model
        at.query_params["sentence"] = text
        start = time.perf_counter()
        at.run()
        seconds = time.perf_counter() - start
        if at.exception:
            raise RuntimeError(f"{page}: {at.exception[0].message}")
        sizes = [len(chart.proto.spec) for chart in at.get("plotly_chart")]
        total += sum(sizes)
        print(f"{page:34} {len(sizes):6d} {sum(sizes) / 1e6:7.2f} {max(sizes, default=0) / 1e6:10.2f} {seconds:6.1f}")
    print(f"chart bytes: model={args.model} chars={len(text)} total_mb={total / 1e6:.1f}")


if __name__ == "__main__":
    main()
