"""Qwen2 and Qwen2.5 (Qwen/Qwen2.5-0.5B and -Instruct): Llama's layout with a bias on the query, key and
value projections (fixed in its modelling code, no config key) and none on the output projection;
sliding windows only when use_sliding_window says so; a vocabulary of more rows than its tokenizer
has tokens (151,936 for about 151,665)."""

from __future__ import annotations

from pathlib import Path

import torch

from ...engine.config import ModelConfig
from . import rotary_decoders as shared

FAMILY = "Qwen2"
NORMS = {"input_layernorm": "norm_self", "post_attention_layernorm": "norm_ffn"}
tokenizer_files = shared.tokenizer_files
chat_template = shared.chat_template


def model_config(hf: dict, path: Path) -> ModelConfig:
    """Our ModelConfig for a Qwen2 config.json."""
    refuse = shared.refuser(path, FAMILY)
    return shared.build_config(
        hf, refuse, activation=shared.activation(hf.get("hidden_act", "silu"), refuse), qkv_bias=True
    )


def rename(tensors: dict[str, torch.Tensor], path: Path) -> dict[str, torch.Tensor]:
    """Qwen2 parameter names (Llama's) -> ours."""
    return shared.rename_llama(tensors, NORMS)


def vocabulary(path: Path, hf: dict, generation: dict) -> shared.DecoderVocabulary:
    """The tokenizer.json of a Qwen2 directory (no BOS added)."""
    return shared.DecoderVocabulary(path, hf, generation, FAMILY)
