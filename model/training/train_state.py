"""Where a training run stands, kept in the checkpoint directory for a resumed run: the optimizer's
state (optimizer.safetensors) and the step, epoch, seconds and tokens so far (train_state.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypedDict

import torch
from safetensors.torch import load_file, save_file

OPTIMIZER_STATE, TRAIN_STATE = "optimizer.safetensors", "train_state.json"


class TrainState(TypedDict):
    """Where a run stands: what train_state.json keeps for a resumed run."""

    step: int
    epoch: int
    seconds: float  # of training, over every resumed part
    tokens: int  # target tokens seen


def save_state(out: Path, optimizer: torch.optim.Optimizer, state: TrainState) -> None:
    """Write the optimizer's state and `state` into `out`, beside the checkpoint saved with them."""
    tensors = {}
    for index, param_state in optimizer.state_dict()["state"].items():
        for key, value in param_state.items():
            tensors[f"{index}.{key}"] = value.detach().cpu().reshape(-1) if key == "step" else value.detach().cpu()
    save_file(tensors, str(out / OPTIMIZER_STATE))
    (out / TRAIN_STATE).write_text(json.dumps(state, indent=2) + "\n")


def load_state(out: Path, optimizer: torch.optim.Optimizer) -> TrainState:
    """Load the optimizer's state saved in `out` into `optimizer`; return where the run stood."""
    tensors = load_file(str(out / OPTIMIZER_STATE))
    state_dict = optimizer.state_dict()
    for name, value in tensors.items():
        index, key = name.split(".", 1)
        state_dict["state"].setdefault(int(index), {})[key] = value.reshape(()) if key == "step" else value
    optimizer.load_state_dict(state_dict)
    return json.loads((out / TRAIN_STATE).read_text())
