"""What today's decoders share (Llama, Qwen2, Qwen3, Gemma 3, GPT-NeoX): a decoder alone with rotary
positions, read from config.json in either form (transformers 5's `rope_parameters`, flat or per
layer type; or the older `rope_theta` / `rope_scaling` / `rotary_pct` / `rotary_emb_base` /
`rope_local_base_freq` keys), sliding windows per layer (`layer_types`, `sliding_window`), the
Llama-style parameter names, and a tokenizer.json run with its own post-processor (so BOS comes
where the file adds it). Each family's own file says what differs."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from i18n import later

from ...engine.config import ModelConfig
from ...engine.tokens import SpecialIds
from ...errors import CheckpointError
from ..record import ChatTemplate
from .hf_tokenizer import TokenizersVocabulary, open_tokenizer

ACTIVATIONS = {
    "silu": "silu",
    "swish": "silu",
    "gelu": "gelu",
    "gelu_new": "gelu_tanh",
    "gelu_pytorch_tanh": "gelu_tanh",
    "gelu_fast": "gelu_tanh",
    "relu": "relu",
}
CHAT_TEMPLATE_FILE = "chat_template.jinja"
Refuse = Callable[[str], CheckpointError]


def refuser(path: Path, family: str) -> Refuse:
    """A function that makes the family's one-sentence refusal of a folder."""
    return lambda problem: CheckpointError(
        later(
            "Cannot open the {family} checkpoint at {path}: {problem}.", family=family, path=str(path), problem=problem
        )
    )


def activation(name: object, refuse: Refuse) -> str:
    """Our activation for the config's hidden_act / hidden_activation."""
    if not isinstance(name, str) or name not in ACTIVATIONS:
        raise refuse(
            later("the activation {name} is not one of {names}", name=repr(name), names=str(sorted(ACTIVATIONS)))
        )
    return ACTIVATIONS[name]


def _rope_type(params: dict, refuse: Refuse, where: str) -> None:
    kind = params.get("rope_type", params.get("type", "default"))
    if kind != "default":
        raise refuse(
            later(
                "its rotary positions are scaled ({where} rope type {kind}); only the default rotary positions are "
                "supported",
                where=where,
                kind=repr(kind),
            )
        )


def rope(hf: dict, refuse: Refuse, local_key: str = "") -> tuple[float, float, float]:
    """(base θ, share of each head's dims turned, base of the windowed layers or 0) from either form of
    the config: rope_parameters (flat, or per layer type "full_attention" / "sliding_attention"), or
    rope_theta, rope_scaling, partial_rotary_factor, rotary_pct, rotary_emb_base and `local_key`
    (Gemma 3's rope_local_base_freq). A scaling other than the default is refused."""
    params = hf.get("rope_parameters")
    scaling = hf.get("rope_scaling")
    if isinstance(scaling, dict):
        _rope_type(scaling, refuse, "rope_scaling")
    fraction = hf.get("partial_rotary_factor", hf.get("rotary_pct", 1.0))
    base = hf.get("rope_theta", hf.get("rotary_emb_base", 10000.0))
    local = hf.get(local_key, 0.0) if local_key else 0.0
    if isinstance(params, dict) and params:
        nested = {key: value for key, value in params.items() if isinstance(value, dict)}
        for layer_type, value in nested.items():
            _rope_type(value, refuse, f"rope_parameters[{layer_type!r}]")
        if nested:
            full = nested.get("full_attention", {})
            base = full.get("rope_theta", base)
            fraction = full.get("partial_rotary_factor", fraction)
            local = nested.get("sliding_attention", {}).get("rope_theta", local)
        else:
            _rope_type(params, refuse, "rope_parameters")
            base = params.get("rope_theta", base)
            fraction = params.get("partial_rotary_factor", fraction)
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (base, fraction, local)):
        raise refuse(
            later(
                "its rotary settings are not numbers (base {base}, fraction {fraction})",
                base=repr(base),
                fraction=repr(fraction),
            )
        )
    return float(base), float(fraction), float(local or 0.0)


