"""What the engine asks of a checkpoint's tokenizer, whichever family it comes from."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from .tokens import SpecialIds


class Vocabulary(Protocol):
    """Text to ids and back, with the family's own special ids and conventions."""

    specials: SpecialIds
    canonical_input: bool  # True: lower-case and drop final punctuation first (this project's models)

    @property
    def vocab_size(self) -> int:
        """Number of ids."""

    def encode_source(self, text: str) -> list[int]:
        """Source ids exactly as the family's reference tokenizer gives them, specials included
        (this project and Marian: pieces then EOS; BERT: [CLS] pieces [SEP])."""

    def pieces(self, ids: Iterable[int]) -> list[str]:
        """The piece of each id."""

    def decode(self, ids: Iterable[int]) -> str:
        """Detokenized target text of `ids`, special ids left out; a character whose last bytes never came (a
        continuation stopped in the middle of an emoji) left out too, never shown as �."""
