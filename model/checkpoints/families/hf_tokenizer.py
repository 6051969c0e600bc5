"""A checkpoint's tokenizer.json (or the files it is built from), run by the `tokenizers` library:
what the BERT, T5 and GPT-2 vocabularies share."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from tokenizers import Tokenizer

from ...errors import CheckpointError


def open_tokenizer(file: Path, refuse: Callable[[str], CheckpointError]) -> Tokenizer:
    """The tokenizer of `file` with truncation and padding off (the engine cuts to the model's
    length itself, with a warning); `refuse(problem)` makes the error for a missing or broken file."""
    if not file.is_file():
        raise refuse(f"missing {file.name}")
    try:
        tokenizer = Tokenizer.from_file(str(file))
    except Exception as exc:  # the library raises its own exception type for broken files
        raise refuse(f"{file.name} is not readable ({exc})") from None
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


class TokenizersVocabulary:
    """Ids to pieces and text through a `tokenizers.Tokenizer`; subclasses say how text becomes ids
    and which ids are special."""

    canonical_input = False
    tokenizer: Tokenizer

    @property
    def vocab_size(self) -> int:
        """Number of ids, added tokens included."""
        return self.tokenizer.get_vocab_size(with_added_tokens=True)

    def encode_source(self, text: str) -> list[int]:
        """Ids as the reference tokenizer gives them, its own specials included."""
        return self.tokenizer.encode(text).ids

    def pieces(self, ids: Iterable[int]) -> list[str]:
        """The token of each id; `<id N: not in the tokenizer>` for a row of the model the tokenizer lacks
        (Qwen's embedding has a few hundred rows more than its tokenizer has tokens; a GPT-2 padded to
        50,304 rows has 47)."""
        out = []
        for i in ids:
            token = self.tokenizer.id_to_token(int(i))
            out.append(token if token is not None else f"<id {int(i)}: not in the tokenizer>")
        return out

    def decode(self, ids: Iterable[int]) -> str:
        """Text of ids, special tokens and ids the tokenizer lacks left out."""
        size = self.vocab_size
        return self.tokenizer.decode([int(i) for i in ids if 0 <= int(i) < size])
