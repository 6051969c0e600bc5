"""What "Why this word?" costs: each analysis of model.analysis timed on one sentence, at the shipped
model's size or at opus-mt-en-fr's (random weights; bench_real.py builds it); the output is cut at 20 pieces, like a
real sentence's.

    python bench/bench_explain.py [--model default|opus-size] [--keep models/opus-size-random] [--repeats 3]

Prints the median seconds of: the piece on show explained by each method and by all five (what the
page computes for a new piece), each method's whole table (every output piece), the logit lens, the
patching grid for one piece and the translation under one patch; and the page's old way (every
method's whole table, then one row of each) against the new one (the piece's rows only), side by side.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import torch
from common import TWELVE_WORDS, interleaved_medians

DONOR = "My brother will give the blue apple to the young teacher tomorrow."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=["default", "opus-size"], default="default")
    parser.add_argument("--keep", type=Path, help="the opus-size folder to build or reuse")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    from model import DecodeOptions, load_bundle
    from model.analysis import METHODS, attribute, logit_lens, patch_grid, patched_translation
    from model.engine import stages

    with tempfile.TemporaryDirectory() as scratch:
        path = None
        if args.model == "opus-size":
            from bench_real import build_opus_size

            path = (
                args.keep
                if args.keep and (args.keep / "config.json").exists()
                else build_opus_size(args.keep or Path(scratch) / "opus-size")
            )
        bundle = load_bundle(str(path) if path else None)
        out = bundle.translate(TWELVE_WORDS, options=DecodeOptions(max_len=20), trace=False).output_ids
        piece = len(out) // 2
        cfg = bundle.config
        hooks = [
            stages.embedding("sum"),
            *(stages.layer_output("encoder", layer, cfg.norm_first) for layer in range(cfg.n_encoder_layers)),
            stages.MEMORY,
        ]
        n_src = len(bundle.encode_source(TWELVE_WORDS)[1])
        print(
            f"model: {args.model} (d_model {cfg.d_model}, {cfg.n_encoder_layers}+{cfg.n_decoder_layers} layers, "
            f"vocab {cfg.vocab_size}); {n_src} source pieces, {len(out)} output pieces; {args.threads} thread(s); "
            f"medians of {args.repeats}"
        )

        def every_method_piece() -> None:
            for method in METHODS:
                attribute(bundle, TWELVE_WORDS, out, method, pieces=[piece])

        def every_method_whole() -> None:
            for method in METHODS:
                attribute(bundle, TWELVE_WORDS, out, method)[piece]

        side = interleaved_medians(
            {
                "piece on show, all five methods (rows asked)": every_method_piece,
                "piece on show, all five methods (whole tables)": every_method_whole,
            },
            args.repeats,
            warmup=1,
        )
        for name, seconds in side.items():
            print(f"  {name:<55} {seconds:7.3f} s")
        asked = side["piece on show, all five methods (rows asked)"]
        whole = side["piece on show, all five methods (whole tables)"]
        print(f"  ratio rows asked / whole tables: {asked / whole:.2f}")
        timed = {
            f"piece on show, {method}": (lambda m=method: attribute(bundle, TWELVE_WORDS, out, m, pieces=[piece]))
            for method in METHODS
        }
        timed.update(
            {f"whole table, {method}": (lambda m=method: attribute(bundle, TWELVE_WORDS, out, m)) for method in METHODS}
        )
        timed["logit lens (every layer, every piece)"] = lambda: logit_lens(bundle, TWELVE_WORDS, out)
        timed[f"patching grid ({len(hooks)} hook points x source positions)"] = lambda: patch_grid(
            bundle, DONOR, TWELVE_WORDS, out, piece, hooks
        )
        timed["translation under one patch"] = lambda: patched_translation(bundle, DONOR, TWELVE_WORDS, hooks[0], [2])
        for name, seconds in interleaved_medians(timed, args.repeats, warmup=1).items():
            print(f"  {name:<55} {seconds:7.3f} s")


if __name__ == "__main__":
    main()
