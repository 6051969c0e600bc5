"""Sentences of the fragment to offer when a person types one the model cannot read: those that
share the most words with what was typed, short enough to read at a glance."""

from __future__ import annotations

from functools import lru_cache

from .generator import generate
from .grammar import tokenize_en, translate

POOL, POOL_SEED = 4000, 20261201  # a fixed pool: the same text always gets the same offers
MOST_WORDS = 8  # an offer is read at a glance
GOOD_LENGTH = 6  # words: long enough to show the model at work


def reads(text: str) -> bool:
    """True when the corpus grammar reads `text` (the model's whole language)."""
    try:
        translate(text)
    except ValueError:
        return False
    return True


def _words(text: str) -> frozenset[str]:
    return frozenset(token.lower() for token, _, _ in tokenize_en(text) if token not in (".", "?"))


@lru_cache(maxsize=1)
def _pool() -> tuple[tuple[str, frozenset[str]], ...]:
    """Short sentences of the fragment, each with its lower-cased words."""
    sentences = dict.fromkeys(e.en for e in generate(POOL, POOL_SEED))  # in order, each once
    return tuple((s, _words(s)) for s in sentences if len(s.split()) <= MOST_WORDS)


def similar_sentences(text: str, known_words: frozenset[str] = frozenset(), n: int = 3) -> list[str]:
    """Up to `n` sentences of the fragment sharing the most words with `text` (those nearest GOOD_LENGTH
    words first among equals, no two starting with the same word), made only of `known_words` when
    those are given."""
    typed = frozenset(word.strip(".,;:!?\"'()").lower() for word in text.split())
    offers = [
        (-len(words & typed), abs(len(words) - GOOD_LENGTH), sentence)
        for sentence, words in _pool()
        if not known_words or words <= known_words
    ]
    chosen: list[str] = []
    for _, _, sentence in sorted(offers):
        if len(chosen) == n:
            break
        if all(sentence.split()[0] != other.split()[0] for other in chosen):  # offers that differ at a glance
            chosen.append(sentence)
    return chosen
