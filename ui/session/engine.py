"""Cached calls into the engine: one model per checkpoint, one result per (checkpoint, sentence, controls).

`chat` (an instruct checkpoint's text read as a user's chat message, wrapped by its chat template) is part
of every key of a result that reads the text: a chat message's result and the plain prompt's never mix.

Models and results live in the byte-bounded caches of ui/session/cache.py (budgets there), shared by every
session: a hit is the stored object itself, with read-only arrays; pages only read results.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import streamlit as st
import torch
from streamlit.runtime.scriptrunner import get_script_run_ctx

from i18n import _, later
from model import (
    Bundle,
    DecodeOptions,
    EncodeResult,
    InputError,
    Interventions,
    Trace,
    TranslationResult,
    load_bundle,
)
from model.analysis import experiments
from model.checkpoints.catalog import DEFAULT
from model.results import GenerationResult, Listener
from ui.session.cache import MODELS
from ui.session.cached import IvKey, cached, interventions_of, iv_key
from views.models import checkpoint_path, menu_models

THREADS_ENV = "ANATOMY_TORCH_THREADS"


def model_path(name: str) -> str:
    """The directory of a model named in the picker ('' for the shipped default; an unknown name: the default)."""
    return checkpoint_path() if name == DEFAULT else menu_models().get(name, checkpoint_path())


def _spinner(message: str) -> Callable[[], AbstractContextManager] | None:
    """A spinner while a model loads, in a page's run only (the warm-up thread has no page); `message` is said
    in the page's language."""
    return (lambda: st.spinner(message)) if get_script_run_ctx(suppress_warning=True) is not None else None


def get_bundle(path: str) -> Bundle:
    """Load a checkpoint once per process (shared by every session; the Bundle is thread-safe).

    Torch gets one intra-op thread (override with $ANATOMY_TORCH_THREADS): this model's matrices
    are small, and measured here a translation took 20 ms on one thread but 0.3-2.6 s on two
    threads while another process kept both cores busy; sessions run in parallel threads anyway.
    """

    bar = _LoadingBar() if get_script_run_ctx(suppress_warning=True) is not None else None

    def load() -> Bundle:
        torch.set_num_threads(max(1, int(os.environ.get(THREADS_ENV, "1") or 1)))
        return load_bundle(path or None, progress=bar.update if bar else None)

    try:
        return MODELS.get(("bundle", path), load, _spinner(_("Loading the model ...")))
    finally:
        if bar is not None:
            bar.clear()


class _LoadingBar:
    """A progress bar for a GGUF file's first open (its dequantizing takes seconds), drawn on the first report
    past the start and removed when the model is loaded; a reopen reports only its start, so it draws nothing."""

    def __init__(self) -> None:
        self.slot: Any = None

    def update(self, share: float, text: str) -> None:
        """Show how far the first open is."""
        if share <= 0.0 and self.slot is None:
            return
        if self.slot is None:
            self.slot = st.empty()
        self.slot.progress(min(max(share, 0.0), 1.0), text=_("First open of this model file: {text}", text=text))

    def clear(self) -> None:
        """Remove the bar."""
        if self.slot is not None:
            self.slot.empty()


def get_snapshot(path: str, step: int) -> Bundle:
    """A checkpoint with the weights it had at a training step, loaded once per process and shared."""
    return MODELS.get(
        ("snapshot", path, step),
        lambda: load_bundle(path, snapshot=step),
        _spinner(_("Loading a training snapshot ...")),
    )


@cached
def _translate(
    _bundle: Bundle,
    checkpoint_id: str,
    sentence: str,
    key: IvKey,
    options: DecodeOptions,
    trace: bool,
    listener: Listener | None = None,
) -> TranslationResult:
    return _bundle.translate(sentence, interventions_of(key), options, trace=trace, listener=listener)


def _translates(bundle: Bundle, chat: bool) -> None:
    """Refuse a chat message for a model that translates (only a decoder-only instruct model reads one)."""
    if chat:
        raise InputError(later("{model} translates a sentence: it reads no chat message.", model=bundle.name))


def translate(
    bundle: Bundle,
    sentence: str,
    iv: Interventions,
    options: DecodeOptions = DecodeOptions(),
    trace: bool = True,
    chat: bool = False,
    listener: Listener | None = None,
) -> TranslationResult:
    """Translate through the cache keyed by (checkpoint id, sentence, switches, decoding options, trace); a
    decoder-only model continues the sentence instead (`generate`, a GenerationResult; with `chat`, it
    answers the sentence as a chat message). `listener` (not part of the key) hears it while it is written,
    when it is computed here."""
    if bundle.capabilities.decoder_only:
        return generate(bundle, sentence, iv, options, trace, chat=chat, listener=listener)
    _translates(bundle, chat)
    return _translate(bundle, bundle.checkpoint_id, sentence, iv_key(iv), options, trace, listener=listener)


