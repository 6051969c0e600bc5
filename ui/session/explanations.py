"""Cached explanations of a translation or a continuation (the Why this word? page, the model view's roles):
teacher-forced traces and scores, attribution, the logit lens, head roles, activation patching."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from model import (
    Bundle,
    DecodeOptions,
    Interventions,
    Trace,
)
from model.analysis import attribute, logit_lens, patch_grid
from ui.session.cached import IvKey, cached, interventions_of, iv_key
from ui.session.engine import encode, translate
from views.lens import LENS_TOP as LENS_TOP
from views.lens import LensView, lens_view
from views.patching import patched_scores, patched_text
from views.why import head_roles


@cached
def _teacher_forced(
    _bundle: Bundle, checkpoint_id: str, sentence: str, output_ids: tuple[int, ...], key: IvKey, chat: bool
) -> Trace:
    return _bundle.teacher_forced(sentence, list(output_ids), interventions_of(key), chat)


def teacher_forced(
    bundle: Bundle, sentence: str, output_ids: tuple[int, ...], iv: Interventions, chat: bool = False
) -> Trace:
    """One recorded pass over a fixed output with every piece fed at once (as in training; with `chat`,
    after the sentence as a chat message), cached."""
    return _teacher_forced(bundle, bundle.checkpoint_id, sentence, tuple(output_ids), iv_key(iv), chat)


@cached
def _teacher_forced_at(
    _bundle: Bundle,
    checkpoint_id: str,
    sentence: str,
    output_ids: tuple[int, ...],
    name: str,
    key: IvKey,
    chat: bool,
) -> np.ndarray:
    return _bundle.teacher_forced_at(sentence, list(output_ids), name, interventions_of(key), chat)


def teacher_forced_at(
    bundle: Bundle, sentence: str, output_ids: tuple[int, ...], name: str, iv: Interventions, chat: bool = False
) -> np.ndarray:
    """`teacher_forced(...).tensor(name)`, from that trace when it is cached, else from a pass that stops
    at hook point `name` (`Bundle.teacher_forced_at`: a page that shows one layer of a what-if pays for
    the layers up to it, not for a whole trace); cached."""
    if _teacher_forced.holds(bundle.checkpoint_id, sentence, tuple(output_ids), iv_key(iv), chat):
        return teacher_forced(bundle, sentence, output_ids, iv, chat).tensor(name)
    return _teacher_forced_at(bundle, bundle.checkpoint_id, sentence, tuple(output_ids), name, iv_key(iv), chat)


@cached
def _score(
    _bundle: Bundle, checkpoint_id: str, sentence: str, output_ids: tuple[int, ...], key: IvKey, chat: bool
) -> list[float]:
    return _bundle.score(sentence, list(output_ids), interventions_of(key), chat)


def score(
    bundle: Bundle, sentence: str, output_ids: tuple[int, ...], iv: Interventions, chat: bool = False
) -> list[float]:
    """Per-piece log-probabilities of a fixed output under the switches (teacher-forced; with `chat`, after
    the sentence as a chat message), cached."""
    return list(_score(bundle, bundle.checkpoint_id, sentence, tuple(output_ids), iv_key(iv), chat))


@cached
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
        _bundle,
        sentence,
        output_ids,
        method,
        interventions_of(key),
        pieces=pieces,
        progress=progress,
        trace=trace,
        chat=chat,
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


@cached
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
    lens = logit_lens(_bundle, sentence, output_ids, interventions_of(key), trace, pieces, chat)  # (L, T, vocab)
    return lens_view(_bundle, lens, output_ids, pieces)


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


@cached
def _roles(
    _bundle: Bundle, checkpoint_id: str, sentence: str, key: IvKey, options: DecodeOptions, chat: bool
) -> pd.DataFrame:
    iv = interventions_of(key)
    result = (
        encode(_bundle, sentence, iv)
        if _bundle.capabilities.encoder_only
        else translate(_bundle, sentence, iv, options, chat=chat)
    )  # a decoder-only model's continuation (or answer)
    return head_roles(_bundle, result, iv)


def roles(
    bundle: Bundle, sentence: str, iv: Interventions, options: DecodeOptions = DecodeOptions(), chat: bool = False
) -> pd.DataFrame:
    """`model.analysis.roles.trace_roles` on the sentence's cached translation (or encoding), cached
    (a copy: the cached frame is shared)."""
    return _roles(bundle, bundle.checkpoint_id, sentence, iv_key(iv), options, chat).copy()


@cached
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
    return patched_scores(_bundle, donor, receiver, output_ids, hook, positions, interventions_of(key), chat)


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


@cached
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
    return patch_grid(_bundle, donor, receiver, output_ids, piece, hooks, interventions_of(key), progress, chat)


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


@cached
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
    return patched_text(_bundle, donor, receiver, hook, positions, interventions_of(key), chat)


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
