"""How time grows with sentence length and model size, measured side by side in one run.

1. translate + trace on the shipped model for sources of about 5, 10, 20 and 40 pieces
2. the Attention page (AppTest, server side) for the same sentences
3. translate + trace for random-weight models of 1-6 layers and 2-8 heads (d_model 128)

  python bench/bench_scaling.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import time
from functools import partial

import torch
from common import ROOT, default_bundle, median_seconds

LENGTHS = (5, 10, 20, 40)


def sentences_by_length(bundle, targets=LENGTHS) -> dict[int, str]:
    """Corpus sentences whose source is closest to each target length in pieces (EOS included);
    40 needs two sentences joined by "and"."""
    from model.training.corpus import generate

    pool = [e.en for e in generate(4000, 11)]
    pool += [f"{a.rstrip('.?')} and {b[0].lower()}{b[1:]}" for a, b in zip(pool[::2], pool[1::2], strict=False)]
    sized = {len(bundle.encode_source(s)[1]): s for s in pool}
    return {t: sized[min(sized, key=lambda n: abs(n - t))] for t in targets}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    bundle = default_bundle()
    chosen = sentences_by_length(bundle)

    print("1. translate + trace, shipped model (median ms)")
    for sentence in chosen.values():
        result = bundle.translate(sentence)
        ms = 1000 * median_seconds(partial(bundle.translate, sentence), args.repeats)
        print(
            f"  source {len(result.trace.src_ids):3d} pieces, output {len(result.trace.out_pieces):3d}: {ms:8.1f}"
            f"   {sentence!r} -> {result.translation!r}"
        )

    print("2. Attention page rerun after a new sentence (AppTest, server side, median ms)")
    os.environ["ANATOMY_CHECKPOINT"] = ""
    from streamlit.testing.v1 import AppTest

    page = AppTest.from_file(str(ROOT / "pages" / "2_attention.py"), default_timeout=300)
    page.run()
    for target, sentence in chosen.items():
        times = []
        for i in range(args.repeats):
            start = time.perf_counter()
            page.sidebar.text_input(key="w_sentence").input(sentence + " " * (i + 1)).run()
            times.append(time.perf_counter() - start)
            assert not page.exception, page.exception
        times.sort()
        print(f"  source ~{target:3d} pieces: {1000 * times[len(times) // 2]:8.1f}")

    print("3. translate + trace vs model size (random weights, same 12-word sentence, 20 output steps)")
    from model import DecodeOptions
    from model.bundle import Bundle
    from model.checkpoints.checkpoint import Checkpoint
    from model.engine.config import ModelConfig
    from model.engine.transformer import Transformer

    sentence = chosen[10]
    for layers, heads in ((1, 4), (3, 4), (6, 4), (3, 2), (3, 8)):
        cfg = ModelConfig(
            **{**bundle.config.to_dict(), "n_encoder_layers": layers, "n_decoder_layers": layers, "n_heads": heads}
        )
        torch.manual_seed(0)
        other = Bundle(Checkpoint(ROOT, cfg, Transformer(cfg).eval(), bundle.tokenizer, {}, "bench"))
        options = DecodeOptions(max_len=20)
        ms = 1000 * median_seconds(partial(other.translate, sentence, options=options), args.repeats)
        print(f"  {layers}+{layers} layers x {heads} heads: {ms:8.1f}")


if __name__ == "__main__":
    main()
