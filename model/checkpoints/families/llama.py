"""Llama (HuggingFaceTB/SmolLM2-135M and -Instruct, TinyLlama, Llama 2 and 3 without rope scaling): a
decoder alone with rotary positions over every dim of a head, key/value heads shared between query
heads (num_key_value_heads), RMSNorm before each sublayer and at the end, a SwiGLU feed-forward,
no biases (unless attention_bias / mlp_bias say so), and a head tied to the embedding or its own."""

from __future__ import annotations

from pathlib import Path

import torch

from i18n import later

from ...engine.config import ModelConfig
from . import rotary_decoders as shared

FAMILY = "Llama"
NORMS = {"input_layernorm": "norm_self", "post_attention_layernorm": "norm_ffn"}
tokenizer_files = shared.tokenizer_files
chat_template = shared.chat_template


def model_config(hf: dict, path: Path) -> ModelConfig:
    """Our ModelConfig for a Llama config.json."""
    refuse = shared.refuser(path, FAMILY)
    attention_bias, mlp_bias = bool(hf.get("attention_bias", False)), bool(hf.get("mlp_bias", False))
    if attention_bias != mlp_bias:
        raise refuse(later("attention_bias and mlp_bias differ, which the engine's one linear_bias cannot mirror"))
    return shared.build_config(
        hf, refuse, activation=shared.activation(hf.get("hidden_act", "silu"), refuse), linear_bias=attention_bias
    )


def rename(tensors: dict[str, torch.Tensor], path: Path) -> dict[str, torch.Tensor]:
    """Llama parameter names -> ours."""
    return shared.rename_llama(tensors, NORMS)


def vocabulary(path: Path, hf: dict, generation: dict) -> shared.DecoderVocabulary:
    """The tokenizer.json of a Llama directory (BOS first where its post-processor puts it)."""
    return shared.DecoderVocabulary(path, hf, generation, FAMILY)
