"""Tiny GGUF files written here as llama.cpp's converter writes them, from the tiny hub folders of
hf_fixtures: its metadata keys, its tensor names, its changes to the weights (Llama's q and k rows
permuted for interleaved rotation, Gemma's norms stored with 1 added, GPT-NeoX's fused query/key/value
regrouped into three blocks) and quantized tensors of the types the real files mix.

Each writer also gives the hub folder with the weights the file really holds (its quantized values,
dequantized), so a test compares a GGUF open with a hub open of the same numbers.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import torch
from gguf import GGUFWriter
from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType
from gguf.quants import dequantize, quantize
from safetensors.torch import load_file, save_file

Q = GGMLQuantizationType
ARCH = {"llama": "llama", "qwen2": "qwen2", "qwen3": "qwen3", "gemma3_text": "gemma3", "gpt_neox": "gptneox"}
# (the matrices' type, the embedding's): as the real files mix them (SmolLM2: Q4_1 and Q8_0; Gemma 3 270M:
# Q4_K, Q6_K and Q5_0 with a Q8_0 embedding)
TYPES = {
    "llama": (Q.Q4_1, Q.Q8_0),
    "qwen2": (Q.Q5_1, Q.Q4_0),
    "qwen3": (Q.Q5_K, Q.Q6_K),
    "gemma3_text": (Q.Q4_K, Q.Q8_0),
    "gpt_neox": (Q.F16, Q.BF16),
}
SECOND = {"gemma3_text": Q.Q6_K, "llama": Q.Q5_0, "qwen3": Q.Q4_K}  # the down projections' type
# the hub folders' shapes: wide enough for each type's blocks (256 values for the K types), and Gemma 3's
# layer pattern and bases as its GGUF files leave them implied (every sixth layer full; 10,000 when sliding)
SHAPES = {
    "llama": {"hidden_size": 64, "intermediate_size": 96},
    "qwen2": {"hidden_size": 64, "intermediate_size": 96},
    "qwen3": {"hidden_size": 256, "intermediate_size": 256, "head_dim": 128},  # transformers reads no key_length
    "gemma3_text": {
        "hidden_size": 256,
        "intermediate_size": 512,
        "head_dim": 256,
        "query_pre_attn_scalar": 256,
        "num_hidden_layers": 6,
        "layer_types": ["sliding_attention"] * 5 + ["full_attention"],
        "rope_parameters": {
            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
            "full_attention": {"rope_type": "default", "rope_theta": 1000000.0},
        },
    },
    "gpt_neox": {"hidden_size": 64, "intermediate_size": 128},
}
_LLAMA_PARTS = {
    "input_layernorm": "attn_norm",
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "self_attn.q_norm": "attn_q_norm",
    "self_attn.k_norm": "attn_k_norm",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
    "post_attention_layernorm": "ffn_norm",
}
_GEMMA_PARTS = _LLAMA_PARTS | {
    "post_attention_layernorm": "post_attention_norm",
    "pre_feedforward_layernorm": "ffn_norm",
    "post_feedforward_layernorm": "post_ffw_norm",
}
_NEOX_PARTS = {
    "input_layernorm": "attn_norm",
    "attention.query_key_value": "attn_qkv",
    "attention.dense": "attn_output",
    "post_attention_layernorm": "ffn_norm",
    "mlp.dense_h_to_4h": "ffn_up",
    "mlp.dense_4h_to_h": "ffn_down",
}


def gguf_name(family: str, name: str) -> str:
    """llama.cpp's name for a hub tensor name."""
    top = {
        "model.embed_tokens.weight": "token_embd.weight",
        "model.norm.weight": "output_norm.weight",
        "lm_head.weight": "output.weight",
        "gpt_neox.embed_in.weight": "token_embd.weight",
        "gpt_neox.final_layer_norm.weight": "output_norm.weight",
        "gpt_neox.final_layer_norm.bias": "output_norm.bias",
        "embed_out.weight": "output.weight",
    }
    if name in top:
        return top[name]
    parts = {"gemma3_text": _GEMMA_PARTS, "gpt_neox": _NEOX_PARTS}.get(family, _LLAMA_PARTS)
    prefix = "gpt_neox.layers." if family == "gpt_neox" else "model.layers."
    layer, rest = name.removeprefix(prefix).split(".", 1)
    part, kind = rest.rsplit(".", 1)
    return f"blk.{layer}.{parts[part]}.{kind}"


