"""Special token ids fixed for every tokenizer and checkpoint of this project, and padding."""

from __future__ import annotations

import torch

PAD_ID = 0
UNK_ID = 1
BOS_ID = 2
EOS_ID = 3
SPECIAL_PIECES = {PAD_ID: "<pad>", UNK_ID: "<unk>", BOS_ID: "<s>", EOS_ID: "</s>"}


def pad_rows(rows: list[list[int]], device: torch.device | str | None = None) -> torch.Tensor:
    """(B, longest) tensor of id rows, padded on the right with PAD_ID."""
    width = max(len(r) for r in rows)
    return torch.tensor([list(r) + [PAD_ID] * (width - len(r)) for r in rows], device=device)
