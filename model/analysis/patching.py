"""Activation patching between two sentences: run one with an activation taken from the other.

Positions are matched by index. For an encoder-decoder the source positions are the encoder's (T5's
task prefix included); for a decoder-only model (GPT-2) the "source" is the prompt, whose positions
are the decoder's first ones: its hook points are the decoder's, and a donor prompt with as many
pieces lines up with the receiver's everywhere."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import torch

from i18n import later

from ..bundle import Bundle
from ..engine import stages
from ..engine.decoding import greedy
from ..engine.hooks import Patch, patching, sequence_axis
from ..engine.interventions import DecodeOptions, Interventions
from ..errors import InputError, message
from . import forced


def patch(
    bundle: Bundle,
    donor: str,
    receiver: str,
    output_ids: Sequence[int],
    hook: str,
    positions: Sequence[int] | None = None,
    interventions: Interventions = Interventions(),
    chat: bool = False,
) -> np.ndarray:
    """(output pieces, vocabulary): the receiver sentence's log-probabilities, teacher-forced on
    `output_ids`, with the activation at hook point `hook` (a name from `trace.stages`) replaced by
    the donor sentence's at `positions` (along the positions axis; all of them when None, which
    needs activations of one shape; positions must exist in both). Patching a sentence with itself
    changes nothing, exactly. For an encoder-only model (BERT), `output_ids` is not read and the
    result is the receiver's sentence embedding (d_model,) instead (`patch_embedding`). For a
    decoder-only model, donor and receiver are prompts, each followed by `output_ids` (so a decoder
    position past the prompts holds the same output piece in both; with `chat`, both are chat messages,
    wrapped by the checkpoint's chat template)."""
    _stage(hook)
    bundle.check_interventions(interventions)
    if bundle.capabilities.encoder_only:
        return patch_embedding(bundle, donor, receiver, hook, positions, interventions)
    donor_src, donor_tgt, produced = forced.inputs(bundle, donor, output_ids, chat)
    receiver_src, receiver_tgt, _ = forced.inputs(bundle, receiver, produced, chat)
    value = _activation(bundle, forced.recorded(bundle, donor_src, donor_tgt, interventions), hook).clone()
    try:
        out = forced.log_probs(bundle, receiver_src, receiver_tgt, interventions, {hook: Patch(value, positions)})
    except ValueError as exc:  # shapes or positions that do not fit
        raise InputError(message(exc)) from None
    return out[0].numpy()


def patch_grid(
    bundle: Bundle,
    donor: str,
    receiver: str,
    output_ids: Sequence[int],
    piece: int,
    hooks: Sequence[str],
    interventions: Interventions = Interventions(),
    progress: Callable[[float], object] | None = None,
    chat: bool = False,
) -> np.ndarray:
    """(hooks, source positions both sentences have): how much the receiver's log-probability of
    output piece `piece` (teacher-forced on `output_ids`) changes when the activation at one hook
    point, at one source position, is the donor's. Every hook must hold source positions
    (`Stage.source_rows`; for a decoder-only model, any decoder hook point, whose first positions
    are the prompt's); each hook's row is one batched pass, a batch row per position, after which
    `progress` hears the share done. `chat`: both prompts are chat messages, as `patch` reads them."""
    for hook in hooks:
        _source_side(bundle, hook)
    bundle.check_interventions(interventions)
    donor_src, donor_tgt, produced = forced.inputs(bundle, donor, output_ids, chat)
    receiver_src, receiver_tgt, _ = forced.inputs(bundle, receiver, produced, chat)
    if not 0 <= piece < len(produced):
        raise InputError(
            later("Output piece {piece} is not among the {n} of this output.", piece=piece + 1, n=len(produced))
        )
    # activations of passes as long as the grid's (with the causal mask on, they stop at the piece)
    donor_tgt = forced.decoder_rows(bundle, donor_src, donor_tgt, [piece], interventions)
    receiver_tgt = forced.decoder_rows(bundle, receiver_src, receiver_tgt, [piece], interventions)
    theirs = forced.recorded(bundle, donor_src, donor_tgt, interventions)
    ours = forced.recorded(bundle, receiver_src, receiver_tgt, interventions)
    both = min(donor_src.size(1), receiver_src.size(1))
    # the unpatched value from a pass of the same batch size: a self-patch differs from it by float rounding only
    base = forced.chosen_at(bundle, receiver_src, receiver_tgt, produced, [piece] * both, interventions)
    grid = np.zeros((len(hooks), both))
    for row, hook in enumerate(hooks):
        own, donated = _activation(bundle, ours, hook), _activation(bundle, theirs, hook)
        axis = sequence_axis(own)
        value = own.expand(both, *own.shape[1:]).clone()  # batch row p: position p is the donor's
        try:
            for position in range(both):
                value[position].select(axis - 1, position).copy_(donated[0].select(axis - 1, position))
        except RuntimeError as exc:  # a per-head tensor whose keys are the two sentences' positions
            raise InputError(
                later(
                    "{hook} of sentences of different lengths does not fit position by position: {problem}",
                    hook=repr(hook),
                    problem=str(exc),
                )
            ) from None
        moved = forced.chosen_at(
            bundle, receiver_src, receiver_tgt, produced, [piece] * both, interventions, {hook: Patch(value)}
        )
        grid[row] = (moved - base).numpy()
        if progress is not None:
            progress((row + 1) / len(hooks))
    return grid


def patched_translation(
    bundle: Bundle,
    donor: str,
    receiver: str,
    hook: str,
    positions: Sequence[int],
    interventions: Interventions = Interventions(),
    chat: bool = False,
) -> list[int]:
    """The receiver's greedy translation (output ids) with the activation at a source-side hook
    point taken from the donor at `positions`, at every decoding step. For a decoder-only model,
    the receiver prompt's greedy continuation (new ids, the piece that ended it included) with the
    donor prompt's activation at prompt `positions` of a decoder hook point, in every step's pass (with
    `chat`, both prompts are chat messages, and the continuation is the receiver's answer)."""
    _source_side(bundle, hook)
    bundle.check_interventions(interventions)
    donor_src, tgt, _ = forced.inputs(bundle, donor, [bundle.specials.eos], chat)
    value = _activation(bundle, forced.recorded(bundle, donor_src, tgt, interventions), hook).clone()
    if not bundle.capabilities.encoder:
        return _patched_continuation(
            bundle, donor_src.size(1), receiver, {hook: Patch(value, positions)}, interventions, chat
        )
    try:
        with patching({hook: Patch(value, positions)}):
            return list(bundle.translate(receiver, interventions, trace=False).output_ids)
    except ValueError as exc:
        raise InputError(message(exc)) from None


def _patched_continuation(
    bundle: Bundle, donor_length: int, receiver: str, patches: dict[str, Patch], iv: Interventions, chat: bool
) -> list[int]:
    """Greedy decoding as `Bundle.generate` does it (as many new pieces at most) with `patches` at
    the prompt's positions. A patch's positions count from the start of each pass, so it is active
    in passes that start at position 0 only: with the causal mask on, the first (the prompt, whose
    keys and values every later step reads from the cache, as patched); with it off, every step's
    pass over the whole prefix."""
    prompt = bundle.read_input(receiver, chat=chat)
    both = min(donor_length, len(prompt))
    if any(not 0 <= p < both for patch_ in patches.values() for p in (patch_.positions or ())):
        raise InputError(later("Positions to patch must be among the {n} prompt positions both prompts have.", n=both))
    try:
        with torch.inference_mode(), nullcontext() if iv.causal_mask else patching(patches):
            [(new, end)] = greedy(
                bundle.model,
                None,
                None,
                iv,
                bundle.max_new(len(prompt), DecodeOptions()),
                bundle.specials,
                prompt=torch.tensor([prompt]),
                first_step=patching(patches) if iv.causal_mask else None,
            )
    except ValueError as exc:  # shapes that do not fit
        raise InputError(message(exc)) from None
    return new + ([] if end is None else [end])


def _stage(hook: str) -> stages.Stage:
    try:
        return stages.parse(hook)
    except ValueError as exc:
        raise InputError(message(exc)) from None


def _source_side(bundle: Bundle, hook: str) -> None:
    """Refuse a hook point whose positions are not the source's (a decoder-only model: the prompt's)."""
    stage = _stage(hook)
    if bundle.capabilities.encoder:
        if not stage.source_rows:
            raise InputError(later("{hook} does not hold source positions: patch it with `patch`.", hook=repr(hook)))
    elif (stage.stack != "decoder" and stage.side != "target") or stage.stage == stages.POSITION_BIAS:
        raise InputError(
            later("{hook} does not hold the prompt's positions: patch a decoder hook point.", hook=repr(hook))
        )


def _activation(bundle: Bundle, recorded: dict[str, torch.Tensor], hook: str) -> torch.Tensor:
    if hook not in recorded:
        raise InputError(
            later("{name} has no hook point {hook} in a teacher-forced pass.", name=bundle.name, hook=repr(hook))
        )
    return recorded[hook]


def unpatched(
    bundle: Bundle,
    sentence: str,
    output_ids: Sequence[int],
    interventions: Interventions = Interventions(),
    chat: bool = False,
) -> np.ndarray:
    """(output pieces, vocabulary): the sentence's own teacher-forced log-probabilities."""
    src, tgt, _ = forced.inputs(bundle, sentence, output_ids, chat)
    return forced.log_probs(bundle, src, tgt, interventions)[0].numpy()


def patch_embedding(
    bundle: Bundle,
    donor: str,
    receiver: str,
    hook: str,
    positions: Sequence[int] | None = None,
    interventions: Interventions = Interventions(),
) -> np.ndarray:
    """(d_model,): the receiver's sentence embedding with the activation at `hook` taken from the
    donor's encoding at `positions` (all when None), as `patch` does for a translation."""
    recorded = bundle.encode(donor, interventions).trace.tensors
    if hook not in recorded:
        raise InputError(later("{name} has no hook point {hook} when it encodes.", name=bundle.name, hook=repr(hook)))
    value = torch.from_numpy(np.array(recorded[hook]))
    try:
        with patching({hook: Patch(value, positions)}):
            return bundle.encode(receiver, interventions).embedding
    except ValueError as exc:
        raise InputError(message(exc)) from None


@dataclass(frozen=True)
class Mismatch:
    """Where a donor reads other pieces than the receiver, matched by index (what a one-position patch
    can change: at every other position the two read the same piece)."""

    receiver: tuple[str, ...]  # the receiver's source (or prompt) pieces
    donor: tuple[str, ...]  # the donor's
    positions: tuple[int, ...]  # the positions both have where the two pieces differ


def mismatch(bundle: Bundle, donor: str, receiver: str, output_ids: Sequence[int], chat: bool = False) -> Mismatch:
    """The donor's and the receiver's source pieces (a decoder-only model's prompt pieces; with `chat`,
    both wrapped as chat messages), as the patching passes read them for `output_ids`, and the positions
    where they differ."""
    new = len(list(output_ids)[: bundle.config.max_len])
    ours = tuple(bundle.tokenizer.pieces(bundle.read_input(receiver, new, chat)))
    theirs = tuple(bundle.tokenizer.pieces(bundle.read_input(donor, new, chat)))
    return Mismatch(ours, theirs, tuple(p for p, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b))


def moved_pieces(own: np.ndarray, patched_: np.ndarray, at_least: float) -> list[tuple[int, float]]:
    """(output piece, change of its log-probability) for every piece a patch moves by `at_least` or
    more, in output order: `own` and `patched_` are the pieces' log-probabilities without and with it."""
    change = np.asarray(patched_, dtype=np.float64) - np.asarray(own, dtype=np.float64)
    return [(int(t), float(change[t])) for t in np.flatnonzero(np.abs(change) >= at_least)]
