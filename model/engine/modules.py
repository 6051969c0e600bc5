"""torch's building blocks without nn.Module's call machinery.

A decoding step calls about a hundred modules; `nn.Module.__call__` (hook dispatch, tracing
checks) costs more than a forward that applies a 1 x 512 LayerNorm. Nothing registers torch
hooks on these modules (the engine's own hook points are HookPoints), so calling `forward`
straight away changes nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import torch
from torch import nn

if TYPE_CHECKING:
    from .config import ModelConfig


class Linear(nn.Linear):
    __call__ = nn.Linear.forward


class LayerNorm(nn.LayerNorm):
    __call__ = nn.LayerNorm.forward


class RMSNorm(nn.RMSNorm):
    __call__ = nn.RMSNorm.forward


class OffsetRMSNorm(nn.Module):
    """Gemma's RMSNorm: x / rms(x) * (1 + weight), the weight starting at 0, computed in float32
    whatever the input's dtype."""

    def __init__(self, width: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        wide = x.float()
        normed = wide * torch.rsqrt(wide.pow(2).mean(-1, keepdim=True) + self.eps)
        return (normed * (1.0 + self.weight.float())).to(x.dtype)

    __call__ = forward


def make_norm(cfg: ModelConfig, width: int = 0) -> nn.Module:
    """The model's normalization over d_model (or `width`: a head's queries and keys): LayerNorm,
    RMSNorm (T5, Llama: x / rms(x) * weight, neither centred nor biased) or Gemma's (1 + weight) form."""
    width = width or cfg.d_model
    if cfg.norm == "rms":
        return RMSNorm(width, eps=cfg.layer_norm_eps)
    if cfg.norm == "rms_plus_one":
        return OffsetRMSNorm(width, eps=cfg.layer_norm_eps)
    return LayerNorm(width, eps=cfg.layer_norm_eps)


class ReLU(nn.ReLU):
    __call__ = nn.ReLU.forward


class GELU(nn.GELU):
    __call__ = nn.GELU.forward


class SiLU(nn.SiLU):
    __call__ = nn.SiLU.forward


ACTIVATION_MODULES: dict[str, Callable[[], nn.Module]] = {
    "relu": ReLU,
    "gelu": GELU,
    "gelu_tanh": lambda: GELU(approximate="tanh"),
    "silu": SiLU,
}
