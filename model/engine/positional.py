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

    table: torch.Tensor  # (max_len, d_model)

    def __init__(self, max_len: int, d_model: int, halves: bool = False) -> None:
        super().__init__()
        self.halves = halves
        self.register_buffer("table", sinusoidal_encoding(max_len, d_model, halves), persistent=False)

    def forward(self, start: int, length: int) -> torch.Tensor:
        return self.table[start : start + length]  # (S, d_model)


class LearnedPositions(nn.Module):
    """One trained vector per position."""

    def __init__(self, max_len: int, d_model: int) -> None:
        super().__init__()
        self.table = nn.Parameter(torch.randn(max_len, d_model) * 0.02)

    def forward(self, start: int, length: int) -> torch.Tensor:
        return self.table[start : start + length]  # (S, d_model)


def relative_buckets(relative: torch.Tensor, bidirectional: bool, n_buckets: int, max_distance: int) -> torch.Tensor:
    """The bucket of each query-to-key distance `relative` (key position - query position), as T5
    files them: exact buckets for the nearest distances, then buckets growing logarithmically up
    to `max_distance`, beyond which every distance shares the last. Bidirectional (an encoder):
    half the buckets for keys before the query, half for keys after it; else (a decoder) only
    keys at or before the query have buckets of their own."""
    bucket = torch.zeros_like(relative)
    if bidirectional:
        n_buckets //= 2
        bucket = bucket + (relative > 0).long() * n_buckets
        distance = relative.abs()
    else:
        distance = (-relative).clamp(min=0)
    exact = n_buckets // 2
    far = (
        exact
        + (
            torch.log(distance.float().clamp(min=1) / exact) / math.log(max_distance / exact) * (n_buckets - exact)
        ).long()
    )
    far = far.clamp(max=n_buckets - 1)
    return bucket + torch.where(distance < exact, distance, far)


class RelativePositionBias(nn.Module):
    """T5's positions: a learned scalar per head and distance bucket, added to every
    self-attention score of a stack (computed once, shared by its layers)."""

    def __init__(self, n_buckets: int, max_distance: int, n_heads: int, bidirectional: bool) -> None:
        super().__init__()
        self.n_buckets, self.max_distance, self.bidirectional = n_buckets, max_distance, bidirectional
        self.weight = nn.Parameter(torch.zeros(n_buckets, n_heads))  # (buckets, heads)

    def buckets(self, queries: int, keys: int, start: int = 0) -> torch.Tensor:
        """(queries, keys) bucket ids for query positions start.. and key positions 0.."""
        query = torch.arange(start, start + queries, device=self.weight.device)[:, None]
        key = torch.arange(keys, device=self.weight.device)[None, :]
        return relative_buckets(key - query, self.bidirectional, self.n_buckets, self.max_distance)

    def forward(self, queries: int, keys: int, start: int = 0) -> torch.Tensor:
        """(1, heads, queries, keys) bias."""
        return self.weight[self.buckets(queries, keys, start)].permute(2, 0, 1)[None]


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """(..., d) -> (..., d): the second half of the dims, negated, then the first half. With it, turning
    each pair (x_i, x_{i + d/2}) by an angle is x cos + rotate_half(x) sin (the layout transformers uses)."""
    half = x.size(-1) // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


class RotaryPositions(nn.Module):
    """Rotary position embedding (Su et al., RoFormer): nothing is added to the embeddings; each
    query and key is turned, pair of dims by pair, by an angle position x θ_i, where
    θ_i = base^(-2i / dims). A query and a key then meet at an angle that depends only on how far
    apart they are. Only the first `dims` of each head turn (all of them but in GPT-NeoX)."""

    inv_freq: torch.Tensor  # (dims / 2,) the θ_i

    def __init__(self, dims: int, base: float) -> None:
        super().__init__()
        self.dims, self.base = dims, base
        inv_freq = 1.0 / (base ** (torch.arange(0, dims, 2, dtype=torch.int64).float() / dims))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def frequencies(self, factor: float = 1.0) -> torch.Tensor:
        """(dims / 2,) the θ_i, of base × `factor` (a what-if: 1.0 is the model's own)."""
        if factor == 1.0:
            return self.inv_freq
        return 1.0 / ((self.base * factor) ** (torch.arange(0, self.dims, 2, dtype=torch.int64).float() / self.dims))

    def forward(self, start: int, length: int, factor: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
        """cos and sin (length, dims) of the angles at positions start..start+length-1, each angle
        twice (once for each half of the dims it turns); `factor` multiplies the base (a what-if)."""
        position = torch.arange(start, start + length, device=self.inv_freq.device).float()
        angles = position[:, None] * self.frequencies(factor).to(position.device)[None, :]  # (L, dims/2)
        angles = torch.cat([angles, angles], dim=-1)  # (L, dims)
        return angles.cos(), angles.sin()


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Queries or keys (B, h, L, d_k) turned by the angles (L, dims): their first `dims` dims, the rest
    passed through as they are."""
    dims = cos.size(-1)
    if dims == x.size(-1):
        return x * cos + rotate_half(x) * sin
    turned, kept = x[..., :dims], x[..., dims:]
    return torch.cat([turned * cos + rotate_half(turned) * sin, kept], dim=-1)
