"""The training loop: Adam's steps on the paper's learning-rate schedule over each rank's micro-batches,
epoch after epoch until the budget or the last step, while rank 0 keeps snapshots, writes the training
log every 25 steps, and validates and saves the checkpoint every `valid_every` steps and at the end."""

from __future__ import annotations

import json
import random
import sys
import time
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

from ..checkpoints import snapshots as snapshot_files
from ..checkpoints.checkpoint import TRAIN_LOG, save_checkpoint
from ..engine.tokenizer import Tokenizer, normalize_source
from ..engine.tokens import PAD_ID, pad_rows
from ..engine.transformer import Transformer
from .batches import make_batches, source_ids, step_batches, target_ids
from .card import training_card
from .distributed import World
from .evaluation import translate_many, translation_scores, validation_loss
from .presets import Preset
from .train_state import TrainState, save_state


def learning_rate(step: int, d_model: int, warmup: int, factor: float) -> float:
    """lrate = factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)  (paper, 5.3)."""
    step = max(step, 1)
    return factor * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def _append_log(out: Path, record: dict) -> None:
    with open(out / TRAIN_LOG, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


@dataclass(frozen=True)
class Run:
    """What one call of `train.train` holds fixed from start to end: its settings, its corpus, where it
    writes and the processes it trains in."""

    preset_name: str
    preset: Preset
    out: Path
    data: Path
    seed: int
    command: str  # the card's
    world: World
    device: torch.device
    accumulate: int
    snapshots: int
    budget: float  # seconds of training, over every resumed part
    max_steps: int | None
    progress: bool
    train_rows: list[tuple[str, str, str]]
    valid_rows: list[tuple[str, str, str]]


def run_steps(
    run: Run,
    net: torch.nn.Module,
    model: Transformer,
    tokenizer: Tokenizer,
    optimizer: torch.optim.Optimizer,
    state: TrainState,
    rng: random.Random,
) -> None:
    """Take steps, epoch after epoch, until the budget or `max_steps` is spent (`state` follows them); the
    leader keeps snapshots, logs every 25 steps, and validates and saves every `valid_every`."""
    preset, world, device, out = run.preset, run.world, run.device, run.out
    cfg = model.cfg
    src = [source_ids(tokenizer, en, cfg.max_len) for en, _, _ in run.train_rows]
    tgt = [target_ids(tokenizer, fr, cfg.max_len) for _, fr, _ in run.train_rows]
    lengths = [max(len(s), len(t) - 1) for s, t in zip(src, tgt, strict=True)]
    valid_sources = [normalize_source(en).text for en, _, _ in run.valid_rows[: preset.valid_sentences]]
    valid_refs = [fr for _, fr, _ in run.valid_rows[: preset.valid_sentences]]

    started = time.monotonic() - state["seconds"]
    bar = _progress_bar(run, state)
    window_loss, window_tokens, window_start = 0.0, 0, time.monotonic()
    done = False
    while not done:
        for micro_batches in step_batches(make_batches(lengths, preset.max_tokens, rng), world, run.accumulate):
            step = state["step"] + 1
            lr = learning_rate(step, cfg.d_model, preset.warmup, preset.lr_factor)
            for group in optimizer.param_groups:
                group["lr"] = lr
            pairs = [
                (pad_rows([src[i] for i in batch], device), pad_rows([tgt[i] for i in batch], device))
                for batch in micro_batches
            ]
            (step_tokens,) = world.sum(sum(int((target[:, 1:] != PAD_ID).sum()) for _, target in pairs))
            loss_sum = _optimizer_step(net, model, optimizer, pairs, world, step_tokens, preset.label_smoothing)
            seconds = time.monotonic() - started
            leader_out_of_time = world.leader and seconds >= run.budget
            global_loss, stop = world.sum(loss_sum, float(leader_out_of_time))
            state.update({"step": step, "tokens": state["tokens"] + int(step_tokens), "seconds": seconds})
            window_loss += global_loss
            window_tokens += int(step_tokens)
            bar.update(1)
            out_of_time = stop > 0 or (run.max_steps is not None and step >= run.max_steps)
            if world.leader and run.snapshots and snapshot_files.is_candidate(step):
                snapshot_files.save(out, model, step)
                snapshot_files.thin(out, snapshot_files.KEPT_WHILE_TRAINING * run.snapshots)  # bounded disk use
            if world.leader and (step % 25 == 0 or out_of_time):
                _log_window(out, bar, state, step, lr, window_loss, window_tokens, window_start)
                window_loss, window_tokens, window_start = 0.0, 0, time.monotonic()
            if world.leader and (step % preset.valid_every == 0 or out_of_time):
                _validate_and_save(run, model, tokenizer, optimizer, state, step, valid_sources, valid_refs)
            if out_of_time:
                done = True
                break
        else:
            state["epoch"] += 1
    bar.close()


def _progress_bar(run: Run, state: TrainState) -> tqdm:
    """The steps' progress bar, from the step the run starts at (shown by the leader, when asked for)."""
    return tqdm(
        total=run.max_steps,
        initial=state["step"],
        disable=not (run.progress and run.world.leader),
        unit="step",
        dynamic_ncols=True,
        mininterval=2.0,
    )


def _optimizer_step(
    net: torch.nn.Module,
    model: Transformer,
    optimizer: torch.optim.Optimizer,
    pairs: list[tuple[torch.Tensor, torch.Tensor]],
    world: World,
    step_tokens: float,
    label_smoothing: float,
) -> float:
    """One step over this rank's micro-batches (source, target): their gradients summed, clipped and
    applied; returns the sum of their losses (label-smoothed cross-entropy)."""
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
                label_smoothing=label_smoothing,
                reduction="sum",
            )
            # per target token of the global batch; DDP averages over ranks, so scale back to a sum
            (loss * (world.size / step_tokens)).backward()
        loss_sum += loss.item()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss_sum


def _log_window(
    out: Path,
    bar: tqdm,
    state: TrainState,
    step: int,
    lr: float,
    window_loss: float,
    window_tokens: int,
    window_start: float,
) -> None:
    """The training log's line for the steps since `window_start`, also shown beside the progress bar."""
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


def _validate_and_save(
    run: Run,
    model: Transformer,
    tokenizer: Tokenizer,
    optimizer: torch.optim.Optimizer,
    state: TrainState,
    step: int,
    valid_sources: list[str],
    valid_refs: list[str],
) -> None:
    """Score the validation sentences and log the scores, then save the checkpoint with its card and the
    state a resumed run starts from."""
    preset, out = run.preset, run.out
    scores = translation_scores(translate_many(model, tokenizer, valid_sources), valid_refs)
    valid_loss = validation_loss(model, tokenizer, run.valid_rows[: preset.valid_sentences])
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
        f"step {step}: valid BLEU {scores['bleu']:.2f} chrF {scores['chrf']:.2f} exact {scores['exact_match']:.1f}%",
        file=sys.stderr,
    )
    card = training_card(
        run.command,
        run.preset_name,
        preset,
        model.cfg,
        model,
        run.data,
        run.seed,
        state,
        run.device,
        scores,
        run.train_rows,
        len(run.valid_rows),
        run.world,
        run.accumulate,
    )
    save_checkpoint(out, model, tokenizer, card)
    save_state(out, optimizer, state)
