"""A checkpoint's tokenizer.json (or the files it is built from), run by the `tokenizers` library:
what the BERT, T5 and GPT-2 vocabularies share."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from tokenizers import Tokenizer, decoders

from i18n import later

from ...engine.byte_pieces import BYTE_PIECE, BYTE_STAND_INS, unfinished_bytes
from ...errors import CheckpointError

REPLACEMENT = "\ufffd"  # what a decoder writes for bytes that spell no character


def open_tokenizer(file: Path, refuse: Callable[[str], CheckpointError]) -> Tokenizer:
    """The tokenizer of `file` with truncation and padding off (the engine cuts to the model's
    length itself, with a warning); `refuse(problem)` makes the error for a missing or broken file."""
    if not file.is_file():
        raise refuse(later("missing {files}", files=file.name))
    try:
        tokenizer = Tokenizer.from_file(str(file))
    except Exception as exc:  # the library raises its own exception type for broken files
        raise refuse(later("{name} is not readable ({problem})", name=file.name, problem=str(exc))) from None
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
        """Text of ids, special tokens and ids the tokenizer lacks left out, and so is a last character whose
        bytes stop short (a continuation cut by its length in the middle of an emoji): never a trailing �."""
        size = self.vocab_size
        kept = [int(i) for i in ids if 0 <= int(i) < size]
        text = self.tokenizer.decode(kept)
        return self._finished(text, kept) if text.endswith(REPLACEMENT) else text

    def _finished(self, text: str, ids: list[int]) -> str:
        """`text`, the decoding of `ids`, without the � its decoder wrote for a character cut short at the end.
        Byte-level BPE writes one � for it; byte fallback one for each byte piece of the run that failed."""
        special = {i for i, token in self.tokenizer.get_added_tokens_decoder().items() if token.special}
        tokens = [self.tokenizer.id_to_token(i) or "" for i in ids if i not in special]
        if isinstance(self.tokenizer.decoder, decoders.ByteLevel):
            last = [t for t in tokens[-3:] if all(ch in BYTE_STAND_INS for ch in t)]
            data = bytes(BYTE_STAND_INS[ch] for ch in "".join(last))
            return text[:-1] if unfinished_bytes(data) else text
        run: list[int] = []  # the bytes of the byte pieces at the end, in order
        for token in reversed(tokens):
            match = BYTE_PIECE.fullmatch(token)
            if match is None:
                break
            run.insert(0, int(match.group(1), 16))
        data = bytes(run)
        cut = unfinished_bytes(data)
        if not cut or not text.endswith(REPLACEMENT * len(run)):
            return text
        return text[: -len(run)] + data[:-cut].decode("utf-8", errors="replace")