@cached
def _generate(
    _bundle: Bundle,
    checkpoint_id: str,
    text: str,
    key: IvKey,
    options: DecodeOptions,
    trace: bool,
    chat: bool,
    listener: Listener | None = None,
) -> GenerationResult:
    return _bundle.generate(text, interventions_of(key), options, trace=trace, chat=chat, listener=listener)


def generate(
    bundle: Bundle,
    text: str,
    iv: Interventions,
    options: DecodeOptions = DecodeOptions(),
    trace: bool = True,
    chat: bool = False,
    listener: Listener | None = None,
) -> GenerationResult:
    """A decoder-only model's continuation of `text` (`Bundle.generate`, as many new pieces as `options` allows;
    with `chat`, its answer to `text` as a user's chat message, the result's prompt the wrapped text), cached
    by (checkpoint id, text, switches, decoding options, trace, chat); `listener` (not part of the key) hears it
    while it is written, when it is computed here."""
    return _generate(bundle, bundle.checkpoint_id, text, iv_key(iv), options, trace, chat, listener=listener)


def in_cache(
    bundle: Bundle,
    text: str,
    iv: Interventions,
    options: DecodeOptions = DecodeOptions(),
    trace: bool = True,
    chat: bool = False,
) -> bool:
    """True when that translation (a decoder-only model's continuation, or with `chat` its answer) is in the
    cache: a page can show it without asking."""
    if bundle.capabilities.decoder_only:
        return _generate.holds(bundle.checkpoint_id, text, iv_key(iv), options, trace, chat)
    return not chat and _translate.holds(bundle.checkpoint_id, text, iv_key(iv), options, trace)


@cached
def _translation_text(_bundle: Bundle, checkpoint_id: str, sentence: str, key: IvKey, options: DecodeOptions) -> str:
    return _bundle.translation(sentence, interventions_of(key), options)


def translation_text(
    bundle: Bundle, sentence: str, iv: Interventions, options: DecodeOptions = DecodeOptions(), chat: bool = False
) -> str:
    """The translation alone (`Bundle.translation`), cached: for a page that shows only the text; a
    decoder-only model's continuation (or with `chat` its answer), generated without a trace."""
    if bundle.capabilities.decoder_only:
        return generate(bundle, sentence, iv, options, trace=False, chat=chat).translation
    _translates(bundle, chat)
    return _translation_text(bundle, bundle.checkpoint_id, sentence, iv_key(iv), options)


@cached
def _encode_batch(_bundle: Bundle, checkpoint_id: str, sentences: tuple[str, ...], key: IvKey) -> list[EncodeResult]:
    return _bundle.encode_batch(list(sentences), interventions_of(key))


def encode(bundle: Bundle, sentence: str, iv: Interventions) -> EncodeResult:
    """The encoder alone on one sentence (trace and sentence embedding), cached."""
    return _encode_batch(bundle, bundle.checkpoint_id, (sentence,), iv_key(iv))[0]


def encode_batch(bundle: Bundle, sentences: list[str], iv: Interventions) -> list[EncodeResult]:
    """Sentences encoded as one padded batch (the padding demo of an encoder-only model), cached."""
    return list(_encode_batch(bundle, bundle.checkpoint_id, tuple(sentences), iv_key(iv)))


@cached
def _translate_batch(
    _bundle: Bundle, checkpoint_id: str, sentences: tuple[str, ...], key: IvKey
) -> list[TranslationResult]:
    return experiments.translate_batch(_bundle, list(sentences), interventions_of(key))


def translate_batch(bundle: Bundle, sentences: list[str], iv: Interventions) -> list[TranslationResult]:
    """Greedy-translate sentences as one padded batch, cached."""
    return list(_translate_batch(bundle, bundle.checkpoint_id, tuple(sentences), iv_key(iv)))


@cached
def _prompt_batch(_bundle: Bundle, checkpoint_id: str, texts: tuple[str, ...], key: IvKey, chat: bool) -> list[Trace]:
    prompts = [_bundle.read_input(text, chat=True) if chat else _bundle.encode_source(text)[1] for text in texts]
    return _bundle.teacher_forced_rows(prompts, None, interventions_of(key))


def prompt_batch(bundle: Bundle, texts: list[str], iv: Interventions, chat: bool = False) -> list[Trace]:
    """A decoder-only model reading texts (with `chat`, each as a chat message, wrapped) as one right-padded
    batch in one pass (the padding demo): each trace is its row, padding included; cached."""
    return list(_prompt_batch(bundle, bundle.checkpoint_id, tuple(texts), iv_key(iv), chat))
