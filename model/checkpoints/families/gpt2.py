"""GPT-2 (openai-community/gpt2, distilgpt2 and the larger sizes): a decoder alone, with no
encoder and no cross-attention; a learned position table; LayerNorm before every sublayer and once
more at the end; GELU in its tanh form; the output projection tied to the token embedding. Its
weights are Conv1D, stored (in, out): transposed here, and the fused query/key/value split in
three. Tokenized by byte-level BPE from tokenizer.json (or vocab.json and merges.txt)."""

from __future__ import annotations

import re
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, pre_tokenizers
from tokenizers.models import BPE

from i18n import later

from ...engine.config import ModelConfig
from ...engine.tokens import SpecialIds
from ...errors import CheckpointError
from .hf_tokenizer import TokenizersVocabulary, open_tokenizer

ACTIVATIONS = {
    "gelu_new": "gelu_tanh",
    "gelu_pytorch_tanh": "gelu_tanh",
    "gelu": "gelu",
    "relu": "relu",
    "silu": "silu",
    "swish": "silu",
}
END = "<|endoftext|>"
_TOP = {
    "wte.weight": "tgt_embed.token.weight",
    "wpe.weight": "tgt_embed.positions.table",
    "ln_f.weight": "decoder.final_norm.weight",
    "ln_f.bias": "decoder.final_norm.bias",
}
_LAYER_PARTS = {
    "ln_1": "norm_self",
    "ln_2": "norm_ffn",
    "attn.c_proj": "self_attn.w_o",
    "mlp.c_fc": "ffn.w_1",
    "mlp.c_proj": "ffn.w_2",
}
_LAYER = re.compile(r"^h\.(\d+)\.(.+)\.(weight|bias)$")
_BUFFERS = re.compile(r"^h\.\d+\.attn\.(bias|masked_bias)$")  # the causal-mask buffers of older exports


def _refuse(path: Path, problem: str) -> CheckpointError:
    return CheckpointError(
        later(
            "Cannot open the {family} checkpoint at {path}: {problem}.", family="GPT-2", path=str(path), problem=problem
        )
    )


def model_config(hf: dict, path: Path) -> ModelConfig:
    """Our (decoder-only) ModelConfig for a GPT-2 config.json; settings the engine cannot mirror are refused."""
    for setting in ("scale_attn_by_inverse_layer_idx", "add_cross_attention"):
        if hf.get(setting):
            raise _refuse(path, later("{setting} is not supported", setting=setting))
    activation = ACTIVATIONS.get(hf.get("activation_function", "gelu_new"))
    if activation is None:
        named = hf.get("activation_function")
        raise _refuse(
            path,
            later(
                "{setting} {value} is not one of {names}",
                setting="activation_function",
                value=repr(named),
                names=str(sorted(ACTIVATIONS)),
            ),
        )
    d_model = hf.get("n_embd", 768)
    end = hf.get("eos_token_id", 50256)
    try:
        return ModelConfig(
            vocab_size=hf.get("vocab_size", 50257),
            d_model=d_model,
            n_heads=hf.get("n_head", 12),
            d_ff=hf.get("n_inner") or 4 * d_model,
            n_encoder_layers=0,
            n_decoder_layers=hf.get("n_layer", 12),
            dropout=0.0,
            max_len=hf.get("n_positions", 1024),
            norm_first=True,
            activation=activation,
            tie_embeddings=True,
            positional="learned",
            scale_embeddings=False,
            scale_scores=bool(hf.get("scale_attn_weights", True)),
            layer_norm_eps=float(hf.get("layer_norm_epsilon", 1e-5)),
            pad_id=end if hf.get("pad_token_id") is None else hf["pad_token_id"],
        )
    except (TypeError, ValueError) as exc:
        raise _refuse(
            path, later("config.json does not describe a usable model ({problem})", problem=str(exc))
        ) from None


