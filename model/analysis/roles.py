"""Head roles: what each attention head mostly does, scored over sentences and tagged.

For one head's pattern A (queries i, keys j; each row sums to 1), averaged over its queries and then
over the sentences:

    previous  A[i, i-1]                        looks at the piece just before (self-attention; i >= 1)
    same      A[i, i]                          looks at itself (self-attention)
    first     A[i, 0]                          sinks on the first piece (self-attention: the queries after
                                               the first that can see it, as sinks.first_share counts them)
    last      A[i, K-1]                        sinks on the last source piece (</s> or [SEP]; keys that are
                                               the source: encoder self-attention and cross-attention)
    broad     H(A[i]) / log(visible keys)      spreads its weight (normalised entropy; rows that see
                                               one key only are left out)
    alignment share of French words whose      follows the word alignment (cross-attention, when the
              most-attended English word is    sentences come with their gold alignment: each is then
              a gold-aligned one               teacher-forced on its reference; see analysis/alignment.py)

A decoder-only model (GPT-2) has the decoder's self-attention alone: its "last" (no source) and
"alignment" (no cross-attention) do not apply, and its queries are the prompt's positions and then
the new pieces'.

A score that does not apply to a block is NaN. A head is tagged with the highest of previous, same,
first, last and alignment when that is at least TAGGED (a head whose highest is "first" is tagged
"sink": an attention sink, model/analysis/sinks.py); else "broad" when broad is at least BROAD; else none.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd

from i18n import later

from ..bundle import Bundle
from ..engine import stages
from ..engine.interventions import Interventions
from ..errors import InputError
from ..results import Trace
from .alignment import AlignmentCase, agreement_hits
from .sinks import first_share

SCORES = ("previous", "same", "first", "last", "broad", "alignment")
POINTED = ("previous", "same", "first", "last", "alignment")  # roles that put weight somewhere
TAGGED = 0.5
BROAD = 0.9


def role_scores(
    pattern: np.ndarray, self_attention: bool, causal: bool, keys_are_source: bool, window: int = 0
) -> dict[str, float]:
    """The scores of one head's pattern (queries, keys), as this module's docstring defines them; `window`: the
    layer's sliding window (0: none), which bounds the keys a causal query sees."""
    scores = layer_scores(pattern[None], self_attention, causal, keys_are_source, window)
    return {name: float(values[0]) for name, values in scores.items()}


def layer_scores(
    patterns: np.ndarray, self_attention: bool, causal: bool, keys_are_source: bool, window: int = 0
) -> dict[str, np.ndarray]:
    """`role_scores` of each head of one layer's patterns (heads, queries, keys) at once: name -> (heads,)."""
    heads, queries, keys = patterns.shape
    rows = np.arange(queries)
    visible = np.minimum(rows + 1, keys) if causal else np.full(queries, keys)
    if causal and window:
        visible = np.minimum(visible, window)
    logs = np.zeros_like(patterns)
    np.log(patterns, out=logs, where=patterns > 0)  # 0 log 0 = 0
    entropy = -(patterns * logs).sum(axis=-1)
    spread = visible > 1
    absent = np.full(heads, np.nan)
    return {
        "previous": _row_means(patterns[:, rows[1:], rows[1:] - 1]) if self_attention and queries > 1 else absent,
        "same": _row_means(patterns[:, rows, rows]) if self_attention else absent,
        "first": first_share(patterns, window if causal else 0) if self_attention else _row_means(patterns[:, :, 0]),
        "last": _row_means(patterns[:, :, -1]) if keys_are_source else absent,
        "broad": _row_means(entropy[:, spread] / np.log(visible[spread])) if spread.any() else absent,
        "alignment": absent,
    }


def _row_means(values: np.ndarray) -> np.ndarray:
    """Each row's mean, summed as numpy sums a row alone (pairwise, which it does along contiguous rows only): a
    head's scores are the same scored with its layer or by itself."""
    return np.ascontiguousarray(values).mean(axis=-1)


def role(scores: dict[str, float]) -> str | None:
    """The tag of a head from its scores (see the module's docstring)."""
    candidates = {name: scores[name] for name in POINTED if not np.isnan(scores.get(name, np.nan))}
    best = max(candidates, key=candidates.__getitem__, default=None)
    if best is not None and candidates[best] >= TAGGED:
        return "sink" if best == "first" else best
    return "broad" if not np.isnan(scores["broad"]) and scores["broad"] >= BROAD else None


def block_roles(
    patterns: list[np.ndarray], stack: str, kind: str, causal_mask: bool = True, windows: tuple[int, ...] = ()
) -> dict[tuple[int, int], str]:
    """(layer, head) -> role of every tagged head of one attention block, from that block's patterns
    on one sentence (a list over layers of (heads, queries, keys)), scored as `head_roles` scores them
    (`windows`: the decoder's sliding window per layer, Gemma 3's; empty for none)."""
    heads = _heads_scores(patterns, stack, kind, causal_mask, windows)
    scored = {(layer, head): role(scores) for layer, head, scores in heads}
    return {cell: tag for cell, tag in scored.items() if tag is not None}


def card_roles(card: dict, stack: str, kind: str) -> dict[tuple[int, int], str]:
    """(layer, head) -> role of one block's heads as the checkpoint's card tags them over its test
    sentences (`model.training.explanations`; with the gold alignment, so it can say "alignment"); {}
    when the card has none."""
    tagged = card.get("explanations", {}).get("head_roles", {}).get("tagged", [])
    return {(row["layer"], row["head"]): row["role"] for row in tagged if (row["stack"], row["kind"]) == (stack, kind)}


