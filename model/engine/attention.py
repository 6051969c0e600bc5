"""Multi-head attention, computed explicitly so that every weight can be drawn.

"An attention function can be described as mapping a query and a set of key-value pairs to
an output ... Attention(Q, K, V) = softmax(QK^T / sqrt(d_k)) V."  (Vaswani et al., 3.2)
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .config import ModelConfig
from .dropout import Dropout
from .hooks import HookPoint, watched
from .modules import Linear, make_norm
from .positional import rotate


class KVCache:
    """Keys and values that earlier decoding steps computed, one entry per attention block."""

    def __init__(self) -> None:
        self.store: dict[nn.Module, tuple[torch.Tensor, torch.Tensor]] = {}
        self.static: set[nn.Module] = set()  # cross-attention blocks: their keys and values are the memory's
        self.length = 0  # positions of the decoder's input whose keys and values are held

    def prefix(self, length: int) -> KVCache:
        """A cache of the first `length` positions only (self-attention's keys and values cut there;
        cross-attention's, the memory's, whole)."""
        cut = KVCache()
        cut.store = {
            block: (k, v) if block in self.static else (k[:, :, :length], v[:, :, :length])
            for block, (k, v) in self.store.items()
        }
        cut.static, cut.length = set(self.static), length
        return cut

    def reorder(self, index: torch.Tensor) -> None:
        """Keep the batch rows `index` (beam search follows its surviving hypotheses)."""
        self.store = {
            block: (k.index_select(0, index), v.index_select(0, index)) for block, (k, v) in self.store.items()
        }


class MultiHeadAttention(nn.Module):
    """h heads of scaled dot-product attention over learned projections, then one output projection.

    With fewer key/value heads than query heads (grouped-query attention, `n_kv_heads`), each key and
    value head serves n_heads / n_kv_heads query heads side by side: the cache holds the key/value
    heads, and the scores, patterns and hook points hold one per query head. With rotary positions,
    queries and keys are turned after their projections (and their norms) and cached turned."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.n_heads, self.d_k, self.n_kv_heads = cfg.n_heads, cfg.d_k, cfg.kv_heads
        self.scaled = cfg.scale_scores
        self.scale_width = cfg.score_scale_width or cfg.d_k
        width, kv_width, bias = cfg.d_attention, cfg.kv_heads * cfg.d_k, cfg.linear_bias
        self.w_q = Linear(cfg.d_model, width, bias=bias or cfg.qkv_bias)
        self.w_k = Linear(cfg.d_model, kv_width, bias=bias or cfg.qkv_bias)
        self.w_v = Linear(cfg.d_model, kv_width, bias=bias or cfg.qkv_bias)
        self.w_o = Linear(width, cfg.d_model, bias=bias)
        if cfg.qk_norm:  # over each head's d_k (Qwen3, Gemma 3), before the rotation
            self.q_norm = make_norm(cfg, cfg.d_k)
            self.k_norm = make_norm(cfg, cfg.d_k)
        self.dropout = Dropout(cfg.dropout)
        self.hook_q = HookPoint()  # (B, h, T, d_k) after any norm and rotation
        self.hook_k = HookPoint()  # (B, h, S, d_k) one per query head (a shared key/value head repeated)
        self.hook_v = HookPoint()  # (B, h, S, d_k)
        self.hook_scores = HookPoint()  # (B, h, T, S) QK^T / sqrt(d_k) (raw with scaling off) + any relative bias
        self.hook_masked_scores = HookPoint()  # (B, h, T, S) -inf (or -1e9) where the mask forbids
        self.hook_pattern = HookPoint()  # (B, h, T, S) softmax rows
        self.hook_context = HookPoint()  # (B, h, T, d_k) after head ablation
        self.hook_concat = HookPoint()  # (B, T, d_model)
        self.hook_out = HookPoint()  # (B, T, d_model)
        self._fused: tuple[torch.Tensor, torch.Tensor | None, tuple[int, ...]] | None = None

    @property
    def widths(self) -> tuple[int, int, int]:
        """Output widths of the query, key and value projections."""
        return self.n_heads * self.d_k, self.n_kv_heads * self.d_k, self.n_kv_heads * self.d_k

    def fuse_projections(self) -> None:
        """Lay the query, key and value projections out in one block of memory, their parameters
        views of it (the same names, values and training), so that self-attention projects with
        one matrix product instead of three: one long read of the block (a decoding step's
        position at opus-mt size: 0.17 ms against 0.3 ms)."""
        parts = (self.w_q, self.w_k, self.w_v)
        laid_out = self._laid_out()
        if laid_out is not None:  # already views of one block (a weights image read back): nothing to copy
            self._fused = *laid_out, self._addresses()
            return
        weight = torch.cat([part.weight.detach() for part in parts]).t().contiguous().t()  # (q + k + v, d_model)
        bias = torch.cat([part.bias.detach() for part in parts]) if self.w_q.bias is not None else None
        start = 0
        for part, width in zip(parts, self.widths, strict=True):
            part.weight.data = weight[start : start + width]
            if bias is not None:
                part.bias.data = bias[start : start + width]
            start += width
        self._fused = weight, bias, self._addresses()

    def _laid_out(self) -> tuple[torch.Tensor, torch.Tensor | None] | None:
        """The block and bias the three projections are already consecutive views of, as
        `fuse_projections` leaves them; None when they are not."""
        parts = (self.w_q, self.w_k, self.w_v)
        first, total = self.w_q.weight, sum(self.widths)
        offsets = [first.storage_offset() + sum(self.widths[:i]) for i in range(3)]
        for part, offset in zip(parts, offsets, strict=True):
            weight = part.weight
            same = weight.untyped_storage().data_ptr() == first.untyped_storage().data_ptr()
            if not same or weight.stride() != (1, total) or weight.storage_offset() != offset:
                return None
        block = torch.as_strided(first.detach(), (total, first.shape[1]), (1, total), first.storage_offset())
        if self.w_q.bias is None:
            return block, None
        biases = [part.bias for part in parts]
        start = biases[0].storage_offset()
        for bias, offset in zip(biases, [start + sum(self.widths[:i]) for i in range(3)], strict=True):
            if bias.untyped_storage().data_ptr() != biases[0].untyped_storage().data_ptr():
                return None
            if bias.stride() != (1,) or bias.storage_offset() != offset:
                return None
        return block, torch.as_strided(biases[0].detach(), (total,), (1,), start)

    def _addresses(self) -> tuple[int, ...]:
        parts = (self.w_q, self.w_k, self.w_v)
        return tuple(part.weight.data_ptr() for part in parts) + tuple(
            part.bias.data_ptr() for part in parts if part.bias is not None
        )

    def _fused_projection(self) -> tuple[torch.Tensor, torch.Tensor | None] | None:
        """The fused weight and bias while the three projections are still views of them, and
        no gradient is wanted (it must reach the parameters themselves); else None."""
        if self._fused is None or torch.is_grad_enabled():
            return None
        weight, bias, addresses = self._fused
        return (weight, bias) if self._addresses() == addresses else None

    def _split_heads(self, x: torch.Tensor, heads: int = 0) -> torch.Tensor:
        batch, length, _ = x.shape
        return x.view(batch, length, heads or self.n_heads, self.d_k).transpose(1, 2)  # (B, h, L, d_k)

    def _project(self, x_q: torch.Tensor, x_kv: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Queries (B, h, T, d_k), keys and values (B, kv heads, S, d_k), the queries and keys normed
        per head when the model does so."""
        fused = self._fused_projection() if x_q is x_kv else None
        if fused is None:
            q, k = self._split_heads(self.w_q(x_q)), self._split_heads(self.w_k(x_kv), self.n_kv_heads)
            v = self._split_heads(self.w_v(x_kv), self.n_kv_heads)
        else:
            q, k, v = F.linear(x_q, *fused).split(self.widths, dim=-1)
            q, k, v = self._split_heads(q), self._split_heads(k, self.n_kv_heads), self._split_heads(v, self.n_kv_heads)
        if hasattr(self, "q_norm"):
            q, k = self.q_norm(q), self.k_norm(k)
        return q, k, v

    def per_query_head(self, x: torch.Tensor) -> torch.Tensor:
        """Keys or values (B, kv heads, S, d_k) -> (B, h, S, d_k): each key/value head repeated for the
        query heads of its group (heads g * n_heads / n_kv_heads ... side by side)."""
        if self.n_kv_heads == self.n_heads:
            return x
        batch, kv_heads, length, d_k = x.shape
        group = self.n_heads // kv_heads
        return x[:, :, None].expand(batch, kv_heads, group, length, d_k).reshape(batch, self.n_heads, length, d_k)

    def scores(
        self, q: torch.Tensor, k: torch.Tensor, scale: bool = True, bias: torch.Tensor | None = None
    ) -> torch.Tensor:
        """QK^T of queries (B, h, T, d_k) and keys (B, h, S, d_k), divided by sqrt(d_k) when `scale`
        is on and the model scales at all, plus `bias` (a relative-position bias): (B, h, T, S). Keys of
        the key/value heads alone (B, kv heads, S, d_k) each meet their group of query heads."""
        if k.size(1) != q.size(1):  # grouped: no copy of the keys per query head
            scores = (q.unflatten(1, (k.size(1), -1)) @ k[:, :, None].transpose(-2, -1)).flatten(1, 2)
        else:
            scores = q @ k.transpose(-2, -1)
        if scale and self.scaled:
            scores = scores / math.sqrt(self.scale_width)
        return scores if bias is None else scores + bias

    def forward(
        self,
        x_q: torch.Tensor,
        x_kv: torch.Tensor,
        mask: torch.Tensor | None = None,
        ablate_heads: tuple[int, ...] = (),
        cache: KVCache | None = None,
        static_kv: bool = False,
        scale: bool = True,
        fill: float = float("-inf"),
        bias: torch.Tensor | None = None,
        rotary: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> torch.Tensor:
        """x_q (B, T, d_model) attends over x_kv (B, S, d_model); returns (B, T, d_model).
        `bias` (1, h, T, S), added to every score: a relative-position bias (T5). `rotary`: cos and
        sin (T, dims) of the new positions' angles, turning their queries and keys (self-attention).

        With a cache, self-attention appends this step's keys and values to the earlier
        ones; cross-attention (static_kv) projects the encoder memory once and reuses it.
        """
        if cache is not None and static_kv and self in cache.store:
            q, (k, v) = self._split_heads(self.w_q(x_q)), cache.store[self]
        else:
            q, k, v = self._project(x_q, x_kv)  # (B, h, T, d_k), (B, kv heads, S, d_k) twice
            if rotary is not None:
                q, k = rotate(q, *rotary), rotate(k, *rotary)
            if cache is not None:
                if not static_kv and self in cache.store:
                    past_k, past_v = cache.store[self]
                    k, v = torch.cat([past_k, k], dim=2), torch.cat([past_v, v], dim=2)
                cache.store[self] = (k, v)
                if static_kv:
                    cache.static.add(self)
        if self.n_kv_heads != self.n_heads and watched():  # what is recorded or patched is per query head
            k, v = self.per_query_head(k), self.per_query_head(v)
        q, k, v = self.hook_q(q), self.hook_k(k), self.hook_v(v)
        scores = self.hook_scores(self.scores(q, k, scale, bias))  # (B, h, T, S)
        if mask is not None:
            scores = torch.where(mask, scores, fill)
        pattern = self.hook_pattern(self.hook_masked_scores(scores).softmax(dim=-1))  # (B, h, T, S)
        weights = self.dropout(pattern)
        if v.size(1) != self.n_heads:  # grouped: each value head read by its group of query heads
            context = (weights.unflatten(1, (v.size(1), -1)) @ v[:, :, None]).flatten(1, 2)  # (B, h, T, d_k)
        else:
            context = weights @ v  # (B, h, T, d_k)
        if ablate_heads:
            keep = torch.ones(self.n_heads, dtype=context.dtype, device=context.device)
            keep[list(ablate_heads)] = 0.0
            context = context * keep[:, None, None]
        context = self.hook_context(context)
        batch, _, length, _ = context.shape
        concat = self.hook_concat(context.transpose(1, 2).reshape(batch, length, -1))  # (B, T, d_model)
        return self.hook_out(self.w_o(concat))

    __call__ = forward  # see modules.py
