"""Typed text -> the canonical source string -> SentencePiece ids and pieces, and back."""

from __future__ import annotations

import io
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import sentencepiece as spm

from i18n import later, later_n

from ..errors import CheckpointError, InputError
from .tokens import BOS_ID, EOS_ID, PAD_ID, PROJECT_SPECIALS, SPECIAL_PIECES, UNK_ID
from .vocabulary import Vocabulary

MAX_CHARS = 2000
_CONTROL_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn"}
_UNREADABLE = {"Cc", "Cs"}  # what a real model's text loses: controls that are not whitespace, lone surrogates
_FINAL_PUNCTUATION = re.compile(r"[\s.!?…。！？]+$")


@dataclass(frozen=True)
class Normalized:
    """The canonical source text the model reads, and what normalizing it changed."""

    text: str
    warnings: tuple[str, ...] = ()


def normalize_source(text: str, canonical: bool = True) -> Normalized:
    """Make typed English canonical: case, spacing and final punctuation never change the output.

    This project's models are trained on exactly this form (lower case, single spaces, no final
    punctuation), so "the red car is very fast" and "The red car is very fast." are one input.
    With canonical=False (real pretrained models, which read text as typed, their tokenizer's own
    normalizer included) the text stays as typed, tabs, newlines and runs of spaces included: only
    characters no tokenizer reads (control characters other than whitespace, lone surrogates) and
    excess length are dealt with. Either way a text with nothing to read is refused.
    """
    if not isinstance(text, str):
        raise InputError(f"A sentence must be text, got {type(text).__name__}")
    warnings = []
    if canonical:
        text = unicodedata.normalize("NFKC", text)
        cleaned = "".join(
            " " if ch in "\t\n\r\v\f" else ch
            for ch in text
            if ch in "\t\n\r\v\f" or unicodedata.category(ch) not in _CONTROL_CATEGORIES
        )
    else:
        cleaned = "".join(ch for ch in text if ch.isspace() or unicodedata.category(ch) not in _UNREADABLE)
    removed = len(text) - len(cleaned)
    if removed:
        warnings.append(
            later_n(
                "Removed {n} invisible or control character.", "Removed {n} invisible or control characters.", removed
            )
        )
    if len(cleaned) > MAX_CHARS:
        warnings.append(
            later("The text was cut to its first {kept} of {total} characters.", kept=MAX_CHARS, total=len(cleaned))
        )
        cleaned = cleaned[:MAX_CHARS]
    if not canonical:  # a real model's text: a sentence to translate or encode, or a prompt to continue
        if not cleaned.strip():
            # i18n: the example stays English: the model reads English
            raise InputError(later("Type some text, for example: The cat sleeps."))
        return Normalized(cleaned, tuple(warnings))
    spaced = " ".join(cleaned.split())
    result = _FINAL_PUNCTUATION.sub("", spaced.lower())
    if not result:
        # i18n: the example stays English: the model reads English
        raise InputError(later("Type an English sentence, for example: The cat sleeps."))
    return Normalized(result, tuple(warnings))


class Tokenizer:
    """A SentencePiece model shared by source and target, with this project's fixed special ids."""

    specials = PROJECT_SPECIALS
    canonical_input = True

    def __init__(self, model_proto: bytes) -> None:
        self.proto = model_proto
        self.sp = spm.SentencePieceProcessor(model_proto=model_proto)
        found = {i: self.sp.id_to_piece(i) for i in SPECIAL_PIECES if i < self.sp.get_piece_size()}
        if found != SPECIAL_PIECES:
            raise ValueError(f"special pieces must be {SPECIAL_PIECES}, found {found}")

    @classmethod
    def train(cls, lines: Iterable[str], vocab_size: int) -> Tokenizer:
        """Train a unigram SentencePiece model with byte fallback (no character is ever unknown)."""
        buffer = io.BytesIO()
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines),
            model_writer=buffer,
            vocab_size=vocab_size,
            model_type="unigram",
            character_coverage=1.0,
            byte_fallback=True,
            normalization_rule_name="identity",
            hard_vocab_limit=False,
            num_threads=2,
            pad_id=PAD_ID,
            unk_id=UNK_ID,
            bos_id=BOS_ID,
            eos_id=EOS_ID,
            pad_piece=SPECIAL_PIECES[PAD_ID],
            unk_piece=SPECIAL_PIECES[UNK_ID],
            bos_piece=SPECIAL_PIECES[BOS_ID],
            eos_piece=SPECIAL_PIECES[EOS_ID],
            minloglevel=2,
        )
        return cls(buffer.getvalue())

    @classmethod
    def load(cls, path: Path) -> Tokenizer:
        """Read a serialized SentencePiece model."""
        return cls(Path(path).read_bytes())

    def save(self, path: Path) -> None:
        """Write the serialized SentencePiece model."""
        Path(path).write_bytes(self.proto)

    @property
    def vocab_size(self) -> int:
        """Number of pieces, specials and byte pieces included."""
        return self.sp.get_piece_size()

    def encode(self, text: str) -> list[int]:
        """Piece ids of `text`, without BOS/EOS."""
        return self.sp.encode(text)

    def encode_source(self, text: str) -> list[int]:
        """Piece ids of `text`, then EOS: what the encoder reads."""
        return self.sp.encode(text) + [EOS_ID]

    def pieces(self, ids: Iterable[int]) -> list[str]:
        """The piece of each id, as SentencePiece writes it (word starts carry '▁')."""
        return [self.sp.id_to_piece(int(i)) for i in ids]

    def decode(self, ids: Iterable[int]) -> str:
        """Detokenized text of `ids`; special ids are dropped."""
        return self.sp.decode([int(i) for i in ids if int(i) not in SPECIAL_PIECES])


def project_tokenizer(vocabulary: Vocabulary) -> Tokenizer:
    """`vocabulary` as this project's own SentencePiece tokenizer, which training and the model card's
    measures read (ids without EOS, a piece's character span); another family's is refused."""
    if not isinstance(vocabulary, Tokenizer):
        raise CheckpointError(
            "Training and the model card's measures read this project's own SentencePiece tokenizer; "
            f"this checkpoint's is a {type(vocabulary).__name__}."
        )
    return vocabulary
