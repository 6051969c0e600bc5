"""What llama.cpp's converter did to a Hugging Face checkpoint, per architecture, undone: its metadata
back into a config.json, its tensor names back into the family's, and its changes to the weights
reversed (Llama's permuted query and key rows, Gemma's norms stored with 1 added, GPT-NeoX's fused
query/key/value regrouped). The family modules then read the result as they read any hub folder."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from i18n import later

from .reader import GGUFFile, Refuse

# blk.N.<part> -> the Llama-style name under model.layers.N (ffn_norm differs: see Architecture.ffn_norm)
_LLAMA_BLOCK = {
    "attn_norm": "input_layernorm",
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "attn_q_norm": "self_attn.q_norm",
    "attn_k_norm": "self_attn.k_norm",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
    "post_attention_norm": "post_attention_layernorm",
    "post_ffw_norm": "post_feedforward_layernorm",
}
_LLAMA_TOP = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head"}
_NEOX_BLOCK = {
    "attn_norm": "input_layernorm",
    "attn_qkv": "attention.query_key_value",
    "attn_output": "attention.dense",
    "ffn_up": "mlp.dense_h_to_4h",
    "ffn_down": "mlp.dense_4h_to_h",
}
_NEOX_TOP = {"token_embd": "gpt_neox.embed_in", "output_norm": "gpt_neox.final_layer_norm", "output": "embed_out"}
_NAME = re.compile(r"^(?:blk\.(\d+)\.)?(\w+)\.(weight|bias)$")


@dataclass(frozen=True)
class Architecture:
    """One `general.architecture`: the family that reads it and what its converter changed."""

    model_type: str  # the family module (model/checkpoints/families/)
    config: Callable[[GGUFFile, str, Refuse], dict]  # metadata (under its prefix) -> config.json's own keys
    block: dict[str, str] = field(default_factory=lambda: _LLAMA_BLOCK)
    top: dict[str, str] = field(default_factory=lambda: _LLAMA_TOP)
    layer_prefix: str = "model.layers"
    ffn_norm: str = "post_attention_layernorm"  # Gemma 3's ffn_norm is its pre-feed-forward norm
    permuted_qk: bool = False  # llama.cpp's converter permuted q and k rows for its interleaved rotation
    norm_offset: float = 0.0  # added to every norm weight by the converter (Gemma: 1)
    fused_qkv: bool = False  # GPT-NeoX: the converter regrouped query_key_value into three blocks


def _number(gguf: GGUFFile, key: str, refuse: Refuse, default: float | None = None) -> float:
    value = gguf.field(key, default)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        if value is None:
            raise refuse(later("its metadata has no number {key}", key=key))
        raise refuse(later("{key} is not a number ({value})", key=key, value=repr(value)))
    return value


def _whole(gguf: GGUFFile, key: str, refuse: Refuse, default: int | None = None) -> int:
    value = _number(gguf, key, refuse, default)
    if value != int(value) or value < 0:
        raise refuse(later("{key} must be a whole number, not {value}", key=key, value=repr(value)))
    return int(value)


def _rows(gguf: GGUFFile, name: str) -> int:
    info = gguf.tensors.get(name)
    return info.shape[0] if info is not None else 0


def _sizes(gguf: GGUFFile, arch: str, refuse: Refuse) -> dict[str, Any]:
    """The sizes every rotary decoder states under its architecture's prefix."""
    heads = _whole(gguf, f"{arch}.attention.head_count", refuse)
    tokens = gguf.field("tokenizer.ggml.tokens")
    vocab = _rows(gguf, "token_embd.weight") or (len(tokens) if isinstance(tokens, list) else 0)
    hf: dict[str, Any] = {
        "vocab_size": _whole(gguf, f"{arch}.vocab_size", refuse, vocab),
        "hidden_size": _whole(gguf, f"{arch}.embedding_length", refuse),
        "intermediate_size": _whole(gguf, f"{arch}.feed_forward_length", refuse),
        "num_hidden_layers": _whole(gguf, f"{arch}.block_count", refuse),
        "num_attention_heads": heads,
        "num_key_value_heads": _whole(gguf, f"{arch}.attention.head_count_kv", refuse, heads),
        "max_position_embeddings": _whole(gguf, f"{arch}.context_length", refuse, 2048),
        "rope_theta": _number(gguf, f"{arch}.rope.freq_base", refuse, 10000.0),
        "tie_word_embeddings": "output.weight" not in gguf.tensors,
    }
    if f"{arch}.attention.layer_norm_rms_epsilon" in gguf.metadata:
        hf["rms_norm_eps"] = _number(gguf, f"{arch}.attention.layer_norm_rms_epsilon", refuse)
    if f"{arch}.attention.key_length" in gguf.metadata:
        hf["head_dim"] = _whole(gguf, f"{arch}.attention.key_length", refuse)
    scaling = gguf.field(f"{arch}.rope.scaling.type")
    if isinstance(scaling, str) and scaling not in ("", "none"):
        hf["rope_scaling"] = {"rope_type": scaling}  # refused by the family, in its own words
    return hf


def _llama(gguf: GGUFFile, arch: str, refuse: Refuse) -> dict:
    hf = _sizes(gguf, arch, refuse)
    bias = "blk.0.attn_q.bias" in gguf.tensors
    return hf | {"hidden_act": "silu", "attention_bias": bias, "mlp_bias": "blk.0.ffn_up.bias" in gguf.tensors}


