"""Cached experiments of the Masks lab, Design choices and Attention pages: head knock-out sweeps, the
embedding knock-out, the empty source, decoding without the KV cache."""

from __future__ import annotations

from model import (
    Bundle,
    DecodeOptions,
    Interventions,
    Trace,
)
from model.analysis import experiments, knockout
from model.analysis.cache import WithoutCache, without_cache
from model.engine.interventions import Head
from ui.session.cached import IvKey, cached, interventions_of, iv_key


@cached
def _knockout(
    _bundle: Bundle,
    checkpoint_id: str,
    sentence: str,
    key: IvKey,
    options: DecodeOptions,
    heads: tuple[Head, ...],
    chat: bool,
) -> list[dict]:
    return knockout.sweep(_bundle, sentence, interventions_of(key), options, list(heads), chat)


def knockout_sweep(
    bundle: Bundle, sentence: str, iv: Interventions, options: DecodeOptions, heads: list[Head], chat: bool = False
) -> list[dict]:
    """`model.analysis.knockout.sweep` (each head knocked out in turn: the log-probability of the
    output, and for the heads that matter most the translation instead), cached."""
    rows = _knockout(bundle, bundle.checkpoint_id, sentence, iv_key(iv), options, tuple(heads), chat)
    return [dict(row) for row in rows]  # the caller's own rows: the cached ones are shared


@cached
def _embedding_knockout(
    _bundle: Bundle, checkpoint_id: str, sentence: str, key: IvKey, heads: tuple[Head, ...]
) -> list[dict]:
    return knockout.embedding_sweep(_bundle, sentence, interventions_of(key), list(heads))


def embedding_knockout(bundle: Bundle, sentence: str, iv: Interventions, heads: list[Head]) -> list[dict]:
    """`model.analysis.knockout.embedding_sweep` (how far the sentence embedding moves with each
    head knocked out), cached."""
    rows = _embedding_knockout(bundle, bundle.checkpoint_id, sentence, iv_key(iv), tuple(heads))
    return [dict(row) for row in rows]


@cached
def _empty_source(_bundle: Bundle, checkpoint_id: str, sentence: str, key: IvKey, output_ids: tuple[int, ...]) -> Trace:
    return experiments.empty_source(_bundle, sentence, interventions_of(key), output_ids)[1]


def empty_source(bundle: Bundle, sentence: str, iv: Interventions, output_ids: tuple[int, ...] = ()) -> Trace:
    """The all-padding row batched with the sentence (every key masked), its decoder fed
    `output_ids` (the page's translation) or a translation of its own; cached."""
    return _empty_source(bundle, bundle.checkpoint_id, sentence, iv_key(iv), tuple(output_ids))


@cached
def _without_cache(
    _bundle: Bundle, checkpoint_id: str, prompt: tuple[int, ...], steps: int, key: IvKey
) -> WithoutCache:
    return without_cache(_bundle, list(prompt), steps, interventions_of(key))


def decoded_without_cache(bundle: Bundle, prompt: tuple[int, ...], steps: int, iv: Interventions) -> WithoutCache:
    """A continuation decoded with the KV cache and re-reading every prefix, both timed; cached."""
    return _without_cache(bundle, bundle.checkpoint_id, tuple(prompt), steps, iv_key(iv))


def without_cache_held(bundle: Bundle, prompt: tuple[int, ...], steps: int, iv: Interventions) -> bool:
    """True when that measurement is in the cache."""
    return _without_cache.holds(bundle.checkpoint_id, tuple(prompt), steps, iv_key(iv))
