"""A sentence's gold word alignment, ready to score any (output rows x source pieces) matrix against:
attention patterns, attributions. The corpus generator knows the alignment of every sentence it
writes (`model.training.evaluation.alignment_cases` builds these from its test split)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class AlignmentCase:
    """One test sentence ready to score against the generator's gold alignment."""

    src_ids: list[int]  # the source's pieces, EOS included
    fr_ids: list[int]  # the French reference's pieces: the output fed under teacher forcing
    to_word: np.ndarray  # (source pieces, English words): 1 where a piece belongs to a word
    # per scored French word: the decoder row predicting its first piece, and the English words the gold alignment
    # links it to
    words: list[tuple[int, set[int]]]


def agreement_hits(case: AlignmentCase, scores: np.ndarray) -> np.ndarray:
    """How many of a case's French words have their highest-scoring English word among the gold ones:
    `scores` (..., decoder rows, source pieces) is summed over each word's pieces; leading axes kept."""
    hits = np.zeros(scores.shape[:-2])
    for row, targets in case.words:
        per_word = scores[..., row, :] @ case.to_word  # (..., words)
        hits += np.isin(per_word.argmax(-1), list(targets))
    return hits