def _causal(stack: str, kind: str, causal_mask: bool) -> bool:
    return stack == "decoder" and kind == "self" and causal_mask


def _keys_are_source(stack: str, kind: str) -> bool:
    return stack == "encoder" or kind == "cross"


def _mean(values: list[float]) -> float:
    """The mean of the values that are not NaN (a sentence a score does not apply to); NaN if none."""
    kept = [v for v in values if not np.isnan(v)]
    return float(np.mean(kept)) if kept else np.nan


def _trace(bundle: Bundle, sentence: str, iv: Interventions, gold: AlignmentCase | None) -> Trace:
    if bundle.capabilities.translates:
        output = gold.fr_ids if gold is not None else bundle.translate(sentence, iv, trace=False).output_ids
        return bundle.teacher_forced(sentence, output, iv)
    if bundle.capabilities.decoder:  # decoder-only: the prompt and its greedy continuation
        return bundle.teacher_forced(sentence, bundle.generate(sentence, iv, trace=False).output_ids, iv)
    return bundle.encode(sentence, iv).trace


def head_roles(
    bundle: Bundle,
    sentences: list[str],
    interventions: Interventions = Interventions(),
    gold: list[AlignmentCase] | None = None,
) -> pd.DataFrame:
    """One row per head (stack, kind, layer, head): its scores averaged over the sentences (each
    teacher-forced on the model's own greedy output (a decoder-only model's: the prompt and its
    greedy continuation), or on its reference when `gold` gives the sentences' alignments, which
    adds the cross-attention heads' alignment score) and its role (None when untagged)."""
    if not sentences:
        raise InputError(later("Give at least one sentence to score the heads on."))
    if gold is not None and len(gold) != len(sentences):
        raise InputError(later("Give one gold alignment per sentence."))
    if gold is not None and not bundle.capabilities.cross_attention:
        raise InputError(
            later(
                "{name} has no cross-attention: a gold word alignment scores the heads that read a source sentence, "
                "and it has none.",
                name=bundle.name,
            )
        )
    totals: dict[tuple[str, str, int, int], list[dict[str, float]]] = {}
    aligned: dict[tuple[str, str, int, int], list[float]] = {}
    words = 0
    for index, sentence in enumerate(sentences):
        case = gold[index] if gold is not None else None
        trace = _trace(bundle, sentence, interventions, case)
        for key, scores in _scores(trace, interventions.causal_mask, bundle.config.windows).items():
            totals.setdefault(key, []).append(scores)
        if case is not None:
            for layer in range(trace.n_layers("decoder")):
                for head, hits in enumerate(agreement_hits(case, trace.pattern("decoder", "cross", layer))):
                    aligned.setdefault(("decoder", "cross", layer, head), []).append(float(hits))
            words += len(case.words)
    return _table(totals, aligned, words)


def trace_roles(trace: Trace, causal_mask: bool = True, windows: tuple[int, ...] = ()) -> pd.DataFrame:
    """`head_roles`' table for one trace already recorded (a page's own translation or encoding):
    no model runs. With a decoding trace and the causal mask on, it is the table of `head_roles` on
    that sentence (to float rounding); with the mask off, the decoder rows are what each step saw.
    `windows`: the decoder's sliding window per layer (the model's config.windows)."""
    return _table({key: [scores] for key, scores in _scores(trace, causal_mask, windows).items()}, {}, 0)


def _scores(
    trace: Trace, causal_mask: bool, windows: tuple[int, ...] = ()
) -> dict[tuple[str, str, int, int], dict[str, float]]:
    """(stack, kind, layer, head) -> the role scores of every head in one trace."""
    return {
        (stack, kind, layer, head): scores
        for stack, kind in stages.BLOCKS
        if stages.attention(stack, kind, 0, "pattern") in trace.tensors
        for layer, head, scores in _heads_scores(
            [trace.pattern(stack, kind, layer) for layer in range(trace.n_layers(stack))],
            stack,
            kind,
            causal_mask,
            windows,
        )
    }


def _heads_scores(
    patterns: list[np.ndarray], stack: str, kind: str, causal_mask: bool, windows: tuple[int, ...]
) -> Iterator[tuple[int, int, dict[str, float]]]:
    """(layer, head, role scores) of every head of one attention block (its patterns: a list over layers of
    (heads, queries, keys)), each layer's heads scored at once."""
    causal, from_source = _causal(stack, kind, causal_mask), _keys_are_source(stack, kind)
    for layer, layer_patterns in enumerate(patterns):
        window = windows[layer] if windows and (stack, kind) == ("decoder", "self") else 0
        scores = layer_scores(np.asarray(layer_patterns), kind == "self", causal, from_source, window)
        for head in range(len(layer_patterns)):
            yield layer, head, {name: float(values[head]) for name, values in scores.items()}


def _table(
    totals: dict[tuple[str, str, int, int], list[dict[str, float]]],
    aligned: dict[tuple[str, str, int, int], list[float]],
    words: int,
) -> pd.DataFrame:
    rows = []
    for key, per_sentence in totals.items():
        scores = {name: _mean([s[name] for s in per_sentence]) for name in SCORES}
        if key in aligned and words:
            scores["alignment"] = sum(aligned[key]) / words
        rows.append({"stack": key[0], "kind": key[1], "layer": key[2], "head": key[3], **scores, "role": role(scores)})
    return pd.DataFrame(rows, columns=["stack", "kind", "layer", "head", *SCORES, "role"])
