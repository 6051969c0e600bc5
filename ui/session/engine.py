"""Cached calls into the engine: one model per checkpoint, one result per (checkpoint, sentence, controls).

`chat` (an instruct checkpoint's text read as a user's chat message, wrapped by its chat template) is part
of every key of a result that reads the text: a chat message's result and the plain prompt's never mix.

Models and results live in the byte-bounded caches of ui/session/cache.py (budgets there), shared by every
session: a hit is the stored object itself, with read-only arrays; pages only read results.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Hashable
from contextlib import AbstractContextManager
from dataclasses import dataclass, fields
from typing import Any, Generic, TypeVar

import numpy as np
import pandas as pd
import streamlit as st
import torch
from streamlit.runtime.scriptrunner import get_script_run_ctx

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
from model.analysis import attribute, experiments, knockout, logit_lens, patch, patch_grid, patched_translation
from model.analysis.cache import WithoutCache, without_cache
from model.analysis.roles import trace_roles
from model.checkpoints.catalog import DEFAULT, available_models
from model.engine.interventions import Head
from model.results import GenerationResult
from ui.session.cache import MODELS, RESULTS

V = TypeVar("V")

CHECKPOINT_ENV = "ANATOMY_CHECKPOINT"
THREADS_ENV = "ANATOMY_TORCH_THREADS"

# Interventions as a plain hashable key, built from its fields, so a new switch can never be
# left out of the key (a stale result) or dropped on the way back (a switch that never arrives).
IvKey = tuple[tuple[str, Any], ...]  # (field, value): a value of whichever type its field has


def checkpoint_path() -> str:
    """The checkpoint directory from $ANATOMY_CHECKPOINT ('' means the shipped default model)."""
    return os.environ.get(CHECKPOINT_ENV, "").strip()


def models() -> dict[str, str]:
    """Model name -> checkpoint directory for the picker ('default' is $ANATOMY_CHECKPOINT or ours).
    Read afresh on every run (a few directory listings), so a folder added to models/ shows at once."""
    found = available_models()
    found[DEFAULT] = checkpoint_path()
    return found


def model_path(name: str) -> str:
    """The directory of a model named in the picker ('' for the shipped default)."""
    return checkpoint_path() if name == DEFAULT else models().get(name, checkpoint_path())


def _spinner(message: str) -> Callable[[], AbstractContextManager] | None:
    """A spinner while a model loads, in a page's run only (the warm-up thread has no page)."""
    return (lambda: st.spinner(message)) if get_script_run_ctx(suppress_warning=True) is not None else None


class _Cached(Generic[V]):
    """compute(bundle, checkpoint_id, ...) through the shared results cache, keyed on its name and
    every positional argument but the bundle itself (the checkpoint id names it); keyword arguments
    (a progress callback) reach a computation that runs but are not part of the key.
    `holds(checkpoint_id, ...)` says whether a result is stored."""

    def __init__(self, compute: Callable[..., V]) -> None:
        self.compute = compute
        functools.update_wrapper(self, compute)

    def __call__(self, bundle: Bundle, *key: Hashable, **passed: object) -> V:
        return RESULTS.get((self.compute.__name__, *key), lambda: self.compute(bundle, *key, **passed))

    def holds(self, *key: Hashable) -> bool:
        """True when the result for this key is stored."""
        return (self.compute.__name__, *key) in RESULTS


def _cached(compute: Callable[..., V]) -> _Cached[V]:
    """`compute` through the shared results cache (see _Cached)."""
    return _Cached(compute)


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
        return MODELS.get(("bundle", path), load, _spinner("Loading the model ..."))
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
        self.slot.progress(min(max(share, 0.0), 1.0), text=f"First open of this model file: {text}")

    def clear(self) -> None:
        """Remove the bar."""
        if self.slot is not None:
            self.slot.empty()


def get_snapshot(path: str, step: int) -> Bundle:
    """A checkpoint with the weights it had at a training step, loaded once per process and shared."""
    return MODELS.get(
        ("snapshot", path, step), lambda: load_bundle(path, snapshot=step), _spinner("Loading a training snapshot ...")
    )


