"""What the recipe comparison (`python -m model.recipes`) left beside a checkpoint, read back, and
what it shows: the recipes, their logs and summary, and the findings stated from them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from i18n import later

SUMMARY = "summary.json"


@dataclass(frozen=True)
class Recipe:
    """One training setup of the comparison."""

    name: str
    norm_first: bool  # Pre-LN when True
    warmup: bool  # the paper's linear warm-up, or none (the inverse square root from step 1)
    label_smoothing: float


RECIPES = [
    Recipe("post-ln-warmup", False, True, 0.1),
    Recipe("pre-ln-warmup", True, True, 0.1),
    Recipe("post-ln-no-warmup", False, False, 0.1),
    Recipe("pre-ln-no-warmup", True, False, 0.1),
    Recipe("post-ln-warmup-ls0", False, True, 0.0),
    Recipe("pre-ln-warmup-ls0", True, True, 0.0),
]


def read_recipes(path: Path) -> tuple[dict, dict[str, list[dict]]]:
    """(summary, name -> log records) of a recipes directory; empty when it was never run."""
    path = Path(path)
    try:
        summary = json.loads((path / SUMMARY).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}, {}
    logs = {}
    for recipe in RECIPES:
        try:
            lines = (path / f"{recipe.name}.jsonl").read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        records = []
        for line in lines:
            try:
                records.append(json.loads(line))
            except ValueError:
                continue  # a line cut short
        logs[recipe.name] = records
    return (summary if isinstance(summary, dict) else {}), logs


def _last(summary: dict, name: str, key: str) -> float | None:
    run = summary.get("runs", {}).get(name) or {}
    value = (run.get("final_validation") or {}).get(key)
    return float(value) if isinstance(value, (int, float)) else None


def findings(summary: dict) -> list[str]:
    """What the runs show, read from their last validation: one sentence per claim, whatever it says (each said
    when shown, i18n.later)."""
    said: list[str] = []
    runs = summary.get("runs", {})
    for norm in ("post", "pre"):
        with_, without = f"{norm}-ln-warmup", f"{norm}-ln-no-warmup"
        a, b = _last(summary, with_, "valid_bleu"), _last(summary, without, "valid_bleu")
        if a is None or b is None:
            continue
        warm, cold = runs.get(with_) or {}, runs.get(without) or {}
        if cold.get("diverged"):
            said.append(
                later(
                    "{norm}-LN: validation BLEU {a:.1f} with the warm-up, {b:.1f} without (its training loss blew up).",
                    norm=norm.capitalize(),
                    a=a,
                    b=b,
                )
            )
            continue
        said.append(
            later(
                "{norm}-LN: validation BLEU {a:.1f} with the warm-up, {b:.1f} without (training loss {cold_loss:.2f} "
                "after {cold_steps} steps, against {warm_loss:.2f} after {warm_steps} with it).",
                norm=norm.capitalize(),
                a=a,
                b=b,
                cold_loss=cold.get("final_train_loss", float("nan")),
                cold_steps=cold.get("steps"),
                warm_loss=warm.get("final_train_loss", float("nan")),
                warm_steps=warm.get("steps"),
            )
        )
    for norm in ("post", "pre"):
        smooth, plain = f"{norm}-ln-warmup", f"{norm}-ln-warmup-ls0"
        loss_s, loss_p = _last(summary, smooth, "valid_loss"), _last(summary, plain, "valid_loss")
        bleu_s, bleu_p = _last(summary, smooth, "valid_bleu"), _last(summary, plain, "valid_bleu")
        if loss_s is None or loss_p is None or bleu_s is None or bleu_p is None:
            continue
        said.append(
            later(
                "{norm}-LN, label smoothing 0.1 against 0: validation cross-entropy {loss_s:.3f} against {loss_p:.3f} "
                "nats per piece (perplexity {ppl_s:.2f} against {ppl_p:.2f}), BLEU {bleu_s:.1f} against {bleu_p:.1f}.",
                norm=norm.capitalize(),
                loss_s=loss_s,
                loss_p=loss_p,
                ppl_s=2.718281828**loss_s,
                ppl_p=2.718281828**loss_p,
                bleu_s=bleu_s,
                bleu_p=bleu_p,
            )
        )
    return said
