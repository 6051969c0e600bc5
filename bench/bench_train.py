"""Training speed, side by side in one run: target tokens per second of a training step
(forward, loss, backward, Adam) for our Transformer and for torch.nn.Transformer of the same
sizes, on the same batches of the default preset's shape.

    python bench/bench_train.py [--steps 20] [--threads 1]
"""

from __future__ import annotations

import argparse
import random
import time

import torch
import torch.nn.functional as F
from torch import nn

from common import ROOT  # noqa: F401  (puts the project on sys.path)
from bench_engine import TorchSeq2Seq
from model.config import ModelConfig
from model.presets import PRESETS
from model.tokens import PAD_ID
from model.transformer import Transformer


def batches(cfg: ModelConfig, max_tokens: int, count: int, seed: int = 0) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Random id batches with the corpus' length spread (4-24 source, 4-26 target pieces)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        width = rng.randint(6, 24)
        rows = max_tokens // (width + 2)
        src = torch.randint(4, cfg.vocab_size, (rows, width))
        tgt = torch.randint(4, cfg.vocab_size, (rows, width + 2))
        out.append((src, tgt))
    return out


def tokens_per_second(step, data) -> float:
    step(*data[0])  # warm-up
    tokens, start = 0, time.perf_counter()
    for src, tgt in data[1:]:
        step(src, tgt)
        tokens += tgt[:, 1:].numel()
    return tokens / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    preset = PRESETS["default"]
    cfg = ModelConfig.from_dict({**preset.model.to_dict(), "vocab_size": 1200})
    data = batches(cfg, preset.max_tokens, args.steps + 1)
    torch.manual_seed(0)
    ours, theirs = Transformer(cfg).train(), TorchSeq2Seq(cfg).train()

    def make_step(model, forward):
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)

        def step(src, tgt):
            logits = forward(src, tgt[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1),
                                   ignore_index=PAD_ID, label_smoothing=0.1)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        return step

    def torch_forward(src, tgt):
        causal = nn.Transformer.generate_square_subsequent_mask(tgt.size(1))
        out = theirs.core(theirs.embed_ids(src), theirs.embed_ids(tgt), tgt_mask=causal, tgt_is_causal=True)
        return out @ theirs.embed.weight.T

    results = {}
    for name, step in (("ours", make_step(ours, ours)), ("nn.Transformer", make_step(theirs, torch_forward))):
        results[name] = tokens_per_second(step, data)
    print(f"model: d_model={cfg.d_model} heads={cfg.n_heads} d_ff={cfg.d_ff} layers={cfg.n_encoder_layers}+"
          f"{cfg.n_decoder_layers}; batches of ~{preset.max_tokens} tokens; {args.steps} steps; "
          f"{args.threads} threads")
    for name, value in results.items():
        print(f"  {name:<16}{value:10.0f} target tokens/s")
    print(f"ours / nn.Transformer = {results['ours'] / results['nn.Transformer']:.3f}")


if __name__ == "__main__":
    main()