def iv_key(iv: Interventions) -> IvKey:
    """A plain, hashable cache key for interventions: every field, sets sorted."""
    return tuple(
        (f.name, tuple(sorted(value)) if isinstance(value := getattr(iv, f.name), frozenset) else value)
        for f in fields(iv)
    )


def _iv(key: IvKey) -> Interventions:
    values: dict[str, Any] = {name: frozenset(value) if isinstance(value, tuple) else value for name, value in key}
    return Interventions(**values)


@_cached
def _translate(
    _bundle: Bundle, checkpoint_id: str, sentence: str, key: IvKey, beam_size: int, trace: bool
) -> TranslationResult:
    return _bundle.translate(sentence, _iv(key), DecodeOptions(beam_size=beam_size), trace=trace)


def _translates(bundle: Bundle, chat: bool) -> None:
    """Refuse a chat message for a model that translates (only a decoder-only instruct model reads one)."""
    if chat:
        raise InputError(f"{bundle.name} translates a sentence: it reads no chat message.")


def translate(
    bundle: Bundle, sentence: str, iv: Interventions, beam_size: int = 1, trace: bool = True, chat: bool = False
) -> TranslationResult:
    """Translate through the cache keyed by (checkpoint id, sentence, switches, beam size, trace); a
    decoder-only model continues the sentence instead (`generate`, a GenerationResult; with `chat`, it
    answers the sentence as a chat message)."""
    if bundle.capabilities.decoder_only:
        return generate(bundle, sentence, iv, beam_size, trace, chat=chat)
    _translates(bundle, chat)
    return _translate(bundle, bundle.checkpoint_id, sentence, iv_key(iv), beam_size, trace)


@_cached
def _generate(
    _bundle: Bundle, checkpoint_id: str, text: str, key: IvKey, beam_size: int, trace: bool, chat: bool
) -> GenerationResult:
    return _bundle.generate(text, _iv(key), DecodeOptions(beam_size=beam_size), trace=trace, chat=chat)


def generate(
    bundle: Bundle, text: str, iv: Interventions, beam_size: int = 1, trace: bool = True, chat: bool = False
) -> GenerationResult:
    """A decoder-only model's continuation of `text` (`Bundle.generate`, the checkpoint's number of new
    pieces; with `chat`, its answer to `text` as a user's chat message, the result's prompt the wrapped
    text), cached by (checkpoint id, text, switches, beam size, trace, chat)."""
    return _generate(bundle, bundle.checkpoint_id, text, iv_key(iv), beam_size, trace, chat)


def in_cache(
    bundle: Bundle, text: str, iv: Interventions, beam_size: int = 1, trace: bool = True, chat: bool = False
) -> bool:
    """True when that translation (a decoder-only model's continuation, or with `chat` its answer) is in the
    cache: a page can show it without asking."""
    if bundle.capabilities.decoder_only:
        return _generate.holds(bundle.checkpoint_id, text, iv_key(iv), beam_size, trace, chat)
    return not chat and _translate.holds(bundle.checkpoint_id, text, iv_key(iv), beam_size, trace)


@_cached
def _translation_text(_bundle: Bundle, checkpoint_id: str, sentence: str, key: IvKey, beam_size: int) -> str:
    return _bundle.translation(sentence, _iv(key), DecodeOptions(beam_size=beam_size))


def translation_text(bundle: Bundle, sentence: str, iv: Interventions, beam_size: int = 1, chat: bool = False) -> str:
    """The translation alone (`Bundle.translation`), cached: for a page that shows only the text; a
    decoder-only model's continuation (or with `chat` its answer), generated without a trace."""
    if bundle.capabilities.decoder_only:
        return generate(bundle, sentence, iv, beam_size, trace=False, chat=chat).translation
    _translates(bundle, chat)
    return _translation_text(bundle, bundle.checkpoint_id, sentence, iv_key(iv), beam_size)


@_cached
def _encode_batch(_bundle: Bundle, checkpoint_id: str, sentences: tuple[str, ...], key: IvKey) -> list[EncodeResult]:
    return _bundle.encode_batch(list(sentences), _iv(key))


