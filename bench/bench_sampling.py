"""A sampled answer against the greedy one, side by side in one run (issue 51's speed goal: at most 1.05x).

The real SmolLM2-135M-Instruct (its packaged GGUF), a chat message whose answer runs past 20 pieces, 20 new pieces:
greedy decoding, then sampling (temperature 1, top-p 0.9, and temperature 0.7 with top-k 50), each with the trace
the pages draw (trace=True) and without it. Every sampled step sorts the vocabulary (49,152 scores) and draws one
number; the rest is the same decoding. Medians of interleaved rounds (common.interleaved_times: wall clock, then the
CPU seconds of this process), one torch thread as the app runs (ui.session.engine).

    python bench/bench_sampling.py [--repeats 7] [--threads 1]
"""

from __future__ import annotations

import argparse

import torch
from common import interleaved_times

from model import DecodeOptions, Sampling, load_bundle
from model.checkpoints.catalog import SMOLLM2, packaged_models

MESSAGE = "Tell me a long story about a cat who learns to sail."
NEW = 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    bundle = load_bundle(packaged_models()[SMOLLM2])
    ways = {
        "greedy": DecodeOptions(max_len=NEW),
        "T=1, top-p 0.9": DecodeOptions(max_len=NEW, sampling=Sampling(top_p=0.9, seed=7)),
        "T=0.7, top-k 50": DecodeOptions(max_len=NEW, sampling=Sampling(temperature=0.7, top_k=50, seed=7)),
    }
    for name, options in ways.items():
        made = bundle.generate(MESSAGE, options=options, chat=True, trace=False)
        print(f"{name:16s} {len(made.output_ids)} pieces: {made.continuation!r}")
        if len(made.output_ids) != NEW:
            raise SystemExit(
                f"{name} wrote {len(made.output_ids)} pieces, not {NEW}: the comparison needs equal lengths"
            )
    for trace in (True, False):
        calls = {
            name: (
                lambda options=options, trace=trace: bundle.generate(MESSAGE, options=options, chat=True, trace=trace)
            )
            for name, options in ways.items()
        }
        times = interleaved_times(calls, args.repeats, warmup=1)
        greedy_wall, greedy_cpu = times["greedy"]
        print(f"\ntrace={trace}: median of {args.repeats} interleaved rounds, {args.threads} torch thread(s)")
        for name, (wall, cpu) in times.items():
            print(
                f"  {name:16s} {wall * 1000:7.0f} ms wall ({wall / greedy_wall:.3f}x greedy)"
                f"  {cpu * 1000:7.0f} ms CPU ({cpu / greedy_cpu:.3f}x)"
            )


if __name__ == "__main__":
    main()