def _qwen(gguf: GGUFFile, arch: str, refuse: Refuse) -> dict:
    return _sizes(gguf, arch, refuse) | {"hidden_act": "silu", "use_sliding_window": False}


# Gemma 3's files leave out what llama.cpp and transformers both assume: every sixth layer sees every
# earlier position, the others slide; the sliding layers turn with base 10,000.
GEMMA3_FULL_EVERY, GEMMA3_LOCAL_BASE = 6, 10000.0


def _gemma3(gguf: GGUFFile, arch: str, refuse: Refuse) -> dict:
    hf = _sizes(gguf, arch, refuse)
    window = _whole(gguf, f"{arch}.attention.sliding_window", refuse, 0)
    hf |= {
        "hidden_activation": "gelu_pytorch_tanh",
        "query_pre_attn_scalar": hf.get("head_dim", hf["hidden_size"] // hf["num_attention_heads"]),
        "rope_parameters": {
            "full_attention": {"rope_type": "default", "rope_theta": hf.pop("rope_theta")},
            "sliding_attention": {"rope_type": "default", "rope_theta": GEMMA3_LOCAL_BASE},
        },
    }
    if window:
        slides = [i % GEMMA3_FULL_EVERY < GEMMA3_FULL_EVERY - 1 for i in range(hf["num_hidden_layers"])]
        kinds = ["sliding_attention" if slide else "full_attention" for slide in slides]
        hf |= {"sliding_window": window, "layer_types": kinds}
    return hf


def _neox(gguf: GGUFFile, arch: str, refuse: Refuse) -> dict:
    heads = _whole(gguf, f"{arch}.attention.head_count", refuse)
    hidden = _whole(gguf, f"{arch}.embedding_length", refuse)
    rotary = _whole(gguf, f"{arch}.rope.dimension_count", refuse, hidden // heads)
    return {
        "vocab_size": _rows(gguf, "token_embd.weight"),
        "hidden_size": hidden,
        "intermediate_size": _whole(gguf, f"{arch}.feed_forward_length", refuse),
        "num_hidden_layers": _whole(gguf, f"{arch}.block_count", refuse),
        "num_attention_heads": heads,
        "max_position_embeddings": _whole(gguf, f"{arch}.context_length", refuse, 2048),
        "rotary_pct": rotary / (hidden // heads),
        "rotary_emb_base": _number(gguf, f"{arch}.rope.freq_base", refuse, 10000.0),
        "layer_norm_eps": _number(gguf, f"{arch}.attention.layer_norm_epsilon", refuse, 1e-5),
        "use_parallel_residual": bool(gguf.field(f"{arch}.use_parallel_residual", True)),
        "hidden_act": "gelu",
        "tie_word_embeddings": False,
    }


ARCHITECTURES = {
    "llama": Architecture("llama", _llama, permuted_qk=True),
    "qwen2": Architecture("qwen2", _qwen),
    "qwen3": Architecture("qwen3", _qwen),
    "gemma3": Architecture("gemma3_text", _gemma3, ffn_norm="pre_feedforward_layernorm", norm_offset=1.0),
    "gptneox": Architecture(
        "gpt_neox",
        _neox,
        block=_NEOX_BLOCK,
        top=_NEOX_TOP,
        layer_prefix="gpt_neox.layers",
        fused_qkv=True,
    ),
}


def architecture(gguf: GGUFFile) -> tuple[str, Architecture]:
    """The file's `general.architecture` and how to read it, or a refusal naming the ones there are."""
    name = gguf.field("general.architecture")
    if not isinstance(name, str) or name not in ARCHITECTURES:
        raise gguf.refuse(
            later(
                "its architecture {name} is not supported (supported: {names})",
                name=repr(name),
                names=", ".join(sorted(ARCHITECTURES)),
            )
        )
    return name, ARCHITECTURES[name]


def hf_name(arch: Architecture, name: str) -> str:
    """The family's own name for a GGUF tensor (a name it does not know is kept, and reported unexpected)."""
    match = _NAME.match(name)
    if match is None:
        return name
    layer, part, kind = match.groups()
    if layer is None:
        return f"{arch.top[part]}.{kind}" if part in arch.top else name
    table = arch.block | {"ffn_norm": arch.ffn_norm}
    return f"{arch.layer_prefix}.{layer}.{table[part]}.{kind}" if part in table else name


def restored(arch: Architecture, name: str, values: np.ndarray, hf: dict) -> np.ndarray:
    """A dequantized tensor as the Hugging Face checkpoint held it, before the converter changed it."""
    part = _NAME.match(name)
    part_name = part.group(2) if part else ""
    if arch.permuted_qk and part_name in ("attn_q", "attn_k"):
        heads = hf["num_attention_heads"] if part_name == "attn_q" else hf["num_key_value_heads"]
        # the converter laid each head's rotate-half pairs (i, i + d/2) side by side as rows (2i, 2i + 1)
        shape = values.shape
        values = values.reshape(heads, shape[0] // heads // 2, 2, *shape[1:]).swapaxes(1, 2).reshape(shape)
    if arch.norm_offset and part_name.endswith("norm"):
        values = values - np.float32(arch.norm_offset)
    if arch.fused_qkv and part_name == "attn_qkv":
        heads, shape = hf["num_attention_heads"], values.shape
        values = values.reshape(3, heads, shape[0] // 3 // heads, *shape[1:]).swapaxes(0, 1).reshape(shape)
    return np.ascontiguousarray(values)
