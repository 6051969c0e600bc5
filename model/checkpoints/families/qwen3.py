"""Qwen3 (Qwen/Qwen3-0.6B): Llama's layout with an RMSNorm over each head's queries and keys (q_norm,
k_norm) before the rotation, a head width of its own (head_dim 128 on 0.6B, not hidden / heads) and
no biases (unless attention_bias)."""

from __future__ import annotations

from pathlib import Path

import torch

from i18n import later

from ...engine.config import ModelConfig
from . import rotary_decoders as shared

FAMILY = "Qwen3"
NORMS = {"input_layernorm": "norm_self", "post_attention_layernorm": "norm_ffn"}
tokenizer_files = shared.tokenizer_files
chat_template = shared.chat_template


def model_config(hf: dict, path: Path) -> ModelConfig:
    """Our ModelConfig for a Qwen3 config.json."""
    refuse = shared.refuser(path, FAMILY)
    if hf.get("attention_bias"):
        raise refuse(later("attention_bias puts a bias on the output projection too, which is not supported"))
    return shared.build_config(
        hf, refuse, activation=shared.activation(hf.get("hidden_act", "silu"), refuse), qk_norm=True
    )


def rename(tensors: dict[str, torch.Tensor], path: Path) -> dict[str, torch.Tensor]:
    """Qwen3 parameter names (Llama's, plus q_norm and k_norm) -> ours."""
    return shared.rename_llama(tensors, NORMS)


def vocabulary(path: Path, hf: dict, generation: dict) -> shared.DecoderVocabulary:
    """The tokenizer.json of a Qwen3 directory (no BOS added)."""
    return shared.DecoderVocabulary(path, hf, generation, FAMILY)
