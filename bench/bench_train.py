"""Training speed, side by side in one run: target tokens per second of a training step
(forward, loss, backward, Adam) for our Transformer and for torch.nn.Transformer of the same
sizes, on the same batches of the default preset's shape. With --torchrun, the training command
itself: 2 processes x 1 thread under torchrun (DistributedDataParallel, gloo) against 1 process x
1 thread, both resuming the same checkpoint of a preset for the same number of steps, target
tokens/s read from their logs (the first logged window, which holds the start-up, left out).

    python bench/bench_train.py [--steps 20] [--threads 1] [--preset default|base]
    python bench/bench_train.py --torchrun [--preset default] [--steps 100]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from bench_engine import TorchSeq2Seq
from common import ROOT  # (importing it puts the project on sys.path)
from torch import nn

from model.engine.config import ModelConfig
from model.engine.tokens import PAD_ID
from model.engine.transformer import Transformer
from model.training.distributed import launcher
from model.training.presets import PRESETS


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


def _train_command(processes: int, out: Path, data: Path, preset: str, steps: int, resume: bool) -> list[str]:
    return (
        launcher(processes)
        + [
            "-m",
            "model.train",
            "--preset",
            preset,
            "--out",
            str(out),
            "--data",
            str(data),
            "--max-steps",
            str(steps),
            "--threads",
            "1",
            "--no-progress",
            "--budget-minutes",
            "600",
        ]
        + (["--resume"] if resume else [])
    )


def _logged_tokens_per_second(out: Path, after_step: int) -> float:
    """Target tokens per second over the logged windows after the first one past `after_step`."""
    from model.checkpoints.checkpoint import read_train_log

    windows = [r for r in read_train_log(out) if "tokens_per_s" in r and r["step"] > after_step][1:]
    seconds = sum(25 / r["tokens_per_s"] for r in windows)  # every window but a run's last is 25 steps
    return len(windows) * 25 / seconds if windows else float("nan")


def torchrun_comparison(preset: str, steps: int) -> None:
    """2 ranks x 1 thread against 1 process x 1 thread, from the same checkpoint, in one run."""
    env = {**{k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE")}, "OMP_NUM_THREADS": "1"}
    data = ROOT / "data" / f"corpus-{'default' if preset == 'base' else preset}-seed1"
    with tempfile.TemporaryDirectory() as tmp:
        start = Path(tmp) / "start"
        subprocess.run(
            _train_command(1, start, data, preset, 1, False), cwd=ROOT, env=env, check=True, capture_output=True
        )
        results = {}
        for name, processes in (("1 process x 1 thread", 1), ("torchrun 2 processes x 1 thread", 2)):
            out = Path(tmp) / name.replace(" ", "-")
            shutil.copytree(start, out)
            began = time.perf_counter()
            subprocess.run(
                _train_command(processes, out, data, preset, 1 + steps, True),
                cwd=ROOT,
                env=env,
                check=True,
                capture_output=True,
            )
            # each window's tokens/s counts every rank's tokens (the step's global batch)
            results[name] = (_logged_tokens_per_second(out, 1), time.perf_counter() - began)
    print(
        f"preset {preset}: {steps} steps each, resumed from the same checkpoint; the 2-process run's "
        f"steps hold twice the tokens (one bucket per rank)"
    )
    for name, (rate, seconds) in results.items():
        print(f"  {name:<34}{rate:10.0f} target tokens/s   ({seconds:.0f} s with start-up and validation)")
    one, two = (rate for rate, _ in results.values())
    print(f"torchrun 2x1 / 1x1 = {two / one:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--torchrun", action="store_true", help="compare 2 ranks under torchrun with 1 process")
    parser.add_argument("--preset", default="default", help="the preset whose model and batch size are measured")
    args = parser.parse_args()
    if args.torchrun:
        torchrun_comparison(args.preset, args.steps)
        return
    torch.set_num_threads(args.threads)
    preset = PRESETS[args.preset]
    cfg = ModelConfig.from_dict({**preset.model.to_dict(), "vocab_size": 1200})
    data = batches(cfg, preset.max_tokens, args.steps + 1)
    torch.manual_seed(0)
    ours, theirs = Transformer(cfg).train(), TorchSeq2Seq(cfg).train()

    def make_step(model, forward):
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)

        def step(src, tgt):
            logits = forward(src, tgt[:, :-1])
            loss = F.cross_entropy(
                logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1), ignore_index=PAD_ID, label_smoothing=0.1
            )
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
    print(
        f"model: d_model={cfg.d_model} heads={cfg.n_heads} d_ff={cfg.d_ff} layers={cfg.n_encoder_layers}+"
        f"{cfg.n_decoder_layers}; batches of ~{preset.max_tokens} tokens; {args.steps} steps; "
        f"{args.threads} threads"
    )
    for name, value in results.items():
        print(f"  {name:<16}{value:10.0f} target tokens/s")
    print(f"ours / nn.Transformer = {results['ours'] / results['nn.Transformer']:.3f}")


if __name__ == "__main__":
    main()