def encode(bundle: Bundle, sentence: str, iv: Interventions) -> EncodeResult:
    """The encoder alone on one sentence (trace and sentence embedding), cached."""
    return _encode_batch(bundle, bundle.checkpoint_id, (sentence,), iv_key(iv))[0]


def encode_batch(bundle: Bundle, sentences: list[str], iv: Interventions) -> list[EncodeResult]:
    """Sentences encoded as one padded batch (the padding demo of an encoder-only model), cached."""
    return list(_encode_batch(bundle, bundle.checkpoint_id, tuple(sentences), iv_key(iv)))


@_cached
def _translate_batch(
    _bundle: Bundle, checkpoint_id: str, sentences: tuple[str, ...], key: IvKey
) -> list[TranslationResult]:
    return experiments.translate_batch(_bundle, list(sentences), _iv(key))


def translate_batch(bundle: Bundle, sentences: list[str], iv: Interventions) -> list[TranslationResult]:
    """Greedy-translate sentences as one padded batch, cached."""
    return list(_translate_batch(bundle, bundle.checkpoint_id, tuple(sentences), iv_key(iv)))


@_cached
def _prompt_batch(_bundle: Bundle, checkpoint_id: str, texts: tuple[str, ...], key: IvKey, chat: bool) -> list[Trace]:
    prompts = [_bundle.read_input(text, chat=True) if chat else _bundle.encode_source(text)[1] for text in texts]
    return _bundle.teacher_forced_rows(prompts, None, _iv(key))


def prompt_batch(bundle: Bundle, texts: list[str], iv: Interventions, chat: bool = False) -> list[Trace]:
    """A decoder-only model reading texts (with `chat`, each as a chat message, wrapped) as one right-padded
    batch in one pass (the padding demo): each trace is its row, padding included; cached."""
    return list(_prompt_batch(bundle, bundle.checkpoint_id, tuple(texts), iv_key(iv), chat))


@_cached
def _knockout(
    _bundle: Bundle,
    checkpoint_id: str,
    sentence: str,
    key: IvKey,
    beam_size: int,
    heads: tuple[Head, ...],
    chat: bool,
) -> list[dict]:
    return knockout.sweep(_bundle, sentence, _iv(key), beam_size, list(heads), chat)


def knockout_sweep(
    bundle: Bundle, sentence: str, iv: Interventions, beam_size: int, heads: list[Head], chat: bool = False
) -> list[dict]:
    """`model.analysis.knockout.sweep` (each head knocked out in turn: the log-probability of the
    output, and for the heads that matter most the translation instead), cached."""
    rows = _knockout(bundle, bundle.checkpoint_id, sentence, iv_key(iv), beam_size, tuple(heads), chat)
    return [dict(row) for row in rows]  # the caller's own rows: the cached ones are shared


@_cached
def _embedding_knockout(
    _bundle: Bundle, checkpoint_id: str, sentence: str, key: IvKey, heads: tuple[Head, ...]
) -> list[dict]:
    return knockout.embedding_sweep(_bundle, sentence, _iv(key), list(heads))


def embedding_knockout(bundle: Bundle, sentence: str, iv: Interventions, heads: list[Head]) -> list[dict]:
    """`model.analysis.knockout.embedding_sweep` (how far the sentence embedding moves with each
    head knocked out), cached."""
    rows = _embedding_knockout(bundle, bundle.checkpoint_id, sentence, iv_key(iv), tuple(heads))
    return [dict(row) for row in rows]


@_cached
def _empty_source(_bundle: Bundle, checkpoint_id: str, sentence: str, key: IvKey, output_ids: tuple[int, ...]) -> Trace:
    return experiments.empty_source(_bundle, sentence, _iv(key), output_ids)[1]


def empty_source(bundle: Bundle, sentence: str, iv: Interventions, output_ids: tuple[int, ...] = ()) -> Trace:
    """The all-padding row batched with the sentence (every key masked), its decoder fed
    `output_ids` (the page's translation) or a translation of its own; cached."""
    return _empty_source(bundle, bundle.checkpoint_id, sentence, iv_key(iv), tuple(output_ids))