def random_blocks(kind: GGMLQuantizationType, rows: int, columns: int, seed: int) -> np.ndarray:
    """Random quantized rows of a K type (gguf has no quantizer for them): random bytes, their scales set
    to small finite half floats (where each type keeps them)."""
    block, size = GGML_QUANT_SIZES[kind]
    raw = np.random.default_rng(seed).integers(0, 256, size=(rows, columns // block, size), dtype=np.uint8)
    scale = np.array([0.0005], dtype=np.float16).view(np.uint8)  # values of about +-0.5, as trained weights
    if kind in (Q.Q4_K, Q.Q5_K):  # d, dmin first
        raw[..., 0:2], raw[..., 2:4] = scale, scale
    elif kind == Q.Q6_K:  # d last
        raw[..., -2:] = scale
    else:
        raise ValueError(f"no random blocks for {kind.name}")
    return raw.reshape(rows, -1)


def _stored(kind: GGMLQuantizationType, values: np.ndarray, seed: int) -> np.ndarray:
    """`values` (float32) as the file stores them in `kind` (K types: random blocks of the same shape)."""
    if kind in (Q.Q4_K, Q.Q5_K, Q.Q6_K):
        return random_blocks(kind, values.shape[0], values.shape[1], seed)
    if kind == Q.F32:
        return values.astype(np.float32)
    return quantize(values.astype(np.float32), kind)


def _permute(values: np.ndarray, heads: int) -> np.ndarray:
    """llama.cpp's permutation of a q or k projection's rows, for its interleaved rotation."""
    shape = values.shape
    return values.reshape(heads, 2, shape[0] // heads // 2, *shape[1:]).swapaxes(1, 2).reshape(shape)


def _regroup(values: np.ndarray, heads: int) -> np.ndarray:
    """llama.cpp's GPT-NeoX query_key_value: per head (q, k, v) -> all q, all k, all v."""
    shape = values.shape
    return values.reshape(heads, 3, shape[0] // 3 // heads, *shape[1:]).swapaxes(0, 1).reshape(shape)


def _tokenizer_fields(writer: GGUFWriter, hub: Path, family: str) -> None:
    tokenizer = json.loads((hub / "tokenizer.json").read_text())
    config = json.loads((hub / "tokenizer_config.json").read_text())
    model = tokenizer["model"]
    vocab = dict(model["vocab"])
    for added in tokenizer["added_tokens"]:
        vocab[added["content"]] = added["id"]
    by_id = {i: t for t, i in vocab.items()}
    rows = json.loads((hub / "config.json").read_text())["vocab_size"]
    # rows of the embedding the tokenizer lacks are named [PAD<id>], as llama.cpp does (Qwen's)
    tokens = [by_id.get(i, f"[PAD{i}]") for i in range(max(rows, len(by_id)))]
    special = {a["content"] for a in tokenizer["added_tokens"] if a.get("special")}
    types = [3 if t in special else 5 if i not in by_id else 1 for i, t in enumerate(tokens)]
    gemma = family == "gemma3_text"
    writer.add_tokenizer_model("llama" if gemma else "gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    if gemma:  # no merges: implied by the vocabulary's order, as in the real file
        writer.add_token_scores([-1000.0 if t in special else -float(i) for i, t in enumerate(tokens)])
        writer.add_add_space_prefix(False)
    else:
        merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
        writer.add_token_merges(merges)
    hf = json.loads((hub / "config.json").read_text())
    writer.add_bos_token_id(int(hf["bos_token_id"]))
    writer.add_eos_token_id(int(hf["eos_token_id"]))
    if hf.get("pad_token_id") is not None:
        writer.add_pad_token_id(int(hf["pad_token_id"]))
    if gemma:
        writer.add_unk_token_id(vocab["<unk>"])
    writer.add_add_bos_token(family in ("llama", "gemma3_text"))
    template = config.get("chat_template")
    if (hub / "chat_template.jinja").is_file():
        template = (hub / "chat_template.jinja").read_text()
    if template:
        writer.add_chat_template(template)


def _config_fields(writer: GGUFWriter, hf: dict, family: str, arch: str) -> None:
    heads = hf["num_attention_heads"]
    writer.add_block_count(hf["num_hidden_layers"])
    writer.add_context_length(hf["max_position_embeddings"])
    writer.add_embedding_length(hf["hidden_size"])
    writer.add_feed_forward_length(hf["intermediate_size"])
    writer.add_head_count(heads)
    if family == "gpt_neox":
        head = hf["hidden_size"] // heads
        rope = hf.get("rope_parameters") or {}
        writer.add_rope_dimension_count(int(head * rope.get("partial_rotary_factor", 0.25)))
        writer.add_rope_freq_base(float(rope.get("rope_theta", 10000.0)))
        writer.add_parallel_residual(bool(hf.get("use_parallel_residual", True)))
        writer.add_layer_norm_eps(float(hf["layer_norm_eps"]))
        return
    writer.add_head_count_kv(hf["num_key_value_heads"])
    writer.add_layer_norm_rms_eps(float(hf["rms_norm_eps"]))
    rope = hf.get("rope_parameters") or {}
    base = rope.get("full_attention", rope).get("rope_theta", hf.get("rope_theta", 10000.0))
    writer.add_rope_freq_base(float(base))
    if hf.get("head_dim") and hf["head_dim"] * heads != hf["hidden_size"] or family in ("qwen3", "gemma3_text"):
        writer.add_key_length(hf["head_dim"])
        writer.add_value_length(hf["head_dim"])
    if family == "gemma3_text":
        writer.add_sliding_window(hf["sliding_window"])
    if family == "llama":
        writer.add_vocab_size(hf["vocab_size"])
        writer.add_rope_dimension_count(hf["hidden_size"] // heads)


def write_gguf(hub: Path, file: Path, family: str, reference: Path) -> Path:
    """Write the hub folder `hub` (of `family`) as a GGUF file at `file`, its matrices quantized as
    TYPES says; `reference`: a copy of `hub` holding the weights the file holds (dequantized), in the
    hub's own layout. Returns `file`."""
    arch = ARCH[family]
    hf = json.loads((hub / "config.json").read_text())
    weights = load_file(str(hub / "model.safetensors"))
    writer = GGUFWriter(str(file), arch)
    writer.add_name(hub.name)
    writer.add_license("apache-2.0")
    _config_fields(writer, hf, family, arch)
    _tokenizer_fields(writer, hub, family)
    matrix_type, embedding_type = TYPES[family]
    held = {}
    for index, (name, tensor) in enumerate(sorted(weights.items())):
        values = tensor.float().numpy()
        if values.ndim == 2:
            if "embed" in name:
                kind = embedding_type
            elif "down_proj" in name or "dense_4h_to_h" in name:
                kind = SECOND.get(family, matrix_type)
            else:
                kind = matrix_type
            stored = _stored(kind, values, seed=index)
            values = dequantize(stored, kind).reshape(values.shape)  # what the file holds, hub layout
        else:
            kind, stored = Q.F32, values.astype(np.float32)
        held[name] = values
        out = stored
        if family == "llama" and name.endswith(("q_proj.weight", "k_proj.weight")):
            heads = hf["num_attention_heads"] if "q_proj" in name else hf["num_key_value_heads"]
            out = _permute(stored, heads)  # rows move whole, quantized or not
        if family == "gpt_neox" and "query_key_value" in name:
            out = _regroup(stored, hf["num_attention_heads"])
        if family == "gemma3_text" and name.endswith("norm.weight"):
            out = (values + 1.0).astype(np.float32)
            held[name] = out - np.float32(1.0)  # what reading it back gives
        writer.add_tensor(gguf_name(family, name), out, raw_dtype=kind)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    if reference.exists():
        shutil.rmtree(reference)
    shutil.copytree(hub, reference)
    save_file(
        {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in held.items()}, str(reference / "model.safetensors")
    )
    return file
