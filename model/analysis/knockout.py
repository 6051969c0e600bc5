"""Knocking out one head at a time: how much the model's belief in its own output, or its sentence
embedding, depends on each head."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..bundle import Bundle
from ..engine.interventions import DecodeOptions, Head, Interventions
from ..results import TranslationResult, cosine

RETRANSLATED = 24  # past this many heads, only the heads that matter most are translated again


def with_head_off(iv: Interventions, head: Head) -> Interventions:
    """The interventions with one more head knocked out."""
    return replace(iv, ablate=iv.ablate | {head})


def sweep(
    bundle: Bundle, sentence: str, iv: Interventions, options: DecodeOptions, heads: list[Head], chat: bool = False
) -> list[dict]:
    """Knock out each head in turn (on top of `iv`): per head, the teacher-forced log-probability of
    the unablated output under that ablation ("log_prob"), and for the RETRANSLATED heads whose
    knock-out lowers it most, the translation the model makes instead ("translation", None for the
    others); every row also carries the unablated translation and its log-probability. A decoder-only
    model's "translation" is its continuation of the sentence (with `chat`, its answer to the sentence
    as a chat message). `options`: how the output is decoded (beam size, new pieces)."""

    def run(ablated: Interventions) -> TranslationResult:
        if bundle.capabilities.encoder:
            return bundle.translate(sentence, ablated, options, trace=False)
        return bundle.generate(sentence, ablated, options, trace=False, chat=chat)

    base = run(iv)
    log_probs = {
        head: float(sum(bundle.score(sentence, base.output_ids, with_head_off(iv, head), chat))) for head in heads
    }
    # one teacher-forced pass per head is cheap; a whole new translation is not (opus-mt has 144 heads)
    lowest = sorted(log_probs, key=log_probs.__getitem__)[:RETRANSLATED]
    translations = {head: run(with_head_off(iv, head)).translation for head in lowest}
    return [
        {
            "head": head,
            "log_prob": log_probs[head],
            "translation": translations.get(head),
            "base_translation": base.translation,
            "base_log_prob": base.log_prob,
        }
        for head in heads
    ]


def embedding_sweep(bundle: Bundle, sentence: str, iv: Interventions, heads: list[Head]) -> list[dict]:
    """Knock out each head in turn (on top of `iv`): how far the sentence embedding moves (cosine
    similarity to the unablated embedding, and the distance between the two unit vectors)."""
    base = bundle.encode(sentence, iv).embedding
    rows = []
    for head in heads:
        moved = bundle.encode(sentence, with_head_off(iv, head)).embedding
        rows.append({"head": head, "cosine": cosine(base, moved), "distance": float(np.linalg.norm(base - moved))})
    return rows
