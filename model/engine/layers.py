"""One layer class serves the encoder (self-attention) and the decoder (plus cross-attention).

"Each layer has two sub-layers ... We employ a residual connection around each of the two
sub-layers, followed by layer normalization."  (Vaswani et al., 3.1)
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from .attention import KVCache, MultiHeadAttention
from .config import ModelConfig
from .dropout import Dropout
from .hooks import HookPoint
from .modules import ACTIVATION_MODULES, Linear, make_norm


class FeedForward(nn.Module):
    """FFN(x) = max(0, x W1 + b1) W2 + b2, applied to each position separately (ReLU in the paper;
    BERT uses GELU, Marian SiLU). Gated (flan-t5): FFN(x) = (act(x W1) * x W3) W2, the activated
    half gating a linear one (W1 and W3 are T5's wi_0 and wi_1)."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.w_1 = Linear(cfg.d_model, cfg.d_ff, bias=cfg.linear_bias)
        if cfg.gated_ffn:
            self.w_3 = Linear(cfg.d_model, cfg.d_ff, bias=cfg.linear_bias)
        self.w_2 = Linear(cfg.d_ff, cfg.d_model, bias=cfg.linear_bias)
        self.activation = ACTIVATION_MODULES[cfg.activation]()
        self.dropout = Dropout(cfg.dropout)
        self.hook_hidden = HookPoint()  # (B, L, d_ff) after the activation (and the gate)
        self.hook_out = HookPoint()  # (B, L, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = self.activation(self.w_1(x))  # (B, L, d_ff)
        if hasattr(self, "w_3"):
            hidden = hidden * self.w_3(x)
        hidden = self.hook_hidden(hidden)
        return self.hook_out(self.w_2(self.dropout(hidden)))

    __call__ = forward  # see modules.py


class TransformerLayer(nn.Module):
    """Self-attention [+ cross-attention] + feed-forward, each wrapped in residual + LayerNorm."""

    def __init__(self, cfg: ModelConfig, cross: bool) -> None:
        super().__init__()
        self.norm_first = cfg.norm_first
        self.dropout = Dropout(cfg.dropout)
        self.self_attn = MultiHeadAttention(cfg)
        self.norm_self = make_norm(cfg)
        self.hook_resid_self = HookPoint()  # (B, L, d_model) x + SelfAttn(...)
        self.hook_norm_self = HookPoint()  # (B, L, d_model)
        if cross:
            self.cross_attn = MultiHeadAttention(cfg)
            self.norm_cross = make_norm(cfg)
            self.hook_resid_cross = HookPoint()
            self.hook_norm_cross = HookPoint()
        self.ffn = FeedForward(cfg)
        self.norm_ffn = make_norm(cfg)
        self.hook_resid_ffn = HookPoint()
        self.hook_norm_ffn = HookPoint()

    def _sublayer(
        self,
        x: torch.Tensor,
        norm: nn.Module,
        hook_norm: HookPoint,
        hook_resid: HookPoint,
        fn: Callable[[torch.Tensor], torch.Tensor],
    ) -> torch.Tensor:
        if self.norm_first:  # Pre-LN: x + f(LN(x))
            return hook_resid(x + self.dropout(fn(hook_norm(norm(x)))))
        return hook_norm(norm(hook_resid(x + self.dropout(fn(x)))))  # Post-LN: LN(x + f(x))

    def forward(
        self,
        x: torch.Tensor,
        self_mask: torch.Tensor | None,
        memory: torch.Tensor | None = None,
        memory_mask: torch.Tensor | None = None,
        ablate_self: tuple[int, ...] = (),
        ablate_cross: tuple[int, ...] = (),
        cache: KVCache | None = None,
        scale: bool = True,
        fill: float = float("-inf"),
        position_bias: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """x (B, L, d_model) -> (B, L, d_model); memory (B, S, d_model) only in the decoder.
        `scale` and `fill` reach every attention block (the what-if switches); `position_bias`
        (1, h, L, keys), the self-attention's only."""
        x = self._sublayer(
            x,
            self.norm_self,
            self.hook_norm_self,
            self.hook_resid_self,
            lambda h: self.self_attn(h, h, self_mask, ablate_self, cache, scale=scale, fill=fill, bias=position_bias),
        )
        if memory is not None:
            x = self._sublayer(
                x,
                self.norm_cross,
                self.hook_norm_cross,
                self.hook_resid_cross,
                lambda h: self.cross_attn(
                    h, memory, memory_mask, ablate_cross, cache, static_kv=True, scale=scale, fill=fill
                ),
            )
        return self._sublayer(x, self.norm_ffn, self.hook_norm_ffn, self.hook_resid_ffn, self.ffn)

    __call__ = forward  # see modules.py

    def step_matrices(self) -> list[torch.Tensor]:
        """The matrices a decoding step multiplies by its one new position, but self-attention's
        queries, keys and values (fused: `MultiHeadAttention.fuse_projections`) and
        cross-attention's keys and values (projections of the memory, once per sentence)."""
        projections = [self.self_attn.w_o, self.ffn.w_1, self.ffn.w_2] + (
            [self.ffn.w_3] if hasattr(self.ffn, "w_3") else []
        )
        if hasattr(self, "cross_attn"):
            projections += [self.cross_attn.w_q, self.cross_attn.w_o]
        return [projection.weight for projection in projections]
