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
    """Keys and values that earlier decoding steps computed, one entry per attention block.

    `store` holds each block's keys and values (B, kv heads, positions, d_k). A self-attention block's
    are views of a buffer with room for more positions, which each step writes its own into in place
    (`append`): `capacity` positions at first (`reserve`: what a decoding will read at most), else as many
    as the first step brings, then twice as many whenever they run out. With `in_place` False each step
    concatenates instead (a new copy of everything cached at every step: the way before, for the bench).
    A position once written is never written again (a step writes after the positions held; a prefix or
    a reordered cache writes into buffers of its own), so a recorded view of the keys never changes."""

    def __init__(self, capacity: int = 0, in_place: bool = True) -> None:
        self.store: dict[nn.Module, tuple[torch.Tensor, torch.Tensor]] = {}
        self.static: set[nn.Module] = set()  # cross-attention blocks: their keys and values are the memory's
        self.length = 0  # positions of the decoder's input whose keys and values are held
        self.capacity = capacity
        self.in_place = in_place
        # what `store`'s views are of, and how many positions they hold
        self._buffers: dict[nn.Module, tuple[torch.Tensor, torch.Tensor, int]] = {}

    def reserve(self, positions: int) -> None:
        """Make the buffers allocated from now on room for `positions` positions at least."""
        self.capacity = max(self.capacity, positions)

    def append(self, block: nn.Module, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The keys and values of `block` (B, kv heads, positions, d_k) with this step's `k` and `v` after the
        earlier ones, kept as the block's entry."""
        buffers = self._buffers.get(block)  # when there, `store[block]` is a view of its first `held` positions
        new = k.size(2)
        graph = k.requires_grad or v.requires_grad  # a graph through the cache: a buffer written in place breaks it
        if buffers is not None and not graph:
            keys, values, held = buffers
            if held + new <= keys.size(2) and keys.size(0) == k.size(0):
                keys.narrow(2, held, new).copy_(k)
                values.narrow(2, held, new).copy_(v)
                self._buffers[block] = keys, values, held + new
                self.store[block] = entry = keys.narrow(2, 0, held + new), values.narrow(2, 0, held + new)
                return entry
        past = self.store.get(block)
        if not self.in_place or graph:
            if past is not None:
                k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
            self._buffers.pop(block, None)
            self.store[block] = (k, v)
            return k, v
        held = 0 if past is None else past[0].size(2)
        total = held + new
        room = max(total, self.capacity, 2 * held)  # a first buffer, or one twice as long
        batch, heads, _, width = k.shape
        keys, values = k.new_empty(batch, heads, room, width), v.new_empty(batch, heads, room, v.size(-1))
        if past is not None:
            keys.narrow(2, 0, held).copy_(past[0])
            values.narrow(2, 0, held).copy_(past[1])
        keys.narrow(2, held, new).copy_(k)
        values.narrow(2, held, new).copy_(v)
        self._buffers[block] = keys, values, total
        self.store[block] = entry = keys.narrow(2, 0, total), values.narrow(2, 0, total)
        return entry

    def prefix(self, length: int) -> KVCache:
        """A cache of the first `length` positions only (self-attention's keys and values cut there;
        cross-attention's, the memory's, whole). It shares this one's memory until a step adds to it,
        which then writes into a buffer of its own."""
        cut = KVCache(self.capacity, self.in_place)
        cut.store = {
            block: (k, v) if block in self.static else (k[:, :, :length], v[:, :, :length])
            for block, (k, v) in self.store.items()
        }
        cut.static, cut.length = set(self.static), length
        return cut

    def reorder(self, index: torch.Tensor) -> None:
        """Keep the batch rows `index` (beam search follows its surviving hypotheses), in buffers of
        the same room."""
        for block, (k, v) in list(self.store.items()):
            buffers = self._buffers.get(block)
            if buffers is None:
                self.store[block] = k.index_select(0, index), v.index_select(0, index)
                continue
            held, room = buffers[2], buffers[0].size(2)
            keys = k.new_empty(len(index), k.size(1), room, k.size(3))
            values = v.new_empty(len(index), v.size(1), room, v.size(3))
            torch.index_select(k, 0, index, out=keys.narrow(2, 0, held))
            torch.index_select(v, 0, index, out=values.narrow(2, 0, held))
            self._buffers[block] = keys, values, held
            self.store[block] = keys.narrow(2, 0, held), values.narrow(2, 0, held)


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
            if cache is not None and static_kv:
                cache.store[self] = (k, v)
                cache.static.add(self)
            elif cache is not None:
                k, v = cache.append(self, k, v)
        # what is recorded or patched is per query head (a recording that leaves the keys and values out
        # does without the copies)
        if self.n_kv_heads != self.n_heads and watched(self.hook_k.name, self.hook_v.name):
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
