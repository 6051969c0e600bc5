"""Engine speed, side by side in one run, on the shipped default model:

translate + trace      our greedy decode (KV cache) + one recorded teacher-forced pass
translate, no capture  the same work with the recorder off
decode only            our greedy decode alone
nn.Transformer greedy  torch.nn.Transformer of the same sizes (eval), greedy decoding by
                       recomputing the prefix each step (it has no cache), same number of steps

  python bench/bench_engine.py [--repeats 100] [--threads 2]
"""

from __future__ import annotations

import argparse

import torch
from common import TWELVE_WORDS, default_bundle, interleaved_medians
from torch import nn


class TorchSeq2Seq(nn.Module):
    """nn.Transformer with embeddings, sinusoidal positions and a tied output projection."""

    def __init__(self, cfg) -> None:
        super().__init__()
        from model.engine.positional import sinusoidal_encoding

        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.register_buffer("pe", sinusoidal_encoding(cfg.max_len, cfg.d_model))
        self.core = nn.Transformer(
            cfg.d_model,
            cfg.n_heads,
            cfg.n_encoder_layers,
            cfg.n_decoder_layers,
            cfg.d_ff,
            dropout=cfg.dropout,
            activation=cfg.activation,
            batch_first=True,
            norm_first=cfg.norm_first,
        )
        self.scale = cfg.d_model**0.5

    def embed_ids(self, ids: torch.Tensor) -> torch.Tensor:
        return self.embed(ids) * self.scale + self.pe[: ids.size(1)]

    def greedy(self, src: torch.Tensor, steps: int) -> list[int]:
        memory = self.core.encoder(self.embed_ids(src))
        tokens = torch.tensor([[2]])
        for _ in range(steps):
            causal = nn.Transformer.generate_square_subsequent_mask(tokens.size(1))
            out = self.core.decoder(self.embed_ids(tokens), memory, tgt_mask=causal, tgt_is_causal=True)
            next_id = (out[:, -1] @ self.embed.weight.T).argmax(-1)
            tokens = torch.cat([tokens, next_id[:, None]], dim=1)
        return tokens[0, 1:].tolist()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--sentence", default=TWELVE_WORDS)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    bundle = default_bundle()
    cfg = bundle.config
    result = bundle.translate(args.sentence)
    steps = len(result.trace.out_pieces)
    reference = TorchSeq2Seq(cfg).eval()
    src = torch.tensor([list(result.trace.src_ids)])

    from model import Interventions
    from model.engine.decoding import greedy

    def decode_only():
        with torch.inference_mode():
            memory, mask = bundle.model.encode(src, Interventions())
            greedy(bundle.model, memory, mask, Interventions(), steps)

    def torch_greedy():
        with torch.inference_mode():
            reference.greedy(src, steps)

    timings = interleaved_medians(
        {
            "translate + trace": lambda: bundle.translate(args.sentence),
            "translate, no capture": lambda: bundle.translate(args.sentence, trace=False),
            "decode only": decode_only,
            "nn.Transformer greedy": torch_greedy,
        },
        args.repeats,
    )
    print(f"sentence: {args.sentence!r} -> {result.translation!r}")
    print(
        f"model: d_model={cfg.d_model} heads={cfg.n_heads} d_ff={cfg.d_ff} layers={cfg.n_encoder_layers}+"
        f"{cfg.n_decoder_layers}; source {len(result.trace.src_ids)} pieces, {steps} decoding steps; "
        f"{args.threads} threads; median of {args.repeats}"
    )
    for name, seconds in timings.items():
        print(f"  {name:<24}{seconds * 1000:8.2f} ms")
    base = timings["translate, no capture"]
    print(f"capture cost: translate+trace / translate = {timings['translate + trace'] / base:.3f}")
    print(
        f"ours vs torch: translate+trace / nn.Transformer greedy = "
        f"{timings['translate + trace'] / timings['nn.Transformer greedy']:.3f}"
    )


if __name__ == "__main__":
    main()
