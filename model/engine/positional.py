"""Positional information added to token embeddings."""

from __future__ import annotations

import math

import torch
from torch import nn


def sinusoidal_encoding(max_len: int, d_model: int, halves: bool = False) -> torch.Tensor:
    """(max_len, d_model): PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(same).

    With `halves` (Marian's layout) the same values are laid out as every sin in the first half
    of the dimensions, then every cos: PE[pos, i] = sin(...i...), PE[pos, d/2 + i] = cos(...i...).
    """
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    inv_freq = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model))
    sin, cos = torch.sin(position * inv_freq), torch.cos(position * inv_freq)  # (max_len, d/2) each
    if halves:
        return torch.cat([sin, cos], dim=1).float()
    table = torch.zeros(max_len, d_model, dtype=torch.float64)
    table[:, 0::2] = sin
    table[:, 1::2] = cos
    return table.float()


class SinusoidalPositions(nn.Module):
    """A fixed sinusoidal encoding, kept as a non-persistent buffer (it is a formula, not a weight)."""

    def __init__(self, max_len: int, d_model: int, halves: bool = False) -> None:
        super().__init__()
        self.halves = halves
        self.register_buffer("table", sinusoidal_encoding(max_len, d_model, halves), persistent=False)

    def forward(self, start: int, length: int) -> torch.Tensor:
        return self.table[start:start + length]  # (S, d_model)


class LearnedPositions(nn.Module):
    """One trained vector per position."""

    def __init__(self, max_len: int, d_model: int) -> None:
        super().__init__()
        self.table = nn.Parameter(torch.randn(max_len, d_model) * 0.02)

    def forward(self, start: int, length: int) -> torch.Tensor:
        return self.table[start:start + length]  # (S, d_model)
