"""The tutorials' recipe claims, measured: Post-LN or Pre-LN, with the paper's warm-up or without,
label smoothing 0.1 or 0.

    python -m model.recipes --out checkpoints/default/recipes --budget-minutes 11

Six runs of the default model's shape on the default corpus, same seed, same wall-clock budget
each, one torch thread each, two at a time (one per core), paired so that every run shares the
machine with exactly one other run. Each run's training log is kept as `<name>.jsonl` (a few KB)
and `summary.json` holds the last validation of each; the weights are thrown away.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from ..checkpoints.checkpoint import TRAIN_LOG
from .presets import PRESETS, Preset
from .recipe_results import RECIPES, SUMMARY, Recipe

WARMUP_STEPS = 200  # a fifth of a run: the budget allows about 1,000 steps, the shipped model's 800 would fill it


def preset_for(recipe: Recipe, budget_minutes: float, base: Preset = PRESETS["default"]) -> Preset:
    """The default preset with the recipe's choices and the comparison's budget."""
    return replace(
        base,
        model=replace(base.model, norm_first=recipe.norm_first),
        warmup=WARMUP_STEPS if recipe.warmup else 1,
        label_smoothing=recipe.label_smoothing,
        budget_minutes=budget_minutes,
        valid_every=100,
        valid_sentences=300,
    )


def run_one(name: str, out: Path, budget_minutes: float, seed: int, data: Path | None) -> None:
    """Train one recipe into a scratch directory and keep its log as out/<name>.jsonl."""
    from .train import train

    recipe = next(r for r in RECIPES if r.name == name)
    with tempfile.TemporaryDirectory() as scratch:
        train(
            "default",
            Path(scratch),
            data,
            seed,
            progress=False,
            preset=preset_for(recipe, budget_minutes),
            command=f"python -m model.recipes (run {name})",
        )
        shutil.copyfile(Path(scratch) / TRAIN_LOG, out / f"{name}.jsonl")


def summarize(out: Path, budget_minutes: float) -> dict:
    """The last training and validation record of each run, with what was varied."""
    runs = {}
    for recipe in RECIPES:
        log = out / f"{recipe.name}.jsonl"
        if not log.is_file():
            continue
        records = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
        trained = [r for r in records if "loss" in r]
        validated = [r for r in records if "valid_bleu" in r]
        runs[recipe.name] = {
            "norm_first": recipe.norm_first,
            "warmup": recipe.warmup,
            "label_smoothing": recipe.label_smoothing,
            "steps": trained[-1]["step"] if trained else 0,
            "final_train_loss": trained[-1]["loss"] if trained else None,
            "diverged": any(r["loss"] != r["loss"] or r["loss"] > 20 for r in trained),
            "final_validation": validated[-1] if validated else None,
        }
    return {
        "budget_minutes_each": budget_minutes,
        "warmup_steps": WARMUP_STEPS,
        "threads_each": 1,
        "runs_at_once": 2,
        "runs": runs,
    }


def main(argv: list[str] | None = None) -> int:
    """Command line entry point: every run, two at a time, then the summary."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("checkpoints/default/recipes"))
    parser.add_argument("--budget-minutes", type=float, default=11.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data", type=Path, help="corpus directory (default: the default preset's)")
    parser.add_argument("--run", help="train this one recipe only (what the pairs run)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.run:
        import torch

        torch.set_num_threads(1)
        run_one(args.run, args.out, args.budget_minutes, args.seed, args.data)
        return 0
    from .train import ensure_corpus

    ensure_corpus(args.data or Path("data") / f"corpus-default-seed{args.seed}", PRESETS["default"], args.seed)
    for first, second in zip(RECIPES[0::2], RECIPES[1::2], strict=True):
        print(f"training {first.name} and {second.name}, {args.budget_minutes} minutes each ...", flush=True)
        common = ["--out", str(args.out), "--budget-minutes", str(args.budget_minutes), "--seed", str(args.seed)]
        common += ["--data", str(args.data)] if args.data else []
        pair = [
            subprocess.Popen([sys.executable, "-m", "model.recipes", "--run", recipe.name, *common])
            for recipe in (first, second)
        ]
        codes = [process.wait() for process in pair]
        if any(codes):
            print(f"a run failed (exit codes {codes})", file=sys.stderr)
            return 1
    summary = summarize(args.out, args.budget_minutes)
    (args.out / SUMMARY).write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