def windows(hf: dict, layers: int, refuse: Refuse) -> tuple[int, ...]:
    """Each layer's sliding window (0: the layer sees every earlier position), from layer_types and
    sliding_window; Qwen's use_sliding_window false (its default) turns them all off; Gemma 3's older
    configs give sliding_window_pattern instead of layer_types."""
    window = hf.get("sliding_window")
    if not window or hf.get("use_sliding_window") is False:
        return ()
    types = hf.get("layer_types")
    if types is None and "sliding_window_pattern" in hf:
        pattern = int(hf["sliding_window_pattern"])
        types = ["sliding_attention" if (i + 1) % pattern else "full_attention" for i in range(layers)]
    if types is None and "max_window_layers" in hf:  # Qwen2 with use_sliding_window: the layers from there on
        types = ["sliding_attention" if i >= hf["max_window_layers"] else "full_attention" for i in range(layers)]
    if types is None:
        types = ["sliding_attention"] * layers
    if not isinstance(types, list) or len(types) != layers:
        raise refuse(later("layer_types must name the kind of each of its {layers} layers", layers=layers))
    unknown = sorted({t for t in types if t not in ("sliding_attention", "full_attention")})
    if unknown:
        raise refuse(later("layer types {types} are not sliding_attention or full_attention", types=str(unknown)))
    if not isinstance(window, int) or window < 1:
        raise refuse(later("sliding_window must be a positive number of positions, got {window}", window=repr(window)))
    found = tuple(window if t == "sliding_attention" else 0 for t in types)
    return found if any(found) else ()


def head_dim(hf: dict) -> int:
    """A head's width when config.json states it apart from hidden_size / heads (Qwen3, Gemma 3)."""
    stated = hf.get("head_dim")
    heads = hf.get("num_attention_heads")
    if isinstance(stated, int) and isinstance(heads, int) and stated * heads != hf.get("hidden_size"):
        return stated
    return 0


def eos_ids(hf: dict, generation: dict) -> list[int]:
    """Every id that ends a text: generation_config's eos_token_id (one or a list), else config.json's."""
    eos = generation.get("eos_token_id", hf.get("eos_token_id"))
    found = eos if isinstance(eos, list) else [eos]
    return [i for i in found if isinstance(i, int) and not isinstance(i, bool)]


def build_config(hf: dict, refuse: Refuse, **family: Any) -> ModelConfig:
    """The ModelConfig of a rotary decoder: the shared sizes and settings from config.json, then the
    family's own options (`family`) over them."""
    layers = hf.get("num_hidden_layers")
    base, fraction, local = rope(hf, refuse, family.pop("rope_local_key", ""))
    eos = eos_ids(hf, {})
    pad = hf.get("pad_token_id")
    if "vocab_size" not in hf:
        raise refuse(later("config.json does not say its vocab_size"))
    settings: dict[str, Any] = dict(
        vocab_size=hf["vocab_size"],
        d_model=hf.get("hidden_size"),
        n_heads=hf.get("num_attention_heads"),
        n_kv_heads=hf.get("num_key_value_heads") or 0,
        d_head=head_dim(hf),
        d_ff=hf.get("intermediate_size"),
        n_encoder_layers=0,
        n_decoder_layers=layers,
        dropout=0.0,
        max_len=hf.get("max_position_embeddings", 2048),
        norm_first=True,
        tie_embeddings=True,
        tie_output=bool(hf.get("tie_word_embeddings", True)),
        positional="rotary",
        rotary_base=base,
        rotary_fraction=fraction,
        rotary_base_local=local,
        scale_embeddings=False,
        norm="rms",
        layer_norm_eps=float(hf.get("rms_norm_eps", 1e-6)),
        linear_bias=False,
        gated_ffn=True,
        pad_id=pad if isinstance(pad, int) else (eos[0] if eos else 0),
        windows=windows(hf, layers, refuse) if isinstance(layers, int) else (),
    )
    settings.update(family)
    try:
        return ModelConfig(**settings)
    except (TypeError, ValueError) as exc:
        raise refuse(later("config.json does not describe a usable model ({problem})", problem=str(exc))) from None


# ---------------------------------------------------------------------------------------------
# parameter names (Llama's, which Qwen2, Qwen3 and Gemma 3 share)

_TOP = {
    "model.embed_tokens.weight": "tgt_embed.token.weight",
    "model.norm.weight": "decoder.final_norm.weight",
    "lm_head.weight": "generator.weight",
}
_ATTENTION = {
    "q_proj": "w_q",
    "k_proj": "w_k",
    "v_proj": "w_v",
    "o_proj": "w_o",
    "q_norm": "q_norm",
    "k_norm": "k_norm",
}
_MLP = {"gate_proj": "ffn.w_1", "up_proj": "ffn.w_3", "down_proj": "ffn.w_2"}
_LAYER = re.compile(r"^model\.layers\.(\d+)\.(self_attn|mlp)\.(\w+)\.(weight|bias)$")
_NORM = re.compile(r"^model\.layers\.(\d+)\.(\w+layernorm)\.weight$")
_BUFFERS = re.compile(r"\.rotary_emb\.inv_freq$")  # the angles some older files saved: computed here


