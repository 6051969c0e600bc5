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
from pathlib import Path

import torch
from torch.nn.parallel import DistributedDataParallel

from ..checkpoints import snapshots as snapshot_files
from ..checkpoints.checkpoint import TRAIN_LOG, load_checkpoint
from ..engine.config import ModelConfig
from ..engine.tokenizer import Tokenizer, normalize_source, project_tokenizer
from ..engine.transformer import Transformer
from .corpus import read_pairs
from .distributed import World, join, leave
from .loop import Run, run_steps
from .presets import PRESETS, Preset
from .train_state import TrainState, load_state

STAGED_TOKENIZER = ".tokenizer-in-training.model"


def ensure_corpus(data: Path, preset: Preset, seed: int) -> dict[str, Path]:
    """The corpus splits in `data`, generated there first when missing."""
    paths = {split: data / f"{split}.tsv" for split in ("train", "valid", "test")}
    if not all(p.is_file() for p in paths.values()):
        from .corpus import write_splits

        print(f"Generating the corpus in {data} ...", file=sys.stderr)
        write_splits(data, preset.n_train, preset.n_valid, preset.n_test, seed)
    return paths


def pick_device(name: str) -> torch.device:
    """'auto' is CUDA when present, else the CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


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
    train_rows, valid_rows = _read_corpus(data, preset, seed, world)
    torch.manual_seed(seed)
    rng = random.Random(seed)

    model, tokenizer = _model_to_train(out, preset, train_rows, world, device, resume)
    net = _wrapped(model, world, device)
    if world.rank:
        torch.manual_seed(seed + world.rank)  # the same initial weights, but each rank its own dropout
    optimizer, state = _optimizer_and_state(out, model, world, resume)
    if resume:
        rng = random.Random(seed + state["step"])  # a resumed run does not replay the first batches
    run = Run(
        preset_name=preset_name,
        preset=preset,
        out=out,
        data=data,
        seed=seed,
        command=command or f"python -m model.train --preset {preset_name} --seed {seed}",
        world=world,
        device=device,
        accumulate=accumulate,
        snapshots=snapshots,
        budget=60 * (budget_minutes if budget_minutes is not None else preset.budget_minutes),
        max_steps=max_steps,
        progress=progress,
        train_rows=train_rows,
        valid_rows=valid_rows,
    )
    run_steps(run, net, model, tokenizer, optimizer, state, rng)
    if world.leader:
        _leave_files(out, model, state, snapshots)
    world.barrier()
    # the DistributedDataParallel wrapper goes before its process group: destroyed after it, its
    # reducer's teardown could abort the process ("terminate called without an active exception")
    del net
    leave(world)
    return json.loads((out / "card.json").read_text())


def _model_to_train(
    out: Path, preset: Preset, train_rows: list[tuple[str, str, str]], world: World, device: torch.device, resume: bool
) -> tuple[Transformer, Tokenizer]:
    """The model to train, on `device` in training mode, and its tokenizer: the checkpoint's in `out` when
    resuming, else new ones."""
    if resume:
        checkpoint = load_checkpoint(out)
        model, tokenizer = checkpoint.model, project_tokenizer(checkpoint.tokenizer)
    else:
        model, tokenizer = _new_model(out, preset, train_rows, world)
    model.to(device).train()
    return model, tokenizer


def _wrapped(model: Transformer, world: World, device: torch.device) -> torch.nn.Module:
    """What the steps run: the model itself, or, under torchrun, the model in DistributedDataParallel."""
    if not world.distributed:
        return model
    return DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)


def _optimizer_and_state(
    out: Path, model: Transformer, world: World, resume: bool
) -> tuple[torch.optim.Optimizer, TrainState]:
    """Adam over the model's weights and the state the run starts from: step 0, or, when resuming, the
    state (and the optimizer's) the interrupted run saved in `out`."""
    optimizer = torch.optim.Adam(model.parameters(), lr=0.0, betas=(0.9, 0.98), eps=1e-9)
    if not resume:
        return optimizer, {"step": 0, "epoch": 0, "seconds": 0.0, "tokens": 0}
    state = load_state(out, optimizer)
    if world.leader:  # written by the interrupted run after its last save: weights this run will not have
        snapshot_files.drop_after(out, state["step"])
    return optimizer, state


def _leave_files(out: Path, model: Transformer, state: TrainState, snapshots: int) -> None:
    """The leader's last writes in `out`: the staged tokenizer goes (the checkpoint has its own), and with
    `snapshots`, the final weights join the snapshots, thinned to that many."""
    (out / STAGED_TOKENIZER).unlink(missing_ok=True)
    if snapshots:
        snapshot_files.save(out, model, state["step"])
        snapshot_files.thin(out, snapshots)


def _read_corpus(
    data: Path, preset: Preset, seed: int, world: World
) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """The training and validation pairs, the corpus generated first by the leader when missing."""
    if world.leader:
        ensure_corpus(data, preset, seed)
    world.barrier()
    paths = ensure_corpus(data, preset, seed)
    return read_pairs(paths["train"]), read_pairs(paths["valid"])


def _new_model(
    out: Path, preset: Preset, train_rows: list[tuple[str, str, str]], world: World
) -> tuple[Transformer, Tokenizer]:
    """A new model of the preset's shape and its tokenizer, trained by the leader on the training pairs
    (which first clears `out` of an earlier run's log and snapshots)."""
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
    return Transformer(config), tokenizer


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
