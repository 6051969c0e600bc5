"""T5 and flan-t5 (google-t5/t5-small, google/flan-t5-small and their larger sizes): an
encoder-decoder with no positional encoding at all, a learned bias per head over bucketed
relative distances instead (computed by each stack's first layer, shared by the others); RMS
norm without bias before every sublayer; no bias anywhere; no 1/sqrt(d_k) on the scores; a ReLU
or gated-GELU feed-forward; an output projection tied to the embeddings (its input rescaled by
d_model^-0.5) or of its own (flan-t5); the decoder starts from the pad id. Tokenized from the
checkpoint's tokenizer.json, or from spiece.model when that is all it has."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

import sentencepiece as spm
import torch

from i18n import later

from ...engine.config import ModelConfig
from ...engine.tokens import SpecialIds
from ...errors import CheckpointError
from .hf_tokenizer import TokenizersVocabulary, open_tokenizer

ACTIVATIONS = {
    "relu": "relu",
    "gelu": "gelu",
    "gelu_new": "gelu_tanh",
    "gelu_pytorch_tanh": "gelu_tanh",
    "silu": "silu",
    "swish": "silu",
}
TRANSLATION_TASK = "translation_en_to_fr"
DEFAULT_EXTRA_IDS = 100
_EMBEDDINGS = ("shared.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight")
_ATTENTION = {"q": "w_q", "k": "w_k", "v": "w_v", "o": "w_o"}
_FFN = {"wi": "ffn.w_1", "wi_0": "ffn.w_1", "wi_1": "ffn.w_3", "wo": "ffn.w_2"}
_LAYER = re.compile(
    r"^(encoder|decoder)\.block\.(\d+)\.layer\.(\d)\.(SelfAttention|EncDecAttention|DenseReluDense|"
    r"layer_norm)(?:\.(\w+))?\.weight$"
)
_SENTINEL = re.compile(r"<extra_id_(\d+)>")
_BIAS = re.compile(r"^(encoder|decoder)\.block\.0\.layer\.0\.SelfAttention\.relative_attention_bias\.weight$")


def _refuse(path: Path, problem: str) -> CheckpointError:
    return CheckpointError(
        later("Cannot open the {family} checkpoint at {path}: {problem}.", family="T5", path=str(path), problem=problem)
    )


def feed_forward(hf: dict, path: Path) -> tuple[str, bool]:
    """(our activation, gated) from T5's feed_forward_proj: "relu", "gated-gelu", ..."""
    proj = str(hf.get("feed_forward_proj", "relu"))
    gated = proj.startswith("gated-")
    name = proj.removeprefix("gated-")
    if gated and name == "gelu":
        name = "gelu_new"  # transformers runs "gated-gelu" with the tanh form
    if name not in ACTIVATIONS or proj.count("-") > 1 or ("-" in proj and not gated):
        raise _refuse(
            path, later("feed_forward_proj {value} is not relu, gelu, silu or their gated- forms", value=repr(proj))
        )
    return ACTIVATIONS[name], gated


def model_config(hf: dict, path: Path) -> ModelConfig:
    """Our ModelConfig for a T5 config.json."""
    activation, gated = feed_forward(hf, path)
    # transformers 5 saves a flan-t5 it built itself as tied with scale_decoder_outputs false: untied
    tied = bool(hf.get("tie_word_embeddings", True)) and hf.get("scale_decoder_outputs", True) is not False
    layers = hf.get("num_layers", 6)
    try:
        return ModelConfig(
            vocab_size=hf["vocab_size"],
            d_model=hf.get("d_model", 512),
            n_heads=hf.get("num_heads", 8),
            d_head=hf.get("d_kv", 64),
            d_ff=hf.get("d_ff", 2048),
            n_encoder_layers=layers,
            n_decoder_layers=hf.get("num_decoder_layers") or layers,
            dropout=0.0,
            max_len=hf.get("n_positions", 512),
            norm_first=True,
            activation=activation,
            tie_embeddings=True,
            tie_output=tied,
            rescale_output=tied,
            positional="relative",
            relative_buckets=hf.get("relative_attention_num_buckets", 32),
            relative_max_distance=hf.get("relative_attention_max_distance", 128),
            scale_embeddings=False,
            scale_scores=False,
            norm="rms",
            linear_bias=False,
            gated_ffn=gated,
            layer_norm_eps=float(hf.get("layer_norm_epsilon", 1e-6)),
            pad_id=hf.get("pad_token_id", 0),
        )
    except (KeyError, TypeError, ValueError) as exc:  # a missing key, or a value of the wrong kind
        raise _refuse(
            path, later("config.json does not describe a usable model ({problem})", problem=str(exc))
        ) from None


def _part(stack: str, sublayer: int, block: str, name: str | None) -> str | None:
    """Our name (without the layer prefix and '.weight') of one T5 sublayer weight."""
    cross_at = 1 if stack == "decoder" else None
    ffn_at = 2 if stack == "decoder" else 1
    kind = "self" if sublayer == 0 else ("cross" if sublayer == cross_at else None)
    if block == "layer_norm":
        return {0: "norm_self", cross_at: "norm_cross", ffn_at: "norm_ffn"}.get(sublayer)
    if block in ("SelfAttention", "EncDecAttention") and kind is not None and name in _ATTENTION:
        return f"{kind}_attn.{_ATTENTION[name]}"
    if block == "DenseReluDense" and sublayer == ffn_at:
        return _FFN.get(name or "")
    return None


