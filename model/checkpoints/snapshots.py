"""Training snapshots: the weights at roughly log-spaced steps, kept in `<checkpoint>/snapshots/`.

While training, a candidate is written at every step of a fine geometric grid (50, 62, 78, ...),
because a wall-clock budget does not say in advance at which step the run will end; at most 3N
are kept on disk as it goes (thinned the same way). When the run ends, its final weights become
the last snapshot and the candidates are thinned to the N whose steps lie closest to an even
spacing in log(step) from the first to the last.
Snapshots are float16 safetensors (half the size of the checkpoint's float32 weights).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import torch
from safetensors.torch import save_file

from i18n import later

from ..engine.transformer import Transformer
from ..errors import CheckpointError
from .weights import read_tensors

FOLDER = "snapshots"
FIRST_STEP = 50
GRID_RATIO = 1.25
KEPT_WHILE_TRAINING = 3  # x N candidates at most on disk while a run goes (thinned log-evenly as it goes)
_NAME = re.compile(r"^step-(\d{6,})\.safetensors$")


def file_name(step: int) -> str:
    """The file of the snapshot at `step`."""
    return f"step-{step:06d}.safetensors"


def is_candidate(step: int) -> bool:
    """Whether a running training writes a candidate snapshot at `step` (a geometric grid from FIRST_STEP)."""
    if step < FIRST_STEP:
        return False
    k = round(math.log(step / FIRST_STEP, GRID_RATIO))
    return step == round(FIRST_STEP * GRID_RATIO**k)


def steps(checkpoint: Path) -> list[int]:
    """The steps of the snapshots kept with a checkpoint, in order (empty when there are none)."""
    folder = Path(checkpoint) / FOLDER
    if not folder.is_dir():
        return []
    return sorted(int(match.group(1)) for match in map(_NAME.match, (p.name for p in folder.iterdir())) if match)


def save(checkpoint: Path, model: Transformer, step: int) -> Path:
    """Write the model's parameters at `step` as float16."""
    folder = Path(checkpoint) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    tensors = {name: p.detach().cpu().to(torch.float16).contiguous() for name, p in model.named_parameters()}
    path = folder / file_name(step)
    save_file(tensors, str(path), metadata={"format": "pt", "step": str(step)})
    return path


def log_spaced(available: list[int], count: int) -> list[int]:
    """`count` (2 or more) of the available steps (the first and the last always among them), each the
    closest in log(step) to its point of an even log spacing; fewer when fewer are available."""
    if count < 2:
        raise ValueError("keep at least the first and the last snapshot")
    if len(available) <= count:
        return list(available)
    first, last = available[0], available[-1]
    chosen = [first, last]
    for k in range(1, count - 1):
        target = math.log(first) + (math.log(last) - math.log(first)) * k / (count - 1)
        free = [s for s in available if s not in chosen]
        chosen.append(min(free, key=lambda s: abs(math.log(s) - target)))
    return sorted(chosen)


def thin(checkpoint: Path, count: int) -> list[int]:
    """Delete every snapshot but the `count` log-spaced ones; return the steps kept."""
    available = steps(checkpoint)
    keep = log_spaced(available, count)
    for step in set(available) - set(keep):
        (Path(checkpoint) / FOLDER / file_name(step)).unlink()
    return keep


def drop_after(checkpoint: Path, step: int) -> None:
    """Delete the snapshots of steps after `step` (a resumed run starts again from there)."""
    for after in (s for s in steps(checkpoint) if s > step):
        (Path(checkpoint) / FOLDER / file_name(after)).unlink()


def read(checkpoint: Path, step: int) -> dict[str, torch.Tensor]:
    """The tensors of the snapshot at `step`, or a CheckpointError listing the steps there are."""
    path = Path(checkpoint) / FOLDER / file_name(step)
    if not path.is_file():
        available = steps(checkpoint)
        if not available:
            raise CheckpointError(
                later(
                    "The checkpoint at {path} has no snapshot at step {step} (snapshots: none).",
                    path=str(checkpoint),
                    step=step,
                )
            )
        raise CheckpointError(
            later(
                "The checkpoint at {path} has no snapshot at step {step} (snapshots: {steps}).",
                path=str(checkpoint),
                step=step,
                steps=", ".join(map(str, available)),
            )
        )
    return read_tensors([path])
