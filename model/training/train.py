"""Train a Transformer on the generated English->French corpus.

    python -m model.train --preset default --out checkpoints/default [--snapshots 8]
    torchrun --standalone --nproc_per_node 2 -m model.train --preset tiny --out checkpoints/tiny

Adam (0.9, 0.98), the paper's warm-up / inverse-square-root schedule, label smoothing,
gradient clipping, length-bucketed batches, a wall-clock budget, periodic validation
(BLEU, chrF, exact match) and a JSON-lines log in the checkpoint directory. Under torchrun,
DistributedDataParallel (gloo on the CPU, nccl on CUDA): every rank trains on its own buckets of
each global batch; rank 0 alone validates, logs and writes checkpoints and snapshots.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import TypedDict

import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

from ..checkpoints import snapshots as snapshot_files
from ..checkpoints.checkpoint import TRAIN_LOG, load_checkpoint, save_checkpoint
from ..engine.config import ModelConfig
from ..engine.tokenizer import Tokenizer, normalize_source, project_tokenizer
from ..engine.tokens import BOS_ID, EOS_ID, PAD_ID, pad_rows
from ..engine.transformer import Transformer
from .corpus import read_pairs
from .distributed import World, join, leave
from .evaluation import translate_many, translation_scores
from .presets import PRESETS, Preset

OPTIMIZER_STATE, TRAIN_STATE = "optimizer.safetensors", "train_state.json"
STAGED_TOKENIZER = ".tokenizer-in-training.model"


def ensure_corpus(data: Path, preset: Preset, seed: int) -> dict[str, Path]:
    """The corpus splits in `data`, generated there first when missing."""
    paths = {split: data / f"{split}.tsv" for split in ("train", "valid", "test")}
    if not all(p.is_file() for p in paths.values()):
        from .corpus import write_splits

        print(f"Generating the corpus in {data} ...", file=sys.stderr)
        write_splits(data, preset.n_train, preset.n_valid, preset.n_test, seed)
    return paths


def learning_rate(step: int, d_model: int, warmup: int, factor: float) -> float:
    """lrate = factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)  (paper, 5.3)."""
    step = max(step, 1)
    return factor * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def make_batches(lengths: list[int], max_tokens: int, rng: random.Random) -> list[list[int]]:
    """Group examples of similar length so that padded batches hold about max_tokens tokens."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], rng.random()))
    batches: list[list[int]] = []
    current: list[int] = []
    width = 0
    for i in order:
        wider = max(width, lengths[i])
        if current and wider * (len(current) + 1) > max_tokens:
            batches.append(current)
            current, wider = [], lengths[i]
        current.append(i)
        width = wider
    if current:
        batches.append(current)
    rng.shuffle(batches)
    return batches


def pick_device(name: str) -> torch.device:
    """'auto' is CUDA when present, else the CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def _append_log(out: Path, record: dict) -> None:
    with open(out / TRAIN_LOG, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


class TrainState(TypedDict):
    """Where a run stands: what train_state.json keeps for a resumed run."""

    step: int
    epoch: int
    seconds: float  # of training, over every resumed part
    tokens: int  # target tokens seen


def _save_state(out: Path, optimizer: torch.optim.Optimizer, state: TrainState) -> None:
    tensors = {}
    for index, param_state in optimizer.state_dict()["state"].items():
        for key, value in param_state.items():
            tensors[f"{index}.{key}"] = value.detach().cpu().reshape(-1) if key == "step" else value.detach().cpu()
    save_file(tensors, str(out / OPTIMIZER_STATE))
    (out / TRAIN_STATE).write_text(json.dumps(state, indent=2) + "\n")


def _load_state(out: Path, optimizer: torch.optim.Optimizer) -> TrainState:
    tensors = load_file(str(out / OPTIMIZER_STATE))
    state_dict = optimizer.state_dict()
    for name, value in tensors.items():
        index, key = name.split(".", 1)
        state_dict["state"].setdefault(int(index), {})[key] = value.reshape(()) if key == "step" else value
    optimizer.load_state_dict(state_dict)
    return json.loads((out / TRAIN_STATE).read_text())


def source_ids(tokenizer: Tokenizer, english: str, max_len: int) -> list[int]:
    """The encoder's input for an English sentence of the corpus, as in training: canonical text, cut, EOS."""
    return tokenizer.encode(normalize_source(english).text)[: max_len - 1] + [EOS_ID]


def target_ids(tokenizer: Tokenizer, french: str, max_len: int) -> list[int]:
    """BOS, the French pieces (cut) and EOS: the decoder reads all but the last, and predicts all but the first."""
    return [BOS_ID] + tokenizer.encode(french)[: max_len - 1] + [EOS_ID]


