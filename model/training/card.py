"""The card of a checkpoint a training run writes (card.json): the model, the corpus, the training
settings and progress, the latest validation and the words the model was trained on."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import torch

from ..engine.config import ModelConfig
from ..engine.tokenizer import normalize_source
from ..engine.transformer import Transformer
from .distributed import World
from .presets import Preset
from .train_state import TrainState


def training_card(
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
    """The card (card.json) of a checkpoint in training: what was trained on what, how, for how long,
    and its latest validation scores (`valid`)."""
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
