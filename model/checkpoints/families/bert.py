"""BERT encoders (BERT, MiniLM, ...): learned positions, token types, LayerNorm on the embedding
sum, no sqrt(d_model) scaling, GELU, Post-LN; no decoder. Tokenized by the `tokenizers` library
from the checkpoint's own tokenizer.json."""

from __future__ import annotations

import json
import re
from pathlib import Path

import torch

from i18n import later

from ...engine.config import ModelConfig
from ...engine.tokens import SpecialIds
from ...errors import CheckpointError
from .hf_tokenizer import TokenizersVocabulary, open_tokenizer

ACTIVATIONS = {
    "gelu": "gelu",
    "gelu_new": "gelu_tanh",
    "gelu_pytorch_tanh": "gelu_tanh",
    "relu": "relu",
    "silu": "silu",
    "swish": "silu",
}
_EMBEDDINGS = {
    "embeddings.word_embeddings.weight": "src_embed.token.weight",
    "embeddings.position_embeddings.weight": "src_embed.positions.table",
    "embeddings.token_type_embeddings.weight": "src_embed.token_type.weight",
    "embeddings.LayerNorm.weight": "src_embed.norm.weight",
    "embeddings.LayerNorm.bias": "src_embed.norm.bias",
}
_LAYER_PARTS = {
    "attention.self.query": "self_attn.w_q",
    "attention.self.key": "self_attn.w_k",
    "attention.self.value": "self_attn.w_v",
    "attention.output.dense": "self_attn.w_o",
    "attention.output.LayerNorm": "norm_self",
    "intermediate.dense": "ffn.w_1",
    "output.dense": "ffn.w_2",
    "output.LayerNorm": "norm_ffn",
}
_LAYER = re.compile(r"^encoder\.layer\.(\d+)\.(.+)\.(weight|bias)$")
_UNUSED = ("embeddings.position_ids", "pooler.", "cls.")  # an index buffer and heads the encoder view never runs


def _refuse(path: Path, problem: str) -> CheckpointError:
    return CheckpointError(
        later(
            "Cannot open the {family} checkpoint at {path}: {problem}.", family="BERT", path=str(path), problem=problem
        )
    )


def model_config(hf: dict, path: Path) -> ModelConfig:
    """Our (encoder-only) ModelConfig for a BERT config.json."""
    if hf.get("position_embedding_type", "absolute") != "absolute":
        raise _refuse(
            path,
            later(
                "position_embedding_type {value} is not supported (only absolute learned positions)",
                value=repr(hf.get("position_embedding_type")),
            ),
        )
    activation = ACTIVATIONS.get(hf.get("hidden_act", "gelu"))
    if activation is None:
        raise _refuse(
            path,
            later(
                "{setting} {value} is not one of {names}",
                setting="hidden_act",
                value=repr(hf.get("hidden_act")),
                names=str(sorted(ACTIVATIONS)),
            ),
        )
    try:
        return ModelConfig(
            vocab_size=hf["vocab_size"],
            d_model=hf.get("hidden_size", 768),
            n_heads=hf.get("num_attention_heads", 12),
            d_ff=hf.get("intermediate_size", 3072),
            n_encoder_layers=hf.get("num_hidden_layers", 12),
            n_decoder_layers=0,
            dropout=0.0,
            max_len=hf.get("max_position_embeddings", 512),
            norm_first=False,
            activation=activation,
            positional="learned",
            scale_embeddings=False,
            embed_norm=True,
            token_types=hf.get("type_vocab_size", 2),
            layer_norm_eps=float(hf.get("layer_norm_eps", 1e-12)),
            pad_id=hf.get("pad_token_id", 0) or 0,
        )
    except (KeyError, TypeError, ValueError) as exc:  # a missing key, or a value of the wrong kind
        raise _refuse(
            path, later("config.json does not describe a usable model ({problem})", problem=str(exc))
        ) from None


def _norm_name(name: str) -> str:
    return name.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias")


def rename(tensors: dict[str, torch.Tensor], path: Path) -> dict[str, torch.Tensor]:
    """BERT parameter names (with or without the `bert.` prefix) -> ours; the pooler is left out."""
    ours = {}
    for name, tensor in tensors.items():
        name = _norm_name(name.removeprefix("bert."))
        if name.startswith(_UNUSED):
            continue
        if name in _EMBEDDINGS:
            ours[_EMBEDDINGS[name]] = tensor
            continue
        match = _LAYER.match(name)
        part = _LAYER_PARTS.get(match.group(2)) if match else None
        if match is None or part is None:
            ours[name] = tensor  # left under its own name: reported as unexpected
            continue
        layer, _, kind = match.groups()
        ours[f"encoder.layers.{layer}.{part}.{kind}"] = tensor
    return ours


def tokenizer_files(path: Path) -> list[Path]:
    """The files that define this tokenizer (part of the checkpoint's identity)."""
    return [path / "tokenizer.json"]


def pooling(path: Path) -> str:
    """'cls' when sentence-transformers' pooling config says so, else 'mean' (its usual choice)."""
    try:
        config = json.loads((path / "1_Pooling" / "config.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return "mean"
    return "cls" if isinstance(config, dict) and config.get("pooling_mode_cls_token") else "mean"


class BertVocabulary(TokenizersVocabulary):
    """The checkpoint's tokenizer.json run by the `tokenizers` library: [CLS] pieces [SEP]."""

    def __init__(self, path: Path, hf: dict) -> None:
        self.tokenizer = open_tokenizer(path / "tokenizer.json", lambda problem: _refuse(path, problem))
        found: dict[str, int] = {}
        for name in ("[PAD]", "[UNK]", "[CLS]", "[SEP]"):
            index = self.tokenizer.token_to_id(name)
            if index is None:
                raise _refuse(path, later("tokenizer.json lacks one of [PAD], [UNK], [CLS], [SEP]"))
            found[name] = index
        self.specials = SpecialIds(pad=found["[PAD]"], unk=found["[UNK]"], bos=found["[CLS]"], eos=found["[SEP]"])


def vocabulary(path: Path, hf: dict, generation: dict) -> BertVocabulary:
    """The tokenizer of a BERT directory."""
    return BertVocabulary(path, hf)
