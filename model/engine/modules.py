"""torch's building blocks without nn.Module's call machinery.

A decoding step calls about a hundred modules; `nn.Module.__call__` (hook dispatch, tracing
checks) costs more than a forward that applies a 1 x 512 LayerNorm. Nothing registers torch
hooks on these modules (the engine's own hook points are HookPoints), so calling `forward`
straight away changes nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from torch import nn

if TYPE_CHECKING:
    from .config import ModelConfig


class Linear(nn.Linear):
    __call__ = nn.Linear.forward


class LayerNorm(nn.LayerNorm):
    __call__ = nn.LayerNorm.forward


class RMSNorm(nn.RMSNorm):
    __call__ = nn.RMSNorm.forward


def make_norm(cfg: ModelConfig) -> nn.Module:
    """The model's normalization over d_model: LayerNorm, or RMSNorm (T5: x / rms(x) * weight,
    neither centred nor biased)."""
    if cfg.norm == "rms":
        return RMSNorm(cfg.d_model, eps=cfg.layer_norm_eps)
    return LayerNorm(cfg.d_model, eps=cfg.layer_norm_eps)


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
