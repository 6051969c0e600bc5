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
    """Self-attention [+ cross-attention] + feed-forward, each wrapped in residual + LayerNorm.

    Gemma 3 norms each sublayer's output too (`sandwich_norm`: four norms per layer); GPT-NeoX runs
    the two sublayers side by side on the layer's input (`parallel_residual`)."""

    def __init__(self, cfg: ModelConfig, cross: bool) -> None:
        super().__init__()
        self.norm_first = cfg.norm_first
        self.parallel = cfg.parallel_residual
        if cfg.sandwich_norm:  # the output norms: after the sublayer, before the residual sum
            self.post_norm_self = make_norm(cfg)
            self.post_norm_ffn = make_norm(cfg)
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
        post_norm: nn.Module | None = None,
    ) -> torch.Tensor:
        if self.norm_first:  # Pre-LN: x + f(LN(x)), with a sandwich x + LN'(f(LN(x)))
            out = fn(hook_norm(norm(x)))
            return hook_resid(x + self.dropout(out if post_norm is None else post_norm(out)))
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
        rotary: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> torch.Tensor:
        """x (B, L, d_model) -> (B, L, d_model); memory (B, S, d_model) only in the decoder.
        `scale` and `fill` reach every attention block (the what-if switches); `position_bias`
        (1, h, L, keys) and `rotary` (the angles' cos and sin, (L, dims) each), the self-attention's only."""
        layer_input = x
        x = self._sublayer(
            x,
            self.norm_self,
            self.hook_norm_self,
            self.hook_resid_self,
            lambda h: self.self_attn(
                h, h, self_mask, ablate_self, cache, scale=scale, fill=fill, bias=position_bias, rotary=rotary
            ),
            getattr(self, "post_norm_self", None),
        )
        if self.parallel:  # the feed-forward reads the layer's input, and its output joins the same sum
            return self.hook_resid_ffn(x + self.dropout(self.ffn(self.hook_norm_ffn(self.norm_ffn(layer_input)))))
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
        return self._sublayer(
            x, self.norm_ffn, self.hook_norm_ffn, self.hook_resid_ffn, self.ffn, getattr(self, "post_norm_ffn", None)
        )

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
