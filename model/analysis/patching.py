"""Activation patching between two sentences: run one with an activation taken from the other."""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import torch

from ..bundle import Bundle
from ..engine import stages
from ..engine.hooks import Patch, patching, sequence_axis
from ..engine.interventions import Interventions
from ..errors import InputError
from . import forced


def patch(bundle: Bundle, donor: str, receiver: str, output_ids: Sequence[int], hook: str,
          positions: Sequence[int] | None = None, interventions: Interventions = Interventions()) -> np.ndarray:
    """(output pieces, vocabulary): the receiver sentence's log-probabilities, teacher-forced on
    `output_ids`, with the activation at hook point `hook` (a name from `trace.stages`) replaced by
    the donor sentence's at `positions` (along the positions axis; all of them when None, which
    needs activations of one shape; positions must exist in both). Patching a sentence with itself
    changes nothing, exactly. For an encoder-only model (BERT), `output_ids` is not read and the
    result is the receiver's sentence embedding (d_model,) instead (`patch_embedding`)."""
    _stage(hook)
    bundle.check_interventions(interventions)
    if bundle.capabilities.encoder_only:
        return patch_embedding(bundle, donor, receiver, hook, positions, interventions)
    donor_src, tgt, produced = forced.inputs(bundle, donor, output_ids)
    receiver_src, _, _ = forced.inputs(bundle, receiver, produced)
    value = _activation(bundle, forced.recorded(bundle, donor_src, tgt, interventions), hook).clone()
    try:
        out = forced.log_probs(bundle, receiver_src, tgt, interventions, {hook: Patch(value, positions)})
    except ValueError as exc:  # shapes or positions that do not fit
        raise InputError(str(exc)) from None
    return out[0].numpy()


def patch_grid(bundle: Bundle, donor: str, receiver: str, output_ids: Sequence[int], piece: int,
               hooks: Sequence[str], interventions: Interventions = Interventions(),
               progress: Callable[[float], None] | None = None) -> np.ndarray:
    """(hooks, source positions both sentences have): how much the receiver's log-probability of
    output piece `piece` (teacher-forced on `output_ids`) changes when the activation at one hook
    point, at one source position, is the donor's. Every hook must hold source positions
    (`Stage.source_rows`); each hook's row is one batched pass, a batch row per position, after
    which `progress` hears the share done."""
    for hook in hooks:
        _source_side(hook)
    bundle.check_interventions(interventions)
    donor_src, tgt, produced = forced.inputs(bundle, donor, output_ids)
    receiver_src, _, _ = forced.inputs(bundle, receiver, produced)
    if not 0 <= piece < len(produced):
        raise InputError(f"Output piece {piece + 1} is not among the {len(produced)} of this output.")
    theirs = forced.recorded(bundle, donor_src, tgt, interventions)
    ours = forced.recorded(bundle, receiver_src, tgt, interventions)
    both = min(donor_src.size(1), receiver_src.size(1))
    # the unpatched value from a pass of the same batch size: a self-patch differs from it by float rounding only
    base = forced.chosen_at(bundle, receiver_src, tgt, produced, [piece] * both, interventions)
    grid = np.zeros((len(hooks), both))
    for row, hook in enumerate(hooks):
        own, donated = _activation(bundle, ours, hook), _activation(bundle, theirs, hook)
        axis = sequence_axis(own)
        value = own.expand(both, *own.shape[1:]).clone()  # batch row p: position p is the donor's
        for position in range(both):
            value[position].select(axis - 1, position).copy_(donated[0].select(axis - 1, position))
        moved = forced.chosen_at(bundle, receiver_src, tgt, produced, [piece] * both, interventions,
                                 {hook: Patch(value)})
        grid[row] = (moved - base).numpy()
        if progress is not None:
            progress((row + 1) / len(hooks))
    return grid


def patched_translation(bundle: Bundle, donor: str, receiver: str, hook: str, positions: Sequence[int],
                        interventions: Interventions = Interventions()) -> list[int]:
    """The receiver's greedy translation (output ids) with the activation at a source-side hook
    point taken from the donor at `positions`, at every decoding step."""
    _source_side(hook)
    bundle.check_interventions(interventions)
    donor_src, tgt, _ = forced.inputs(bundle, donor, [bundle.specials.eos])
    value = _activation(bundle, forced.recorded(bundle, donor_src, tgt, interventions), hook).clone()
    try:
        with patching({hook: Patch(value, positions)}):
            return list(bundle.translate(receiver, interventions, trace=False).output_ids)
    except ValueError as exc:
        raise InputError(str(exc)) from None


def _stage(hook: str) -> stages.Stage:
    try:
        return stages.parse(hook)
    except ValueError as exc:
        raise InputError(str(exc)) from None


def _source_side(hook: str) -> None:
    if not _stage(hook).source_rows:
        raise InputError(f"{hook!r} does not hold source positions: patch it with `patch`.")


def _activation(bundle: Bundle, recorded: dict[str, torch.Tensor], hook: str) -> torch.Tensor:
    if hook not in recorded:
        raise InputError(f"{bundle.name} has no hook point {hook!r} in a teacher-forced pass.")
    return recorded[hook]


def unpatched(bundle: Bundle, sentence: str, output_ids: Sequence[int],
              interventions: Interventions = Interventions()) -> np.ndarray:
    """(output pieces, vocabulary): the sentence's own teacher-forced log-probabilities."""
    src, tgt, _ = forced.inputs(bundle, sentence, output_ids)
    return forced.log_probs(bundle, src, tgt, interventions)[0].numpy()


def patch_embedding(bundle: Bundle, donor: str, receiver: str, hook: str, positions: Sequence[int] | None = None,
                    interventions: Interventions = Interventions()) -> np.ndarray:
    """(d_model,): the receiver's sentence embedding with the activation at `hook` taken from the
    donor's encoding at `positions` (all when None), as `patch` does for a translation."""
    recorded = bundle.encode(donor, interventions).trace.tensors
    if hook not in recorded:
        raise InputError(f"{bundle.name} has no hook point {hook!r} when it encodes.")
    value = torch.from_numpy(np.array(recorded[hook]))
    try:
        with patching({hook: Patch(value, positions)}):
            return bundle.encode(receiver, interventions).embedding
    except ValueError as exc:
        raise InputError(str(exc)) from None