def rename(tensors: dict[str, torch.Tensor], path: Path) -> dict[str, torch.Tensor]:
    """GPT-2 names (with or without the `transformer.` prefix) -> ours; Conv1D (in, out) weights
    transposed to (out, in), c_attn split into the query, key and value projections."""
    ours = {}
    for name, tensor in tensors.items():
        name = name.removeprefix("transformer.")
        if _BUFFERS.match(name):
            continue
        if name == "lm_head.weight":
            ours["generator.weight"] = tensor  # dropped by the loader when the head is tied
            continue
        if name in _TOP:
            ours[_TOP[name]] = tensor
            continue
        match = _LAYER.match(name)
        if match is None:
            ours[name] = tensor  # left under its own name: reported as unexpected
            continue
        layer, part, kind = match.groups()
        prefix = f"decoder.layers.{layer}."
        weight = tensor.t() if kind == "weight" and tensor.dim() == 2 else tensor  # Conv1D: (in, out)
        if part == "attn.c_attn":
            for projection, chunk in zip(("w_q", "w_k", "w_v"), weight.chunk(3, dim=0), strict=True):
                ours[f"{prefix}self_attn.{projection}.{kind}"] = chunk.contiguous()
        elif part in _LAYER_PARTS:
            ours[f"{prefix}{_LAYER_PARTS[part]}.{kind}"] = weight.contiguous()
        else:
            ours[name] = tensor
    return ours


def tokenizer_files(path: Path) -> list[Path]:
    """The files that define this tokenizer (part of the checkpoint's identity)."""
    if (path / "tokenizer.json").is_file():
        return [path / "tokenizer.json"]
    return [path / "vocab.json", path / "merges.txt"]


class GPT2Vocabulary(TokenizersVocabulary):
    """Byte-level BPE: text to pieces with no special piece added; <|endoftext|> ends a text (and,
    as transformers does for generation, stands in for the padding it lacks)."""

    def __init__(self, path: Path, hf: dict, generation: dict) -> None:
        refuse = lambda problem: _refuse(path, problem)  # noqa: E731
        if (path / "tokenizer.json").is_file():
            self.tokenizer = open_tokenizer(path / "tokenizer.json", refuse)
        else:
            self.tokenizer = _from_vocab_and_merges(path, refuse)
        end = self.tokenizer.token_to_id(END)
        eos = generation.get("eos_token_id", hf.get("eos_token_id", end))
        if not isinstance(eos, int):
            raise refuse(later("it names no {token} id", token=END))
        pad = hf.get("pad_token_id") if hf.get("pad_token_id") is not None else eos
        bos = generation.get("bos_token_id", hf.get("bos_token_id", eos))
        if not isinstance(pad, int) or not isinstance(bos, int):
            raise refuse(later("its pad_token_id and bos_token_id must be ids"))
        self.specials = SpecialIds(pad=pad, unk=eos, bos=bos, eos=eos)


def _from_vocab_and_merges(path: Path, refuse) -> Tokenizer:
    """GPT-2's byte-level BPE built from vocab.json and merges.txt, as its tokenizer.json describes it."""
    missing = [name for name in ("vocab.json", "merges.txt") if not (path / name).is_file()]
    if missing:
        if len(missing) > 1:
            raise refuse(later("missing tokenizer.json (or vocab.json and merges.txt)"))
        raise refuse(later("missing tokenizer.json (or {file})", file=missing[0]))
    try:
        tokenizer = Tokenizer(BPE.from_file(str(path / "vocab.json"), str(path / "merges.txt")))
    except Exception as exc:  # the library raises its own exception type for broken files
        raise refuse(later("vocab.json and merges.txt are not readable ({problem})", problem=str(exc))) from None
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    if tokenizer.token_to_id(END) is not None:
        tokenizer.add_special_tokens([END])
    return tokenizer


def vocabulary(path: Path, hf: dict, generation: dict) -> GPT2Vocabulary:
    """The tokenizer of a GPT-2 directory."""
    return GPT2Vocabulary(path, hf, generation)
