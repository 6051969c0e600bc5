"""The English sentences a person still reads on pages in Chinese (lang=zh), by AppTest:
`python scripts/english_left.py --model default|minilm|decoder [pages/...]` (every page by default)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from page_words import english_on_page  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

PAGES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "pages").glob("*.py"))
SENTENCE = "The small girl sees a white bird."
DECODER = Path(os.environ.get("ANATOMY_ZH_DECODER", "/tmp/anatomy-zh/tiny-qwen2-instruct"))
MODELS = {"default": None, "minilm": "all-MiniLM-L6-v2", "decoder": DECODER.name}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=MODELS, default="default")
    parser.add_argument("--lang", default="zh")
    parser.add_argument("pages", nargs="*", default=PAGES)
    args = parser.parse_args()
    if args.model == "decoder":
        if not (DECODER / "config.json").exists():
            from hf_fixtures import make_decoder_dir

            make_decoder_dir(DECODER, "qwen2", seed=3, chat_template=True)
        os.environ["ANATOMY_MODELS"] = str(DECODER)
    total = 0
    for page in args.pages:
        began = time.perf_counter()
        at = AppTest.from_file(str(ROOT / page), default_timeout=300)
        at.query_params["lang"] = args.lang
        at.query_params["sentence"] = SENTENCE
        if MODELS[args.model]:
            at.query_params["model"] = MODELS[args.model]
        at.run()
        if at.exception:
            print(f"== {page}: EXCEPTION {at.exception[0].message[:400]}")
            total += 1
            continue
        found = english_on_page(at, [SENTENCE])
        total += len(found)
        print(f"== {page}: {len(found)} ({time.perf_counter() - began:.1f} s)")
        for sentence in found:
            print("   ", sentence[:160])
    print("TOTAL", total)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
