"""Attention masks as boolean tensors: True where a query may look at a key."""

from __future__ import annotations

import torch


def subsequent_mask(size: int, device: torch.device | None = None) -> torch.Tensor:
    """(size, size) lower-triangular mask: position i may attend to positions 0..i."""
    return torch.ones(size, size, dtype=torch.bool, device=device).tril()


def padding_mask(ids: torch.Tensor, pad_id: int) -> torch.Tensor:
    """(B, 1, 1, S) mask that hides padded key positions from every query and head."""
    return (ids != pad_id)[:, None, None, :]


def combine(*masks: torch.Tensor | None) -> torch.Tensor | None:
    """Logical AND of the given masks (broadcast), or None when there is none."""
    present = [m for m in masks if m is not None]
    if not present:
        return None
    out = present[0]
    for mask in present[1:]:
        out = out & mask
    return out
