"""Multi-head attention, computed explicitly so that every weight can be drawn.

"An attention function can be described as mapping a query and a set of key-value pairs to
an output ... Attention(Q, K, V) = softmax(QK^T / sqrt(d_k)) V."  (Vaswani et al., 3.2)
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .config import ModelConfig
from .dropout import Dropout
from .hooks import HookPoint


class KVCache:
    """Keys and values that earlier decoding steps computed, one entry per attention block."""

    def __init__(self) -> None:
        self.store: dict[nn.Module, tuple[torch.Tensor, torch.Tensor]] = {}

    def reorder(self, index: torch.Tensor) -> None:
        """Keep the batch rows `index` (beam search follows its surviving hypotheses)."""
        self.store = {block: (k.index_select(0, index), v.index_select(0, index))
                      for block, (k, v) in self.store.items()}


class MultiHeadAttention(nn.Module):
    """h heads of scaled dot-product attention over learned projections, then one output projection."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.n_heads, self.d_k = cfg.n_heads, cfg.d_k
        self.w_q = nn.Linear(cfg.d_model, cfg.d_model)
        self.w_k = nn.Linear(cfg.d_model, cfg.d_model)
        self.w_v = nn.Linear(cfg.d_model, cfg.d_model)
        self.w_o = nn.Linear(cfg.d_model, cfg.d_model)
        self.dropout = Dropout(cfg.dropout)
        self.hook_q = HookPoint()              # (B, h, T, d_k)
        self.hook_k = HookPoint()              # (B, h, S, d_k)
        self.hook_v = HookPoint()              # (B, h, S, d_k)
        self.hook_scores = HookPoint()         # (B, h, T, S) QK^T / sqrt(d_k) (raw QK^T with scaling off)
        self.hook_masked_scores = HookPoint()  # (B, h, T, S) -inf (or -1e9) where the mask forbids
        self.hook_pattern = HookPoint()        # (B, h, T, S) softmax rows
        self.hook_context = HookPoint()        # (B, h, T, d_k) after head ablation
        self.hook_concat = HookPoint()         # (B, T, d_model)
        self.hook_out = HookPoint()            # (B, T, d_model)

    def _split_heads(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, _ = x.shape
        return x.view(batch, length, self.n_heads, self.d_k).transpose(1, 2)  # (B, h, L, d_k)

    def forward(self, x_q: torch.Tensor, x_kv: torch.Tensor, mask: torch.Tensor | None = None,
                ablate_heads: tuple[int, ...] = (), cache: KVCache | None = None,
                static_kv: bool = False, scale: bool = True, fill: float = float("-inf")) -> torch.Tensor:
        """x_q (B, T, d_model) attends over x_kv (B, S, d_model); returns (B, T, d_model).

        With a cache, self-attention appends this step's keys and values to the earlier
        ones; cross-attention (static_kv) projects the encoder memory once and reuses it.
        """
        q = self.hook_q(self._split_heads(self.w_q(x_q)))  # (B, h, T, d_k)
        if cache is not None and static_kv and self in cache.store:
            k, v = cache.store[self]
        else:
            k = self._split_heads(self.w_k(x_kv))  # (B, h, S, d_k)
            v = self._split_heads(self.w_v(x_kv))  # (B, h, S, d_k)
            if cache is not None:
                if not static_kv and self in cache.store:
                    past_k, past_v = cache.store[self]
                    k, v = torch.cat([past_k, k], dim=2), torch.cat([past_v, v], dim=2)
                cache.store[self] = (k, v)
        k, v = self.hook_k(k), self.hook_v(v)
        scores = q @ k.transpose(-2, -1)  # (B, h, T, S)
        scores = self.hook_scores(scores / math.sqrt(self.d_k) if scale else scores)
        if mask is not None:
            scores = scores.masked_fill(~mask, fill)
        pattern = self.hook_pattern(self.hook_masked_scores(scores).softmax(dim=-1))  # (B, h, T, S)
        context = self.dropout(pattern) @ v  # (B, h, T, d_k)
        if ablate_heads:
            keep = torch.ones(self.n_heads, dtype=context.dtype, device=context.device)
            keep[list(ablate_heads)] = 0.0
            context = context * keep[:, None, None]
        context = self.hook_context(context)
        batch, _, length, _ = context.shape
        concat = self.hook_concat(context.transpose(1, 2).reshape(batch, length, -1))  # (B, T, d_model)
        return self.hook_out(self.w_o(concat))