def validation_loss(
    model: Transformer, tokenizer: Tokenizer, rows: list[tuple[str, str, str]], batch_size: int = 100
) -> float:
    """Cross-entropy per target piece (nats, no label smoothing) of the validation pairs, teacher-forced."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    total, count = 0.0, 0
    with torch.inference_mode():
        for start in range(0, len(rows), batch_size):
            chunk = rows[start : start + batch_size]
            src = pad_rows([source_ids(tokenizer, en, model.cfg.max_len) for en, _, _ in chunk], device)
            tgt = pad_rows([target_ids(tokenizer, fr, model.cfg.max_len) for _, fr, _ in chunk], device)
            logits = model(src, tgt[:, :-1])
            total += float(
                F.cross_entropy(
                    logits.reshape(-1, logits.size(-1)).float(),
                    tgt[:, 1:].reshape(-1),
                    ignore_index=PAD_ID,
                    reduction="sum",
                )
            )
            count += int((tgt[:, 1:] != PAD_ID).sum())
    model.train(was_training)
    return total / max(count, 1)


def step_batches(batches: list[list[int]], world: World, accumulate: int) -> Iterator[list[list[int]]]:
    """This rank's micro-batches, step by step: a step takes the next world.size * accumulate buckets
    (the global batch) and rank r trains on its own `accumulate` of them. The last buckets of an
    epoch that do not fill a whole step are left out, so that every rank takes the same steps."""
    per_step = world.size * accumulate
    if len(batches) < per_step:
        raise ValueError(
            f"an epoch has {len(batches)} batches, fewer than one step takes ({world.size} ranks x "
            f"{accumulate} accumulated): use fewer processes or a smaller --accumulate"
        )
    for start in range(0, len(batches) - per_step + 1, per_step):
        first = start + world.rank * accumulate
        yield batches[first : first + accumulate]


def train(
    preset_name: str,
    out: Path,
    data: Path | None = None,
    seed: int = 1,
    budget_minutes: float | None = None,
    max_steps: int | None = None,
    resume: bool = False,
    device_name: str = "auto",
    progress: bool = True,
    command: str = "",
    preset: Preset | None = None,
    snapshots: int = 0,
    accumulate: int = 1,
) -> dict:
    """Train (or resume) a checkpoint in `out`; return its card. `preset` replaces the named one's
    settings (the recipe comparison varies them), the corpus stays the named preset's. `snapshots`
    keeps that many log-spaced weights of the run in `out`/snapshots; `accumulate` sums the gradients
    of that many buckets per step. Under torchrun every rank calls this; rank 0 alone writes."""
    preset = preset or PRESETS[preset_name]
    if snapshots == 1 or snapshots < 0:
        raise ValueError("--snapshots keeps the first and the last at least: 0 (none) or 2 and more")
    world, device = join(pick_device(device_name))
    out = Path(out)
    data = Path(data) if data else Path("data") / f"corpus-{preset_name}-seed{seed}"
    if world.leader:
        ensure_corpus(data, preset, seed)
    world.barrier()
    paths = ensure_corpus(data, preset, seed)
    train_rows, valid_rows = read_pairs(paths["train"]), read_pairs(paths["valid"])
    torch.manual_seed(seed)
    rng = random.Random(seed)

    if resume:
        checkpoint = load_checkpoint(out)
        model, tokenizer = checkpoint.model, project_tokenizer(checkpoint.tokenizer)
    else:
        if world.leader:
            out.mkdir(parents=True, exist_ok=True)
            (out / TRAIN_LOG).unlink(missing_ok=True)
            shutil.rmtree(out / snapshot_files.FOLDER, ignore_errors=True)
            sources = [normalize_source(en).text for en, _, _ in train_rows]
            # staged under another name: the checkpoint's own files change together, at its first save
            Tokenizer.train(sources[:100_000] + [fr for _, fr, _ in train_rows[:100_000]], preset.vocab_size).save(
                out / STAGED_TOKENIZER
            )
        world.barrier()
        tokenizer = Tokenizer.load(out / STAGED_TOKENIZER)
        config = ModelConfig.from_dict({**preset.model.to_dict(), "vocab_size": tokenizer.vocab_size})
        model = Transformer(config)
    model.to(device).train()
    net = (
        DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
        if world.distributed
        else model
    )
    if world.rank:
        torch.manual_seed(seed + world.rank)  # the same initial weights, but each rank its own dropout
    cfg = model.cfg
    src = [source_ids(tokenizer, en, cfg.max_len) for en, _, _ in train_rows]
    tgt = [target_ids(tokenizer, fr, cfg.max_len) for _, fr, _ in train_rows]
    lengths = [max(len(s), len(t) - 1) for s, t in zip(src, tgt, strict=True)]
    optimizer = torch.optim.Adam(model.parameters(), lr=0.0, betas=(0.9, 0.98), eps=1e-9)
    state: TrainState = {"step": 0, "epoch": 0, "seconds": 0.0, "tokens": 0}
    if resume:
        state = _load_state(out, optimizer)
        rng = random.Random(seed + state["step"])  # a resumed run does not replay the first batches
        if world.leader:  # written by the interrupted run after its last save: weights this run will not have
            snapshot_files.drop_after(out, state["step"])
    budget = 60 * (budget_minutes if budget_minutes is not None else preset.budget_minutes)
    valid_sources = [normalize_source(en).text for en, _, _ in valid_rows[: preset.valid_sentences]]
    valid_refs = [fr for _, fr, _ in valid_rows[: preset.valid_sentences]]

    started = time.monotonic() - state["seconds"]
    bar = tqdm(
        total=max_steps,
        initial=state["step"],
        disable=not (progress and world.leader),
        unit="step",
        dynamic_ncols=True,
        mininterval=2.0,
    )
    window_loss, window_tokens, window_start = 0.0, 0, time.monotonic()
    done = False
    while not done:
        for micro_batches in step_batches(make_batches(lengths, preset.max_tokens, rng), world, accumulate):
            step = state["step"] + 1
            lr = learning_rate(step, cfg.d_model, preset.warmup, preset.lr_factor)
            for group in optimizer.param_groups:
                group["lr"] = lr
            pairs = [
                (pad_rows([src[i] for i in batch], device), pad_rows([tgt[i] for i in batch], device))
                for batch in micro_batches
            ]
            (step_tokens,) = world.sum(sum(int((target[:, 1:] != PAD_ID).sum()) for _, target in pairs))
            optimizer.zero_grad(set_to_none=True)
            loss_sum = 0.0
            for k, (source, target) in enumerate(pairs):
                # the gradients are synchronised once per step, with the last micro-batch
                last = k == len(pairs) - 1
                with net.no_sync() if isinstance(net, DistributedDataParallel) and not last else nullcontext():
                    logits = net(source, target[:, :-1])
                    loss = F.cross_entropy(
                        logits.reshape(-1, logits.size(-1)).float(),
                        target[:, 1:].reshape(-1),
                        ignore_index=PAD_ID,
                        label_smoothing=preset.label_smoothing,
                        reduction="sum",
                    )
                    # per target token of the global batch; DDP averages over ranks, so scale back to a sum
                    (loss * (world.size / step_tokens)).backward()
                loss_sum += loss.item()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            seconds = time.monotonic() - started
            leader_out_of_time = world.leader and seconds >= budget
            global_loss, stop = world.sum(loss_sum, float(leader_out_of_time))
            state.update({"step": step, "tokens": state["tokens"] + int(step_tokens), "seconds": seconds})
            window_loss += global_loss
            window_tokens += int(step_tokens)
            bar.update(1)
            out_of_time = stop > 0 or (max_steps is not None and step >= max_steps)
            if world.leader and snapshots and snapshot_files.is_candidate(step):
                snapshot_files.save(out, model, step)
                snapshot_files.thin(out, snapshot_files.KEPT_WHILE_TRAINING * snapshots)  # bounded disk use
            if world.leader and (step % 25 == 0 or out_of_time):
                elapsed = time.monotonic() - window_start
                record = {
                    "step": step,
                    "epoch": state["epoch"],
                    "loss": round(window_loss / window_tokens, 4),
                    "lr": lr,
                    "tokens_per_s": round(window_tokens / elapsed, 1),
                    "elapsed_s": round(state["seconds"], 1),
                }
                _append_log(out, record)
                bar.set_postfix(loss=f"{record['loss']:.3f}", lr=f"{lr:.2e}", tok_s=f"{record['tokens_per_s']:.0f}")
                window_loss, window_tokens, window_start = 0.0, 0, time.monotonic()
            if world.leader and (step % preset.valid_every == 0 or out_of_time):
                scores = translation_scores(translate_many(model, tokenizer, valid_sources), valid_refs)
                valid_loss = validation_loss(model, tokenizer, valid_rows[: preset.valid_sentences])
                model.train()
                _append_log(
                    out,
                    {
                        "step": step,
                        "elapsed_s": round(state["seconds"], 1),
                        **{f"valid_{k}": v for k, v in scores.items() if k != "n"},
                        "valid_loss": round(valid_loss, 4),
                    },
                )
                tqdm.write(
                    f"step {step}: valid BLEU {scores['bleu']:.2f} chrF {scores['chrf']:.2f} "
                    f"exact {scores['exact_match']:.1f}%",
                    file=sys.stderr,
                )
                card = _card(
                    command or f"python -m model.train --preset {preset_name} --seed {seed}",
                    preset_name,
                    preset,
                    cfg,
                    model,
                    data,
                    seed,
                    state,
                    device,
                    scores,
                    train_rows,
                    len(valid_rows),
                    world,
                    accumulate,
                )
                save_checkpoint(out, model, tokenizer, card)
                _save_state(out, optimizer, state)
            if out_of_time:
                done = True
                break
        else:
            state["epoch"] += 1
    bar.close()
    if world.leader:
        (out / STAGED_TOKENIZER).unlink(missing_ok=True)
    if world.leader and snapshots:
        snapshot_files.save(out, model, state["step"])
        snapshot_files.thin(out, snapshots)
    world.barrier()
    # the DistributedDataParallel wrapper goes before its process group: destroyed after it, its
    # reducer's teardown could abort the process ("terminate called without an active exception")
    del net
    leave(world)
    return json.loads((out / "card.json").read_text())


def _card(
    command: str,
    preset_name: str,
    preset: Preset,
    cfg: ModelConfig,
    model: Transformer,
    data: Path,
    seed: int,
    state: TrainState,
    device: torch.device,
    valid: dict,
    train_rows: list,
    n_valid: int,
    world: World,
    accumulate: int,
) -> dict:
    known = sorted({w for en, _, _ in train_rows for w in normalize_source(en).text.split()})
    return {
        "name": f"Transformer Anatomy {preset_name} model",
        "task": "English -> French on the generated fragment of the project lexicon",
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": command,
        "preset": preset_name,
        "parameters": sum(p.numel() for p in model.parameters()),
        "config": cfg.to_dict(),
        "corpus": {
            "generator": "model.corpus",
            "seed": seed,
            "data": str(data),
            "train_pairs": len(train_rows),
            "valid_pairs": n_valid,
            "test_pairs": preset.n_test,
        },
        "training": {
            "steps": state["step"],
            "epochs": state["epoch"],
            "seconds": round(state["seconds"], 1),
            "target_tokens": state["tokens"],
            "device": str(device),
            "optimizer": "Adam(0.9, 0.98, 1e-9)",
            "warmup": preset.warmup,
            "lr_factor": preset.lr_factor,
            "label_smoothing": preset.label_smoothing,
            "max_tokens_per_batch": preset.max_tokens,
            "world_size": world.size,
            "accumulate": accumulate,
            "global_batch_tokens": preset.max_tokens * world.size * accumulate,
            "gradient_clip": 1.0,
        },
        "validation": valid,
        "known_words": known,
    }


def main(argv: list[str] | None = None) -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", choices=sorted(PRESETS), default="default")
    parser.add_argument("--out", type=Path, help="checkpoint directory (default: checkpoints/<preset>)")
    parser.add_argument("--data", type=Path, help="corpus directory (generated there when missing)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--budget-minutes",
        type=float,
        help="wall-clock budget in minutes, counted across resumes (default: the preset's)",
    )
    parser.add_argument("--max-steps", type=int)
    parser.add_argument("--resume", action="store_true", help="continue the checkpoint in --out")
    parser.add_argument("--device", default="auto", help="auto (CUDA when present), cpu or cuda")
    parser.add_argument(
        "--threads",
        type=int,
        default=0,
        help="torch intra-op threads (0: torch's default). 1 was measured 2-7x faster "
        "than 2 while another process shares a 2-core machine",
    )
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument(
        "--snapshots",
        type=int,
        default=0,
        help="keep this many log-spaced snapshots of the weights in <out>/snapshots "
        "(the first at step 50, the last the final weights)",
    )
    parser.add_argument(
        "--accumulate",
        type=int,
        default=1,
        help="buckets per step and rank, their gradients summed (a larger global batch)",
    )
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    out = args.out or Path("checkpoints") / args.preset
    card = train(
        args.preset,
        out,
        args.data,
        args.seed,
        args.budget_minutes,
        args.max_steps,
        args.resume,
        args.device,
        not args.no_progress,
        "python -m model.train " + " ".join(argv or sys.argv[1:]),
        snapshots=args.snapshots,
        accumulate=args.accumulate,
    )
    if int(os.environ.get("RANK", "0")):
        return
    print(
        json.dumps(
            {"checkpoint": str(out), "validation": card["validation"], "steps": card["training"]["steps"]}, indent=2
        )
    )


if __name__ == "__main__":
    main()
