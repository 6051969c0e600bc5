"""Gemma 3's text model (google/gemma-3-270m and -it): four RMSNorms per layer (before and after each
sublayer), each in Gemma's (1 + w) form computed in float32, and one over each head's queries and
keys; embeddings times sqrt(hidden_size); scores scaled by query_pre_attn_scalar^-0.5; a head width of
its own; sliding-window layers (layer_types, sliding_window) whose rotation has a base of its own
(the local one, 10,000 against 1,000,000); a gated GELU (tanh form); the head tied to the embedding."""

from __future__ import annotations

from pathlib import Path

import torch

from i18n import later

from ...engine.config import ModelConfig
from . import rotary_decoders as shared

FAMILY = "Gemma 3"
NORMS = {
    "input_layernorm": "norm_self",
    "post_attention_layernorm": "post_norm_self",
    "pre_feedforward_layernorm": "norm_ffn",
    "post_feedforward_layernorm": "post_norm_ffn",
}
tokenizer_files = shared.tokenizer_files
chat_template = shared.chat_template


def model_config(hf: dict, path: Path) -> ModelConfig:
    """Our ModelConfig for a Gemma 3 text config.json."""
    refuse = shared.refuser(path, FAMILY)
    for setting in ("attn_logit_softcapping", "final_logit_softcapping", "use_bidirectional_attention"):
        if hf.get(setting):
            raise refuse(later("{setting} is not supported", setting=setting))
    if hf.get("attention_bias"):
        raise refuse(later("{setting} is not supported", setting="attention_bias"))
    return shared.build_config(
        hf,
        refuse,
        rope_local_key="rope_local_base_freq",
        activation=shared.activation(hf.get("hidden_activation", "gelu_pytorch_tanh"), refuse),
        norm="rms_plus_one",
        sandwich_norm=True,
        qk_norm=True,
        scale_embeddings=True,
        score_scale_width=float(hf.get("query_pre_attn_scalar") or hf.get("head_dim") or 0),
    )


def rename(tensors: dict[str, torch.Tensor], path: Path) -> dict[str, torch.Tensor]:
    """Gemma 3 parameter names (Llama's, with four norms per layer) -> ours."""
    return shared.rename_llama(tensors, NORMS)


def vocabulary(path: Path, hf: dict, generation: dict) -> shared.DecoderVocabulary:
    """The tokenizer.json of a Gemma 3 directory (<bos> first, as its post-processor puts it)."""
    return shared.DecoderVocabulary(path, hf, generation, FAMILY)