@_cached
def _teacher_forced(
    _bundle: Bundle, checkpoint_id: str, sentence: str, output_ids: tuple[int, ...], key: IvKey, chat: bool
) -> Trace:
    return _bundle.teacher_forced(sentence, list(output_ids), _iv(key), chat)


def teacher_forced(
    bundle: Bundle, sentence: str, output_ids: tuple[int, ...], iv: Interventions, chat: bool = False
) -> Trace:
    """One recorded pass over a fixed output with every piece fed at once (as in training; with `chat`,
    after the sentence as a chat message), cached."""
    return _teacher_forced(bundle, bundle.checkpoint_id, sentence, tuple(output_ids), iv_key(iv), chat)


@_cached
def _teacher_forced_at(
    _bundle: Bundle,
    checkpoint_id: str,
    sentence: str,
    output_ids: tuple[int, ...],
    name: str,
    key: IvKey,
    chat: bool,
) -> np.ndarray:
    return _bundle.teacher_forced_at(sentence, list(output_ids), name, _iv(key), chat)


def teacher_forced_at(
    bundle: Bundle, sentence: str, output_ids: tuple[int, ...], name: str, iv: Interventions, chat: bool = False
) -> np.ndarray:
    """`teacher_forced(...).tensor(name)`, from that trace when it is cached, else from a pass that stops
    at hook point `name` (`Bundle.teacher_forced_at`: a page that shows one layer of a what-if pays for
    the layers up to it, not for a whole trace); cached."""
    if _teacher_forced.holds(bundle.checkpoint_id, sentence, tuple(output_ids), iv_key(iv), chat):
        return teacher_forced(bundle, sentence, output_ids, iv, chat).tensor(name)
    return _teacher_forced_at(bundle, bundle.checkpoint_id, sentence, tuple(output_ids), name, iv_key(iv), chat)


@_cached
def _score(
    _bundle: Bundle, checkpoint_id: str, sentence: str, output_ids: tuple[int, ...], key: IvKey, chat: bool
) -> list[float]:
    return _bundle.score(sentence, list(output_ids), _iv(key), chat)


def score(
    bundle: Bundle, sentence: str, output_ids: tuple[int, ...], iv: Interventions, chat: bool = False
) -> list[float]:
    """Per-piece log-probabilities of a fixed output under the switches (teacher-forced; with `chat`, after
    the sentence as a chat message), cached."""
    return list(_score(bundle, bundle.checkpoint_id, sentence, tuple(output_ids), iv_key(iv), chat))


@_cached
def _attribution(
    _bundle: Bundle,
    checkpoint_id: str,
    sentence: str,
    output_ids: tuple[int, ...],
    method: str,
    key: IvKey,
    pieces: tuple[int, ...] | None,
    chat: bool,
    progress: Callable[[float], object] | None = None,
    trace: Trace | None = None,
) -> np.ndarray:
    return attribute(
        _bundle, sentence, output_ids, method, _iv(key), pieces=pieces, progress=progress, trace=trace, chat=chat
    )


def attribution(
    bundle: Bundle,
    sentence: str,
    output_ids: tuple[int, ...],
    method: str,
    iv: Interventions,
    pieces: tuple[int, ...] | None = None,
    progress: Callable[[float], object] | None = None,
    trace: Trace | None = None,
    chat: bool = False,
) -> np.ndarray:
    """`model.analysis.attribute` (output pieces, or the rows of `pieces`, x source pieces; with `chat`,
    the answer's pieces x the wrapped prompt's), cached; `progress` hears how far a computation that is not
    cached has got; `trace`, the output's own, saves attention and rollout a pass."""
    return _attribution(
        bundle,
        bundle.checkpoint_id,
        sentence,
        tuple(output_ids),
        method,
        iv_key(iv),
        pieces,
        chat,
        progress=progress,
        trace=trace,
    )


