"""Typed text -> what the model reads: the canonical text, its source ids cut to the model's length,
and the warnings a person should see (a cut, pieces the vocabulary lacks, words never trained on)."""

from __future__ import annotations

import unicodedata

from .engine.config import ModelConfig
from .engine.tokenizer import normalize_source
from .engine.vocabulary import Vocabulary


def read_source(tokenizer: Vocabulary, config: ModelConfig, sentence: str) -> tuple[str, list[int], list[str]]:
    """The text the model reads, its source ids (the family's specials included, cut to the
    model's length) and warnings."""
    normalized = normalize_source(sentence, canonical=tokenizer.canonical_input)
    warnings = list(normalized.warnings)
    ids = tokenizer.encode_source(normalized.text)
    limit = config.max_len
    if len(ids) > limit:  # keep the closing special (EOS or [SEP])
        warnings.append(
            f"The sentence was cut to its first {limit - 1} of {len(ids) - 1} pieces "
            f"(the model reads at most {limit} positions)."
        )
        ids = ids[: limit - 1] + ids[-1:]
    unk = tokenizer.specials.unk
    if unk in ids:
        count = ids.count(unk)
        warnings.append(
            f"The model's vocabulary has no piece for {count} part{'s' * (count > 1)} of the text: "
            f"it reads {'them' if count > 1 else 'it'} as {tokenizer.pieces([unk])[0]}."
        )
    return normalized.text, ids, warnings


def unknown_words(known_words: frozenset[str], source: str, warnings: list[str]) -> list[str]:
    """The words of `source` the model never saw in training (none when it does not say which it
    saw); a warning naming them is added to `warnings`."""
    words = _words(source)  # "cat," is the known word "cat"; "don't" and "🐱" are unknown words
    unknown = [w for w in dict.fromkeys(words) if known_words and w not in known_words]
    if unknown:
        warnings.append("Never seen in training: " + ", ".join(unknown) + ". The model can only guess at these words.")
    return unknown


def _words(text: str) -> list[str]:
    """The space-separated words of `text` with punctuation stripped from their ends."""
    words = []
    for token in text.split():
        start, end = 0, len(token)
        while start < end and unicodedata.category(token[start]).startswith("P"):
            start += 1
        while end > start and unicodedata.category(token[end - 1]).startswith("P"):
            end -= 1
        if start < end:
            words.append(token[start:end])
    return words
