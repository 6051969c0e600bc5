"""Marian MT (Helsinki-NLP opus-mt-*): the paper's encoder-decoder, Post-LN, with SiLU, a
sinusoidal table in halves, a fixed bias on the logits and separate source/target SentencePiece
models sharing one vocab.json."""

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

ACTIVATIONS = {"swish": "silu", "silu": "silu", "relu": "relu", "gelu": "gelu", "gelu_new": "gelu_tanh"}
FILES = ("source.spm", "target.spm", "vocab.json")
_LAYER_PARTS = {
    "self_attn.q_proj": "self_attn.w_q",
    "self_attn.k_proj": "self_attn.w_k",
    "self_attn.v_proj": "self_attn.w_v",
    "self_attn.out_proj": "self_attn.w_o",
    "encoder_attn.q_proj": "cross_attn.w_q",
    "encoder_attn.k_proj": "cross_attn.w_k",
    "encoder_attn.v_proj": "cross_attn.w_v",
    "encoder_attn.out_proj": "cross_attn.w_o",
    "self_attn_layer_norm": "norm_self",
    "encoder_attn_layer_norm": "norm_cross",
    "fc1": "ffn.w_1",
    "fc2": "ffn.w_2",
    "final_layer_norm": "norm_ffn",
}
_LAYER = re.compile(r"^(encoder|decoder)\.layers\.(\d+)\.(.+)\.(weight|bias)$")
_EMBEDDINGS = ("shared.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight", "lm_head.weight")


def _refuse(path: Path, problem: str) -> CheckpointError:
    return CheckpointError(
        later(
            "Cannot open the {family} checkpoint at {path}: {problem}.",
            family="Marian",
            path=str(path),
            problem=problem,
        )
    )


def model_config(hf: dict, path: Path) -> ModelConfig:
    """Our ModelConfig for a Marian config.json; settings the engine cannot mirror are refused."""
    heads = hf.get("encoder_attention_heads", 8)
    ffn = hf.get("encoder_ffn_dim", 2048)
    if hf.get("decoder_attention_heads", heads) != heads or hf.get("decoder_ffn_dim", ffn) != ffn:
        raise _refuse(path, later("its encoder and decoder differ in heads or feed-forward width"))
    vocab = hf.get("vocab_size")
    if hf.get("decoder_vocab_size") not in (None, vocab) or not hf.get("share_encoder_decoder_embeddings", True):
        raise _refuse(path, later("its source and target vocabularies are separate (only shared ones are supported)"))
    if not hf.get("tie_word_embeddings", True):
        raise _refuse(path, later("its output projection is not tied to the embeddings"))
    activation = ACTIVATIONS.get(hf.get("activation_function", "swish"))
    if activation is None:
        raise _refuse(
            path,
            later(
                "activation {value} is not one of {names}",
                value=repr(hf.get("activation_function")),
                names=str(sorted(ACTIVATIONS)),
            ),
        )
    try:
        return ModelConfig(
            vocab_size=hf["vocab_size"],
            d_model=hf.get("d_model", 512),
            n_heads=heads,
            d_ff=ffn,
            n_encoder_layers=hf.get("encoder_layers", 6),
            n_decoder_layers=hf.get("decoder_layers", 6),
            dropout=0.0,
            max_len=hf.get("max_position_embeddings", 512),
            norm_first=False,
            activation=activation,
            tie_embeddings=True,
            positional="sinusoidal_halves",
            scale_embeddings=bool(hf.get("scale_embedding", False)),
            logits_bias=True,
            pad_id=hf.get("pad_token_id", vocab - 1 if isinstance(vocab, int) else 0),
        )
    except (KeyError, TypeError, ValueError) as exc:  # a missing key, or a value of the wrong kind
        raise _refuse(
            path, later("config.json does not describe a usable model ({problem})", problem=str(exc))
        ) from None


def rename(tensors: dict[str, torch.Tensor], path: Path) -> dict[str, torch.Tensor]:
    """Marian parameter names -> ours (the shared embedding once; the sinusoid is computed, not read)."""
    tensors = {name.removeprefix("model."): t for name, t in tensors.items()}
    embedding = next((tensors[name] for name in _EMBEDDINGS if name in tensors), None)
    if embedding is None:
        raise _refuse(path, later("the weights hold no token embedding ({name})", name="shared.weight"))
    ours = {"src_embed.token.weight": embedding}
    for name, tensor in tensors.items():
        if name in _EMBEDDINGS or name.endswith("embed_positions.weight"):
            continue
        if name == "final_logits_bias":
            ours["logits_bias"] = tensor.reshape(-1)
            continue
        match = _LAYER.match(name)
        part = _LAYER_PARTS.get(match.group(3)) if match else None
        if match is None or part is None:
            ours[name] = tensor  # left under its own name: reported as unexpected
            continue
        stack, layer, _, kind = match.groups()
        ours[f"{stack}.layers.{layer}.{part}.{kind}"] = tensor
    ours.setdefault("logits_bias", torch.zeros(embedding.shape[0]))  # older exports leave out a zero bias
    return ours


