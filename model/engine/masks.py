"""Attention masks as boolean tensors: True where a query may look at a key."""

from __future__ import annotations

import torch


def subsequent_mask(size: int, device: torch.device | None = None, start: int = 0) -> torch.Tensor:
    """(size, start + size) lower-triangular mask: the query at position start + i may attend to
    positions 0..start + i (start > 0: new positions after `start` cached ones)."""
    return torch.ones(size, start + size, dtype=torch.bool, device=device).tril(diagonal=start)


def lengths(ids: torch.Tensor, pad_id: int) -> torch.Tensor:
    """(B,) real length of each right-padded row of `ids` (B, S): up to its last id that is not the
    pad id, so that a pad id inside a row (GPT-2's <|endoftext|> stands in for its padding) is read.

    Position 0 always counts: Marian's decoder starts from the pad id itself.
    """
    positions = torch.arange(1, ids.size(1) + 1, device=ids.device)
    return (positions * (ids != pad_id)).amax(dim=1).clamp(min=1)


def padding_mask(ids: torch.Tensor, pad_id: int, real: torch.Tensor | None = None) -> torch.Tensor:
    """(B, 1, 1, S) mask that hides the right-hand padding of each row from every query and head;
    `real` (B,) gives the lengths outright (0: a row that is all padding, every key hidden)."""
    positions = torch.arange(ids.size(1), device=ids.device)
    real = lengths(ids, pad_id) if real is None else real
    return (positions[None, :] < real[:, None])[:, None, None, :]


def combine(*masks: torch.Tensor | None) -> torch.Tensor | None:
    """Logical AND of the given masks (broadcast), or None when there is none."""
    present = [m for m in masks if m is not None]
    if not present:
        return None
    out = present[0]
    for mask in present[1:]:
        out = out & mask
    return out


def window_mask(
    queries: int, keys: int, window: int, start: int = 0, causal: bool = True, device: torch.device | None = None
) -> torch.Tensor:
    """(queries, keys) sliding-window mask (Gemma 3): the query at position start + i sees the keys
    less than `window` positions back (key > query - window); without the causal mask, also less
    than `window` positions ahead (as Gemma's bidirectional form)."""
    query = torch.arange(start, start + queries, device=device)[:, None]
    key = torch.arange(keys, device=device)[None, :]
    near = key > query - window
    return near if causal else near & (key < query + window)


def first_hidden_mask(queries: int, keys: int, start: int = 0, device: torch.device | None = None) -> torch.Tensor:
    """(queries, keys) mask hiding key 0 (the first piece) from every query after it: the query at position
    start + i > 0 sees keys 1.. only, the first query still sees itself (the attention-sink what-if)."""
    query = torch.arange(start, start + queries, device=device)[:, None]
    key = torch.arange(keys, device=device)[None, :]
    return (key > 0) | (query == 0)
