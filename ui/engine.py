"""Cached calls into the engine: one model per checkpoint, one result per (checkpoint, sentence, controls)."""

from __future__ import annotations

import os

import streamlit as st
import torch

from model import Bundle, DecodeOptions, Interventions, Trace, TranslationResult, load_bundle

CHECKPOINT_ENV = "ANATOMY_CHECKPOINT"

# Interventions as a plain hashable key: (causal, padding, positional, sorted ablated heads)
IvKey = tuple[bool, bool, bool, tuple[tuple[str, str, int, int], ...]]


def checkpoint_path() -> str:
    """The checkpoint directory from $ANATOMY_CHECKPOINT ('' means the shipped default model)."""
    return os.environ.get(CHECKPOINT_ENV, "").strip()


THREADS_ENV = "ANATOMY_TORCH_THREADS"


@st.cache_resource(show_spinner="Loading the model ...", max_entries=4)
def get_bundle(path: str) -> Bundle:
    """Load a checkpoint once per process (shared by every session; the Bundle is thread-safe).

    Torch gets one intra-op thread (override with $ANATOMY_TORCH_THREADS): this model's matrices
    are small, and measured here a translation took 20 ms on one thread but 0.3-2.6 s on two
    threads while another process kept both cores busy; sessions run in parallel threads anyway.
    """
    torch.set_num_threads(max(1, int(os.environ.get(THREADS_ENV, "1") or 1)))
    return load_bundle(path or None)


def iv_key(iv: Interventions) -> IvKey:
    """A plain, hashable cache key for interventions."""
    return iv.causal_mask, iv.padding_mask, iv.positional_encoding, tuple(sorted(iv.ablate))


def _iv(key: IvKey) -> Interventions:
    causal, padding, positional, ablate = key
    return Interventions(causal_mask=causal, padding_mask=padding, positional_encoding=positional,
                         ablate=frozenset(ablate))


@st.cache_data(max_entries=256, show_spinner=False)
def _translate(_bundle: Bundle, checkpoint_id: str, sentence: str, key: IvKey, beam_size: int,
               trace: bool) -> TranslationResult:
    return _bundle.translate(sentence, _iv(key), DecodeOptions(beam_size=beam_size), trace=trace)


def translate(bundle: Bundle, sentence: str, iv: Interventions, beam_size: int = 1,
              trace: bool = True) -> TranslationResult:
    """Translate through the cache keyed by (checkpoint id, sentence, switches, beam size, trace)."""
    return _translate(bundle, bundle.checkpoint_id, sentence, iv_key(iv), beam_size, trace)


@st.cache_data(max_entries=64, show_spinner=False)
def _translate_batch(_bundle: Bundle, checkpoint_id: str, sentences: tuple[str, ...],
                     key: IvKey) -> list[TranslationResult]:
    return _bundle.translate_batch(list(sentences), _iv(key))


def translate_batch(bundle: Bundle, sentences: list[str], iv: Interventions) -> list[TranslationResult]:
    """Greedy-translate sentences as one padded batch, cached."""
    return _translate_batch(bundle, bundle.checkpoint_id, tuple(sentences), iv_key(iv))


@st.cache_data(max_entries=32, show_spinner=False)
def _knockout(_bundle: Bundle, checkpoint_id: str, sentence: str, key: IvKey, beam_size: int,
              heads: tuple[tuple[str, str, int, int], ...]) -> list[dict]:
    base_iv = _iv(key)
    options = DecodeOptions(beam_size=beam_size)
    base = _bundle.translate(sentence, base_iv, options, trace=False)
    rows = []
    for head in heads:
        iv = Interventions(causal_mask=base_iv.causal_mask, padding_mask=base_iv.padding_mask,
                           positional_encoding=base_iv.positional_encoding,
                           ablate=frozenset(base_iv.ablate | {head}))
        fixed = sum(_bundle.score(sentence, base.output_ids, iv))
        knocked = _bundle.translate(sentence, iv, options, trace=False)
        rows.append({"head": head, "log_prob": fixed, "translation": knocked.translation,
                     "base_translation": base.translation, "base_log_prob": base.log_prob})
    return rows


def knockout_sweep(bundle: Bundle, sentence: str, iv: Interventions, beam_size: int,
                   heads: list[tuple[str, str, int, int]]) -> list[dict]:
    """Knock out each head in turn (on top of `iv`), cached: the teacher-forced log-probability
    of the unablated output under that ablation, and the translation the model makes instead."""
    return _knockout(bundle, bundle.checkpoint_id, sentence, iv_key(iv), beam_size, tuple(heads))


@st.cache_data(max_entries=64, show_spinner=False)
def _teacher_forced(_bundle: Bundle, checkpoint_id: str, sentence: str, output_ids: tuple[int, ...],
                    key: IvKey) -> Trace:
    return _bundle.teacher_forced(sentence, list(output_ids), _iv(key))


def teacher_forced(bundle: Bundle, sentence: str, output_ids: tuple[int, ...], iv: Interventions) -> Trace:
    """One recorded pass over a fixed output with every piece fed at once (as in training), cached."""
    return _teacher_forced(bundle, bundle.checkpoint_id, sentence, tuple(output_ids), iv_key(iv))


@st.cache_data(max_entries=128, show_spinner=False)
def _score(_bundle: Bundle, checkpoint_id: str, sentence: str, output_ids: tuple[int, ...], key: IvKey) -> list[float]:
    return _bundle.score(sentence, list(output_ids), _iv(key))


def score(bundle: Bundle, sentence: str, output_ids: tuple[int, ...], iv: Interventions) -> list[float]:
    """Per-piece log-probabilities of a fixed output under the switches (teacher-forced), cached."""
    return _score(bundle, bundle.checkpoint_id, sentence, tuple(output_ids), iv_key(iv))