def rename(tensors: dict[str, torch.Tensor], path: Path) -> dict[str, torch.Tensor]:
    """T5 parameter names -> ours: the shared embedding once, each stack's relative bias once."""
    embedding = next((tensors[name] for name in _EMBEDDINGS if name in tensors), None)
    if embedding is None:
        raise _refuse(path, later("the weights hold no token embedding ({name})", name="shared.weight"))
    ours = {"src_embed.token.weight": embedding}
    for name, tensor in tensors.items():
        if name in _EMBEDDINGS:
            continue
        if name == "lm_head.weight":
            ours["generator.weight"] = tensor  # left over as unexpected when the head is tied
            continue
        if name in ("encoder.final_layer_norm.weight", "decoder.final_layer_norm.weight"):
            ours[name.replace("final_layer_norm", "final_norm")] = tensor
            continue
        bias = _BIAS.match(name)
        if bias:
            ours[f"{bias.group(1)}.relative_bias.weight"] = tensor
            continue
        match = _LAYER.match(name)
        part = _part(match.group(1), int(match.group(3)), match.group(4), match.group(5)) if match else None
        if match is None or part is None:
            ours[name] = tensor  # left under its own name: reported as unexpected
            continue
        ours[f"{match.group(1)}.layers.{match.group(2)}.{part}.weight"] = tensor
    return ours


def tokenizer_files(path: Path) -> list[Path]:
    """The files that define this tokenizer (part of the checkpoint's identity)."""
    return [path / ("tokenizer.json" if (path / "tokenizer.json").is_file() else "spiece.model")]


def task_prefix(hf: dict) -> str:
    """The English-to-French prefix of the config's task_specific_params ('' when it has none), as
    transformers' translation pipeline prepends it."""
    task = (hf.get("task_specific_params") or {}).get(TRANSLATION_TASK)
    prefix = task.get("prefix") if isinstance(task, dict) else None
    return prefix if isinstance(prefix, str) else ""


def _specials(hf: dict, generation: dict, unk: int | None, path: Path) -> SpecialIds:
    pad, eos = hf.get("pad_token_id", 0), hf.get("eos_token_id", 1)
    if unk is None or not all(isinstance(i, int) for i in (pad, eos)):
        raise _refuse(path, later("its tokenizer or config lacks the ids of <pad>, </s> or <unk>"))
    start = generation.get("decoder_start_token_id", hf.get("decoder_start_token_id", pad))
    return SpecialIds(pad=pad, unk=unk, bos=start, eos=eos)


class T5Vocabulary(TokenizersVocabulary):
    """tokenizer.json through `tokenizers`: pieces then </s>, as T5's fast tokenizer gives them."""

    def __init__(self, path: Path, hf: dict, generation: dict) -> None:
        self.tokenizer = open_tokenizer(path / "tokenizer.json", lambda problem: _refuse(path, problem))
        self.specials = _specials(hf, generation, self.tokenizer.token_to_id("<unk>"), path)


def _extra_ids(path: Path) -> int:
    """How many sentinels follow the SentencePiece pieces: tokenizer_config.json's extra_ids (T5's
    default, 100, when it does not say)."""
    try:
        config = json.loads((path / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return DEFAULT_EXTRA_IDS
    extra = config.get("extra_ids", DEFAULT_EXTRA_IDS) if isinstance(config, dict) else DEFAULT_EXTRA_IDS
    return extra if isinstance(extra, int) and extra >= 0 else DEFAULT_EXTRA_IDS


class T5SentencePieceVocabulary:
    """spiece.model through sentencepiece, for a checkpoint without tokenizer.json: its pieces then
    </s>; ids past the SentencePiece model's are the sentinels <extra_id_0>.. counted down from the
    last (T5's layout)."""

    canonical_input = False

    def __init__(self, path: Path, hf: dict, generation: dict) -> None:
        try:
            self.model = spm.SentencePieceProcessor(model_file=str(path / "spiece.model"))
        except Exception as exc:  # sentencepiece raises several types for broken files
            raise _refuse(
                path,
                later(
                    "{name} is not readable ({problem})", name="spiece.model", problem=f"{type(exc).__name__}: {exc}"
                ),
            ) from None
        self.size = self.model.get_piece_size()
        self.extra_ids = _extra_ids(path)
        self.specials = _specials(hf, generation, self.model.unk_id(), path)

    @property
    def vocab_size(self) -> int:
        """SentencePiece's pieces and the sentinels after them."""
        return self.size + self.extra_ids

    def encode_source(self, text: str) -> list[int]:
        """Pieces then </s>; a sentinel typed as <extra_id_N> is its one id, as in T5's tokenizer."""
        ids: list[int] = []
        for index, part in enumerate(_SENTINEL.split(text)):
            if index % 2:
                number = int(part)
                ids += (
                    [self.vocab_size - 1 - number]
                    if number < self.extra_ids
                    else self.model.encode(f"<extra_id_{part}>")
                )
            elif part.strip():
                ids += self.model.encode(part)
        return ids + [self.specials.eos]

    def pieces(self, ids: Iterable[int]) -> list[str]:
        """The piece of each id."""
        return [
            self.model.id_to_piece(int(i)) if 0 <= int(i) < self.size else f"<extra_id_{self.vocab_size - 1 - int(i)}>"
            for i in ids
        ]

    def decode(self, ids: Iterable[int]) -> str:
        """Text of ids, the specials and sentinels left out."""
        specials = {self.specials.pad, self.specials.eos}
        return self.model.decode([int(i) for i in ids if int(i) not in specials and 0 <= int(i) < self.size])


def vocabulary(path: Path, hf: dict, generation: dict) -> T5Vocabulary | T5SentencePieceVocabulary:
    """The tokenizer of a T5 directory: tokenizer.json when it has one, else spiece.model."""
    if (path / "tokenizer.json").is_file():
        return T5Vocabulary(path, hf, generation)
    if (path / "spiece.model").is_file():
        return T5SentencePieceVocabulary(path, hf, generation)
    raise _refuse(path, later("missing tokenizer.json and spiece.model"))