def attribution_cached(
    bundle: Bundle,
    sentence: str,
    output_ids: tuple[int, ...],
    method: str,
    iv: Interventions,
    pieces: tuple[int, ...] | None = None,
    chat: bool = False,
) -> bool:
    """True when the whole attribution table (or the rows of `pieces`) is in the cache (a page can
    show it without asking)."""
    return _attribution.holds(bundle.checkpoint_id, sentence, tuple(output_ids), method, iv_key(iv), pieces, chat)


LENS_TOP = 5  # candidates per layer in the lens table


@dataclass(frozen=True)
class LensView:
    """The logit lens, kept small: (layers, output pieces) probability of the piece the model wrote,
    and each layer's LENS_TOP first candidates per output piece with their probabilities."""

    final: np.ndarray  # (L, T)
    top_pieces: list[list[list[str]]]  # [L][T][LENS_TOP]
    top_probs: np.ndarray  # (L, T, LENS_TOP)

    @property
    def firsts(self) -> list[list[str]]:
        """Each layer's first choice per output piece."""
        return [[candidates[0] for candidates in row] for row in self.top_pieces]

    def top_pieces_at(self, piece: int) -> list[list[str]]:
        """[L][LENS_TOP]: each layer's first candidates for one output piece."""
        return [row[piece] for row in self.top_pieces]


@_cached
def _lens(
    _bundle: Bundle,
    checkpoint_id: str,
    sentence: str,
    output_ids: tuple[int, ...],
    key: IvKey,
    pieces: tuple[int, ...] | None,
    chat: bool,
    trace: Trace | None = None,
) -> LensView:
    lens = torch.from_numpy(
        logit_lens(_bundle, sentence, output_ids, _iv(key), trace, pieces, chat)
    )  # (L, T, vocab) log-probabilities
    wanted = list(output_ids) if pieces is None else [output_ids[p] for p in pieces]
    final = lens[:, torch.arange(len(wanted)), wanted].exp().numpy()
    probs, ids = lens.topk(LENS_TOP, dim=-1)
    return LensView(
        final, [[_bundle.tokenizer.pieces(row.tolist()) for row in layer] for layer in ids], probs.exp().numpy()
    )


def lens(
    bundle: Bundle,
    sentence: str,
    output_ids: tuple[int, ...],
    iv: Interventions,
    trace: Trace | None = None,
    pieces: tuple[int, ...] | None = None,
    chat: bool = False,
) -> LensView:
    """The logit lens (`model.analysis.logit_lens`) of every output piece, or of `pieces` alone (the view's
    pieces are then those, in that order), kept small; cached; `trace`, the output's own, saves it a pass."""
    return _lens(bundle, bundle.checkpoint_id, sentence, tuple(output_ids), iv_key(iv), pieces, chat, trace=trace)


def lens_cached(
    bundle: Bundle, sentence: str, output_ids: tuple[int, ...], iv: Interventions, chat: bool = False
) -> bool:
    """True when the lens of every output piece is in the cache."""
    return _lens.holds(bundle.checkpoint_id, sentence, tuple(output_ids), iv_key(iv), None, chat)


@_cached
def _roles(_bundle: Bundle, checkpoint_id: str, sentence: str, key: IvKey, beam_size: int, chat: bool) -> pd.DataFrame:
    iv = _iv(key)
    result = (
        encode(_bundle, sentence, iv)
        if _bundle.capabilities.encoder_only
        else translate(_bundle, sentence, iv, beam_size, chat=chat)
    )  # a decoder-only model's continuation (or answer)
    if result.trace is None:
        raise ValueError("head roles read the result's trace, and this one was made without")
    return trace_roles(result.trace, iv.causal_mask, _bundle.config.windows)  # a window hides the first piece


def roles(bundle: Bundle, sentence: str, iv: Interventions, beam_size: int = 1, chat: bool = False) -> pd.DataFrame:
    """`model.analysis.roles.trace_roles` on the sentence's cached translation (or encoding), cached
    (a copy: the cached frame is shared)."""
    return _roles(bundle, bundle.checkpoint_id, sentence, iv_key(iv), beam_size, chat).copy()


