"""Generate + trace at SmolLM2-135M's shapes, side by side in one run (issue 37, part 3):

  after   Bundle.generate(trace=True): the trace put together from the decoding's own passes
          (decoding.stepped_trace), the KV cache written in place into buffers reserved for the
          whole decoding (attention.KVCache.append)
  before  Bundle.generate(trace=True, second_pass=True): the way before, a recorded pass over the new
          pieces after decoding (decoding.continued_trace) and a cache grown by torch.cat each step
  HF      transformers' greedy generate(max_new_tokens=20, output_attentions=True,
          return_dict_in_generate=True)

and without capture: ours generate(trace=False) and HF generate without attentions. The checkpoint is
bench_real.py part (g)'s: a random llama at SmolLM2-135M's shapes (30 layers, 576 wide, 9 query heads
over 3 key/value heads, vocabulary 49,152, float32), its end-of-text row zeroed so that all 20 steps
run; the prompt is 80 pieces of its tiny tokenizer. The three give the same ids (checked), and the two
traces the same tensors (checked to 1e-5). Also the cache alone: 20 steps of 30 layers' keys and
values (3 heads of 64) grown by torch.cat against written in place, after 80 and after 1,000
positions. One torch thread by default; medians of interleaved rounds (common.interleaved_times:
wall clock, then the CPU seconds of this process).

    python bench/bench_trace.py [--repeats 9] [--threads 1] [--keep /tmp/smollm2-random]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
from bench_real import SMOLLM2_SHAPES, _built, build_decoder_size
from common import ROOT, interleaved_times

sys.path.insert(0, str(ROOT / "tests"))

PROMPT_PIECES = 80
NEW = 20
LONG_PROMPT = 1000  # the cache alone after a long prompt too: torch.cat copies everything cached at each step
WORDS = (
    "the",
    "old",
    "man",
    "reads",
    "a",
    "book",
    "in",
    "the",
    "garden",
    "while",
    "my",
    "sister",
    "gives",
    "the",
    "red",
    "apple",
    "to",
    "the",
    "teacher",
    "and",
    "the",
    "small",
    "girl",
    "sees",
    "a",
    "white",
    "bird",
    "near",
    "the",
    "river",
    "before",
    "the",
    "school",
    "opens",
    "tomorrow",
    "morning",
)


def prompt_of(bundle, pieces: int) -> str:
    """A text the checkpoint's tokenizer reads as exactly `pieces` pieces."""
    words: list[str] = []
    for index in range(10 * pieces):
        word = WORDS[index % len(WORDS)]
        length = len(bundle.tokenizer.encode_source(" ".join([*words, word])))
        if length <= pieces:
            words.append(word)
        if length == pieces:
            return " ".join(words)
    raise SystemExit(f"no text of {pieces} pieces found")


def cache_growth(steps: int, prompt: int, layers: int, heads: int, width: int):
    """Two contenders: `steps` decoding steps' keys and values after a `prompt` for `layers` blocks, grown
    by torch.cat and written in place (a reservation for them all)."""
    from model.engine.attention import KVCache

    blocks = [torch.nn.Identity() for _ in range(layers)]
    rows = [torch.randn(1, heads, prompt if step == 0 else 1, width) for step in range(steps)]

    def grow(in_place: bool) -> None:
        cache = KVCache(prompt + steps - 1, in_place=in_place)
        with torch.inference_mode():
            for row in rows:
                for block in blocks:
                    cache.append(block, row, row)

    return {
        f"cache by torch.cat, {prompt} + {steps}": lambda: grow(False),
        f"cache in place, {prompt} + {steps}": lambda: grow(True),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="build the SmolLM2-135M-size folder here and keep it")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    from hf_fixtures import reference_decoder

    from model import DecodeOptions, Interventions, load_bundle

    with tempfile.TemporaryDirectory() as scratch:
        folder = _built(args.keep or Path(scratch) / "smollm2-random", build_decoder_size("llama", SMOLLM2_SHAPES))
        bundle = load_bundle(folder)
        tokenizer, model = reference_decoder(folder)
        text = prompt_of(bundle, PROMPT_PIECES)
        ids = tokenizer([text], return_tensors="pt").input_ids
        options, iv = DecodeOptions(max_len=NEW), Interventions()

        def theirs(attentions: bool):
            with torch.inference_mode():
                return model.generate(
                    input_ids=ids,
                    attention_mask=torch.ones_like(ids),
                    do_sample=False,
                    max_new_tokens=NEW,
                    output_attentions=attentions,
                    return_dict_in_generate=True,
                    pad_token_id=model.generation_config.eos_token_id,
                )

        after = bundle.generate(text, iv, options)
        before = bundle.generate(text, iv, options, second_pass=True)
        reference = theirs(True)
        assert list(after.prompt_ids) == ids[0].tolist() and len(after.prompt_ids) == PROMPT_PIECES
        assert list(after.output_ids) == reference.sequences[0, PROMPT_PIECES:].tolist() == list(before.output_ids)
        assert len(after.output_ids) == NEW, "the continuation ended before its limit"
        assert after.trace is not None and before.trace is not None
        assert list(after.trace.tensors) == list(before.trace.tensors)
        worst = 0.0
        for name, ours in after.trace.tensors.items():
            old = before.trace.tensors[name]
            finite = np.isfinite(old)
            assert ours.shape == old.shape and np.array_equal(np.isfinite(ours), finite), name
            if finite.any():
                worst = max(worst, float(np.abs(ours[finite] - old[finite]).max()))
        assert worst < 1e-5, worst
        contenders = {
            "after: generate + trace": lambda: bundle.generate(text, iv, options),
            "before: generate + trace (second pass)": lambda: bundle.generate(text, iv, options, second_pass=True),
            "HF: generate + attentions": lambda: theirs(True),
            "ours: generate, no trace": lambda: bundle.generate(text, iv, options, trace=False),
            "HF: generate": lambda: theirs(False),
        }
        cfg = bundle.config
        for prompt in (PROMPT_PIECES, LONG_PROMPT):
            contenders |= cache_growth(NEW, prompt, cfg.n_decoder_layers, cfg.kv_heads, cfg.d_k)
        times = interleaved_times(contenders, args.repeats, warmup=2)
    print(
        f"SmolLM2-135M shapes (random llama), {PROMPT_PIECES}-piece prompt, {NEW} new pieces, greedy, "
        f"{args.threads} torch thread(s), median of {args.repeats} interleaved rounds "
        f"(the two traces differ by at most {worst:.1e}):"
    )
    for name, (wall, cpu) in times.items():
        print(f"    {name:<44}{wall * 1e3:8.1f} ms wall {cpu * 1e3:8.1f} ms CPU")
    ratios = (
        ("after / before (generate + trace)", "after: generate + trace", "before: generate + trace (second pass)"),
        ("after / HF generate + attentions", "after: generate + trace", "HF: generate + attentions"),
        ("before / HF generate + attentions", "before: generate + trace (second pass)", "HF: generate + attentions"),
        ("ours no trace / HF generate", "ours: generate, no trace", "HF: generate"),
    ) + tuple(
        (
            f"cache in place / by torch.cat, {p} + {NEW}",
            f"cache in place, {p} + {NEW}",
            f"cache by torch.cat, {p} + {NEW}",
        )
        for p in (PROMPT_PIECES, LONG_PROMPT)
    )
    print("ratios (wall clock, then CPU):")
    for label, ours, other in ratios:
        print(f"    {label:<44}{times[ours][0] / times[other][0]:7.3f}  {times[ours][1] / times[other][1]:7.3f}")


if __name__ == "__main__":
    main()
