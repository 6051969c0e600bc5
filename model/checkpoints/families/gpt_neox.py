"""GPT-NeoX (EleutherAI/pythia-70m ... pythia-12b): a decoder alone with rotary positions over a share
of each head's dims (rotary_pct, 0.25 on Pythia), LayerNorm with biases, the attention and the
feed-forward side by side on the layer's input (use_parallel_residual), a plain GELU feed-forward,
biases everywhere, and an output head of its own (embed_out). Its query_key_value is one linear whose
output is laid out per head: each head's query, key and value side by side, split here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import torch

from i18n import later

from ...engine.config import ModelConfig
from . import rotary_decoders as shared

FAMILY = "GPT-NeoX"
tokenizer_files = shared.tokenizer_files
chat_template = shared.chat_template
_TOP = {
    "gpt_neox.embed_in.weight": "tgt_embed.token.weight",
    "gpt_neox.final_layer_norm.weight": "decoder.final_norm.weight",
    "gpt_neox.final_layer_norm.bias": "decoder.final_norm.bias",
    "embed_out.weight": "generator.weight",
}
_PARTS = {
    "input_layernorm": "norm_self",
    "post_attention_layernorm": "norm_ffn",
    "attention.dense": "self_attn.w_o",
    "mlp.dense_h_to_4h": "ffn.w_1",
    "mlp.dense_4h_to_h": "ffn.w_2",
}
_LAYER = re.compile(r"^gpt_neox\.layers\.(\d+)\.(.+)\.(weight|bias)$")
_BUFFERS = re.compile(r"\.attention\.(bias|masked_bias|rotary_emb\.inv_freq)$")  # older exports' masks and angles


def model_config(hf: dict, path: Path) -> ModelConfig:
    """Our ModelConfig for a GPT-NeoX config.json."""
    refuse = shared.refuser(path, FAMILY)
    if hf.get("attention_bias", True) is False:
        raise refuse(later("attention_bias false is not supported (its feed-forward keeps its biases)"))
    hf = {"rotary_pct": 0.25, "tie_word_embeddings": False, **hf}  # GPT-NeoX's own defaults
    return shared.build_config(
        hf,
        refuse,
        activation=shared.activation(hf.get("hidden_act", "gelu"), refuse),
        norm="layer",
        layer_norm_eps=float(hf.get("layer_norm_eps", 1e-5)),
        linear_bias=True,
        gated_ffn=False,
        parallel_residual=bool(hf.get("use_parallel_residual", True)),
        n_kv_heads=0,
        d_head=0,
    )


def _split_per_head(tensor: torch.Tensor, heads: int) -> list[torch.Tensor]:
    """query_key_value's weight (3 d, d) or bias (3 d,), laid out (heads, 3, head size): the query, key
    and value projections, each (d, d) or (d,)."""
    per_head = tensor.reshape(heads, 3, -1, *tensor.shape[1:])  # (h, 3, head size[, d])
    return [per_head[:, i].reshape(-1, *tensor.shape[1:]).contiguous() for i in range(3)]


def rename(tensors: dict[str, torch.Tensor], path: Path) -> dict[str, torch.Tensor]:
    """GPT-NeoX parameter names -> ours; query_key_value split per head into the three projections."""
    heads = json.loads((path / "config.json").read_text(encoding="utf-8"))["num_attention_heads"]  # read before
    ours = {}
    for name, tensor in tensors.items():
        if _BUFFERS.search(name):
            continue
        if name in _TOP:
            ours[_TOP[name]] = tensor
            continue
        match = _LAYER.match(name)
        if match is None:
            ours[name] = tensor
            continue
        layer, part, kind = match.groups()
        prefix = f"decoder.layers.{layer}."
        if part == "attention.query_key_value":
            for projection, chunk in zip(("w_q", "w_k", "w_v"), _split_per_head(tensor, heads), strict=True):
                ours[f"{prefix}self_attn.{projection}.{kind}"] = chunk
        elif part in _PARTS:
            ours[f"{prefix}{_PARTS[part]}.{kind}"] = tensor
        else:
            ours[name] = tensor
    return ours


def vocabulary(path: Path, hf: dict, generation: dict) -> shared.DecoderVocabulary:
    """The tokenizer.json of a GPT-NeoX directory (no BOS added)."""
    return shared.DecoderVocabulary(path, hf, generation, FAMILY)