@_cached
def _patched(
    _bundle: Bundle,
    checkpoint_id: str,
    donor: str,
    receiver: str,
    output_ids: tuple[int, ...],
    hook: str,
    positions: tuple[int, ...] | None,
    key: IvKey,
    chat: bool,
) -> np.ndarray:
    logp = patch(_bundle, donor, receiver, output_ids, hook, positions, _iv(key), chat)
    return logp[np.arange(len(output_ids)), list(output_ids)]


def patched(
    bundle: Bundle,
    donor: str,
    receiver: str,
    output_ids: tuple[int, ...],
    hook: str,
    positions: tuple[int, ...] | None,
    iv: Interventions,
    chat: bool = False,
) -> np.ndarray:
    """`model.analysis.patch`, kept small: the receiver's log-probability of each output piece; cached."""
    return _patched(bundle, bundle.checkpoint_id, donor, receiver, tuple(output_ids), hook, positions, iv_key(iv), chat)


@_cached
def _patch_grid(
    _bundle: Bundle,
    checkpoint_id: str,
    donor: str,
    receiver: str,
    output_ids: tuple[int, ...],
    piece: int,
    hooks: tuple[str, ...],
    key: IvKey,
    chat: bool,
    progress: Callable[[float], object] | None = None,
) -> np.ndarray:
    return patch_grid(_bundle, donor, receiver, output_ids, piece, hooks, _iv(key), progress, chat)


def patch_cells(
    bundle: Bundle,
    donor: str,
    receiver: str,
    output_ids: tuple[int, ...],
    piece: int,
    hooks: tuple[str, ...],
    iv: Interventions,
    progress: Callable[[float], object] | None = None,
    chat: bool = False,
) -> np.ndarray:
    """`model.analysis.patch_grid` (hook points x source positions -> change in one piece's
    log-probability), cached; `progress` hears how far a computation that is not cached has got."""
    return _patch_grid(
        bundle,
        bundle.checkpoint_id,
        donor,
        receiver,
        tuple(output_ids),
        piece,
        tuple(hooks),
        iv_key(iv),
        chat,
        progress=progress,
    )


def patch_cells_cached(
    bundle: Bundle,
    donor: str,
    receiver: str,
    output_ids: tuple[int, ...],
    piece: int,
    hooks: tuple[str, ...],
    iv: Interventions,
    chat: bool = False,
) -> bool:
    """True when that patching grid is in the cache."""
    return _patch_grid.holds(
        bundle.checkpoint_id, donor, receiver, tuple(output_ids), piece, tuple(hooks), iv_key(iv), chat
    )


@_cached
def _patched_translation(
    _bundle: Bundle,
    checkpoint_id: str,
    donor: str,
    receiver: str,
    hook: str,
    positions: tuple[int, ...],
    key: IvKey,
    chat: bool,
) -> str:
    return _bundle.tokenizer.decode(patched_translation(_bundle, donor, receiver, hook, positions, _iv(key), chat))


def translation_patched(
    bundle: Bundle,
    donor: str,
    receiver: str,
    hook: str,
    positions: tuple[int, ...],
    iv: Interventions,
    chat: bool = False,
) -> str:
    """The receiver's greedy translation (a decoder-only model's continuation, or with `chat` its answer)
    with the donor's activation at `hook`, `positions`; cached."""
    return _patched_translation(bundle, bundle.checkpoint_id, donor, receiver, hook, tuple(positions), iv_key(iv), chat)


@_cached
def _without_cache(
    _bundle: Bundle, checkpoint_id: str, prompt: tuple[int, ...], steps: int, key: IvKey
) -> WithoutCache:
    return without_cache(_bundle, list(prompt), steps, _iv(key))


def decoded_without_cache(bundle: Bundle, prompt: tuple[int, ...], steps: int, iv: Interventions) -> WithoutCache:
    """A continuation decoded with the KV cache and re-reading every prefix, both timed; cached."""
    return _without_cache(bundle, bundle.checkpoint_id, tuple(prompt), steps, iv_key(iv))


def without_cache_held(bundle: Bundle, prompt: tuple[int, ...], steps: int, iv: Interventions) -> bool:
    """True when that measurement is in the cache."""
    return _without_cache.holds(bundle.checkpoint_id, tuple(prompt), steps, iv_key(iv))