def tokenizer_files(path: Path) -> list[Path]:
    """The files that define this tokenizer (part of the checkpoint's identity)."""
    return [path / name for name in FILES]


class MarianVocabulary:
    """MarianTokenizer's behaviour from its own files: the source SentencePiece model splits the
    text into pieces, vocab.json gives their ids, EOS closes the source; output ids read back
    through the same vocab.json and the target SentencePiece model."""

    canonical_input = False

    def __init__(self, path: Path, hf: dict, generation: dict) -> None:
        missing = [name for name in FILES if not (path / name).is_file()]
        if missing:
            raise _refuse(path, later("missing tokenizer files {files}", files=", ".join(missing)))
        if (path / "target_vocab.json").is_file():
            raise _refuse(path, later("it has a separate target_vocab.json (only a shared vocab.json is supported)"))
        try:
            ids = json.loads((path / "vocab.json").read_text(encoding="utf-8"))
            self.source = spm.SentencePieceProcessor(model_file=str(path / "source.spm"))
            self.target = spm.SentencePieceProcessor(model_file=str(path / "target.spm"))
        except Exception as exc:  # JSON and SentencePiece raise several types for broken files
            raise _refuse(
                path, later("its tokenizer files are not readable ({problem})", problem=f"{type(exc).__name__}: {exc}")
            ) from None
        if not isinstance(ids, dict) or not all(isinstance(i, int) for i in ids.values()):
            raise _refuse(path, later("vocab.json must map pieces to integer ids"))
        self.ids: dict[str, int] = ids
        self.by_id = {i: piece for piece, i in ids.items()}
        for piece in ("</s>", "<unk>"):
            if piece not in ids:
                raise _refuse(path, later("vocab.json has no {token}", token=piece))
        pad = hf.get("pad_token_id", ids.get("<pad>"))
        start = generation.get("decoder_start_token_id", hf.get("decoder_start_token_id", pad))
        if not isinstance(pad, int) or not isinstance(start, int):
            raise _refuse(
                path, later("it names no pad id (pad_token_id, or <pad> in vocab.json) to start decoding from")
            )
        banned = tuple(
            sorted(
                {
                    row[0]
                    for row in generation.get("bad_words_ids", hf.get("bad_words_ids")) or []
                    if isinstance(row, list) and len(row) == 1
                }
            )
        )
        forced = generation.get("forced_eos_token_id", hf.get("forced_eos_token_id"))
        self.specials = SpecialIds(
            pad=pad,
            unk=ids["<unk>"],
            bos=start,
            eos=ids["</s>"],
            banned=banned,
            force_eos_at_end=forced is not None and forced == ids["</s>"],
        )
        self.special_ids = frozenset({self.specials.pad, self.specials.unk, self.specials.eos})

    @property
    def vocab_size(self) -> int:
        """Number of ids in vocab.json."""
        return max(self.by_id) + 1

    def encode_source(self, text: str) -> list[int]:
        """Ids as MarianTokenizer gives them: a leading >>lang<< code kept whole, pieces, then EOS."""
        code = []
        if text.startswith(">>") and (end := text.find("<<")) != -1:
            code, text = [text[: end + 2]], text[end + 2 :]
        pieces = code + self.source.encode(text, out_type=str)
        return [self.ids.get(piece, self.specials.unk) for piece in pieces] + [self.specials.eos]

    def pieces(self, ids: Iterable[int]) -> list[str]:
        """The vocab.json piece of each id."""
        return [self.by_id.get(int(i), "<unk>") for i in ids]

    def decode(self, ids: Iterable[int]) -> str:
        """Target text of output ids, special ids left out."""
        pieces = [self.by_id.get(int(i), "") for i in ids if int(i) not in self.special_ids]
        return self.target.decode_pieces(pieces).replace("▁", " ").strip()


def vocabulary(path: Path, hf: dict, generation: dict) -> MarianVocabulary:
    """The tokenizer of a Marian directory."""
    return MarianVocabulary(path, hf, generation)