def rename_llama(tensors: dict[str, torch.Tensor], norms: dict[str, str]) -> dict[str, torch.Tensor]:
    """Llama-style names -> ours; `norms`: the family's layer norms (input_layernorm, ...) by our names."""
    ours = {}
    for name, tensor in tensors.items():
        if _BUFFERS.search(name):
            continue
        if name in _TOP:
            ours[_TOP[name]] = tensor
            continue
        layer = _LAYER.match(name)
        norm = _NORM.match(name)
        if layer is not None:
            index, block, part, kind = layer.groups()
            table = _ATTENTION if block == "self_attn" else _MLP
            if part in table:
                where = f"self_attn.{table[part]}" if block == "self_attn" else table[part]
                ours[f"decoder.layers.{index}.{where}.{kind}"] = tensor
                continue
        if norm is not None and norm.group(2) in norms:
            ours[f"decoder.layers.{norm.group(1)}.{norms[norm.group(2)]}.weight"] = tensor
            continue
        ours[name] = tensor  # left under its own name: reported as unexpected
    return ours


# ---------------------------------------------------------------------------------------------
# the tokenizer


def tokenizer_files(path: Path) -> list[Path]:
    """The files that define the tokenizer and the chat template (part of the checkpoint's identity)."""
    names = ("tokenizer.json", "tokenizer_config.json", CHAT_TEMPLATE_FILE)
    return [path / name for name in names if (path / name).is_file()]


class DecoderVocabulary(TokenizersVocabulary):
    """A tokenizer.json run as it is, post-processor included (Llama and Gemma put BOS first; Qwen and
    GPT-NeoX add nothing). An id the model has but the tokenizer lacks is shown as such
    (`TokenizersVocabulary.pieces`)."""

    def __init__(self, path: Path, hf: dict, generation: dict, family: str) -> None:
        refuse = refuser(path, family)
        self.tokenizer = open_tokenizer(path / "tokenizer.json", refuse)
        ends = eos_ids(hf, generation)
        if not ends:
            raise refuse(later("neither config.json nor generation_config.json names an eos_token_id"))
        bos = generation.get("bos_token_id", hf.get("bos_token_id"))
        pad = hf.get("pad_token_id")
        self.specials = SpecialIds(
            pad=pad if isinstance(pad, int) else ends[0],
            unk=ends[0],
            bos=bos if isinstance(bos, int) else ends[0],
            eos=ends[0],
            also_end=tuple(ends[1:]),  # an instruct model's end of turn (Gemma-it's 106, Qwen's <|im_end|>)
        )

    def encode_plain(self, text: str) -> list[int]:
        """Ids of `text` with nothing added (a chat template's text writes its own BOS)."""
        return self.tokenizer.encode(text, add_special_tokens=False).ids


def _token_text(value: object) -> str | None:
    """A special token as tokenizer_config.json gives it: a string, or {"content": ...}."""
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) else None


def chat_template(path: Path, vocabulary: DecoderVocabulary) -> ChatTemplate | None:
    """The chat template of an instruct checkpoint: chat_template.jinja, else tokenizer_config.json's
    chat_template (a string, or named templates of which "default" is used); None without one."""
    try:
        config = json.loads((path / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        config = {}
    config = config if isinstance(config, dict) else {}
    source = config.get("chat_template")
    if (path / CHAT_TEMPLATE_FILE).is_file():
        source = (path / CHAT_TEMPLATE_FILE).read_text(encoding="utf-8")
    if isinstance(source, list):  # [{"name": "default", "template": ...}, {"name": "tool_use", ...}]
        named = {t.get("name"): t.get("template") for t in source if isinstance(t, dict)}
        source = named.get("default")
    if not isinstance(source, str) or not source.strip():
        return None
    names = ("bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token", "mask_token")
    tokens = {name: text for name in names if (text := _token_text(config.get(name))) is not None}
    return ChatTemplate(source, tokens, vocabulary.encode_plain)
