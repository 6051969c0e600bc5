"""Which source piece made the model write each output piece: five attribution methods, each defined
exactly so it can be checked.

f_t is the log-probability of output piece t under teacher forcing on the given output; x is the
source's token embeddings as the model receives them (`src_embed.hook_scaled`: scaled when the
model scales them, positions not included); a row of the result is one output piece, a column one
source piece. The source of an encoder-decoder is the encoder's input (T5's task prefix included);
that of a decoder-only model (GPT-2) is its prompt: x is then the decoder's token embeddings at the
prompt's positions (`tgt_embed.hook_scaled`), and the output pieces written before piece t stay as
they are (they are not attributed).

    attention             the last decoder layer's cross-attention row, mean over heads (decoder-only:
                          its self-attention row at the position that chose the piece, over the
                          prompt's columns)
    rollout               attention rollout (Abnar and Zuidema, 2020): R = Â_{L-1} ... Â_0 over the
                          encoder layers with Â_l = 0.5 mean_heads(A_l) + 0.5 I; row t is the
                          "attention" row times R (decoder-only: R over the decoder layers below the
                          last, whose outputs the last layer's attention reads; the prompt's columns)
    gradient              input x gradient: x_s . df_t/dx_s, summed over the embedding dimension
    integrated-gradients  (x_s - x'_s) . mean over k of df_t/dx_s at (k + 1/2)/steps of the way from
                          the baseline x' to x, summed over the embedding dimension; a row sums to
                          f_t(x) - f_t(x') within the midpoint rule's error
    occlusion             f_t(x) - f_t(x with x_s set to x'_s)

The baseline x' is zero (positions kept: an empty sentence as long). A model that adds nothing to
its token embeddings before they meet a norm is the exception (T5, whose positions are a bias on the
scores, or a pre-norm model with its positions switched off): a norm sends any vector but zero to
unit size and zero to zero, so f jumps between x' = 0 and the first steps of the way, which no
practical number of steps resolves (rows then miss most of f(x) - f(0)). There x' is the <pad>
piece's embedding at every position: a sentence of padding as long, a real input the model has read.

Decoder-only, a row of "attention" or "rollout" sums to the share of the row's weight that lands on
the prompt (the rest is on the new pieces before t), not to 1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch

from i18n import later

from ..bundle import Bundle
from ..engine import stages
from ..engine.hooks import Patch
from ..engine.interventions import Interventions
from ..errors import InputError
from ..results import Trace
from . import forced

METHODS = ("attention", "rollout", "gradient", "integrated-gradients", "occlusion")
EMBEDDING = stages.embedding("scaled")  # x of an encoder-decoder (forced.embedding_stage: of any model)
IG_STEPS = 32  # integrated gradients' points on the way, unless asked otherwise
BATCH = 32  # rows per gradient pass: integrated gradients' points (for every output piece asked) go through in these


def attribute(
    bundle: Bundle,
    sentence: str,
    output_ids: Sequence[int],
    method: str,
    interventions: Interventions = Interventions(),
    steps: int = IG_STEPS,
    pieces: Sequence[int] | None = None,
    progress: Callable[[float], object] | None = None,
    trace: Trace | None = None,
    chat: bool = False,
) -> np.ndarray:
    """(output pieces, source pieces): how much each source piece contributed to each output piece's
    log-probability, by `method` (one of METHODS, defined in this module's docstring). With `pieces`,
    only those output pieces' rows, in that order (the gradient methods then cost that much less).
    `progress` hears the share done after each pass of integrated gradients. `trace`: the output's own
    trace, whose patterns "attention" and "rollout" read instead of a pass when it is this input's
    (`forced.recorded`). `chat`: a decoder-only instruct model's prompt is the sentence as a chat message
    (`forced.inputs`), and the output is its answer."""
    if method not in METHODS:
        raise InputError(
            later(
                "Unknown attribution method {method}: use one of {methods}.",
                method=repr(method),
                methods=", ".join(METHODS),
            )
        )
    bundle.check_interventions(interventions)
    src, tgt, produced = forced.inputs(bundle, sentence, output_ids, chat)
    rows = list(range(len(produced))) if pieces is None else [int(p) for p in pieces]
    if not rows or any(not 0 <= row < len(produced) for row in rows):
        raise InputError(later("Output pieces to explain must be among the {n} of this output.", n=len(produced)))
    if method in ("attention", "rollout"):
        return _attention(bundle, src, tgt, interventions, rollout=method == "rollout", trace=trace)[rows]
    x = forced.source_embedding(bundle, src, interventions, forced.embedding_stage(bundle)).clone()  # (1, S, d)
    if method == "gradient":
        return (
            (_gradient(bundle, src, tgt, produced, rows, interventions, x.expand(len(rows), -1, -1)) * x)
            .sum(-1)
            .numpy()
        )
    base = baseline(bundle, src, interventions, x)  # (1, S, d)
    if method == "occlusion":
        return _occlusion(bundle, src, tgt, produced, rows, interventions, x, base)
    if steps < 1:
        raise InputError(later("Integrated gradients needs at least one step."))
    points = [(i, k) for i in range(len(rows)) for k in range(steps)]  # (row, point on the way) pairs
    total = torch.zeros(len(rows), *x.shape[1:])
    for first in range(0, len(points), BATCH):
        chunk = points[first : first + BATCH]
        scaled = torch.cat([base + (x - base) * ((k + 0.5) / steps) for _, k in chunk])
        grad = _gradient(bundle, src, tgt, produced, [rows[i] for i, _ in chunk], interventions, scaled)
        total.index_add_(0, torch.tensor([i for i, _ in chunk]), grad)
        if progress is not None:
            progress(min(first + BATCH, len(points)) / len(points))
    return (total / steps * (x - base)).sum(-1).numpy()


def padding_baseline(bundle: Bundle, iv: Interventions) -> bool:
    """True when the baseline x' is the <pad> piece's embedding rather than zero: a zero vector would
    go into a norm with nothing added to it (see the module's docstring)."""
    cfg = bundle.config
    return (cfg.positional == "relative" or not iv.positional_encoding) and (cfg.norm_first or cfg.embed_norm)


def baseline(bundle: Bundle, src: torch.Tensor, iv: Interventions, x: torch.Tensor) -> torch.Tensor:
    """(1, S, d) the baseline x' of integrated gradients and occlusion for the source `src`, whose
    token embeddings are `x`."""
    if padding_baseline(bundle, iv):
        return forced.source_embedding(
            bundle, torch.full_like(src, bundle.specials.pad), iv, forced.embedding_stage(bundle)
        ).clone()
    return torch.zeros_like(x)


def _attention(
    bundle: Bundle, src: torch.Tensor, tgt: torch.Tensor, iv: Interventions, rollout: bool, trace: Trace | None = None
) -> np.ndarray:
    tensors = forced.recorded(bundle, src, tgt, iv, trace)
    cfg = bundle.config
    if not bundle.capabilities.encoder:
        return _self_attention(bundle, src, tensors, rollout)
    last = tensors[stages.attention("decoder", "cross", cfg.n_decoder_layers - 1, "pattern")][0].mean(0)  # (T, S)
    if not rollout:
        return last.double().numpy()
    length = src.size(1)
    total = torch.eye(length, dtype=torch.float64)
    for layer in range(cfg.n_encoder_layers):  # each later layer multiplies from the left
        mixed = 0.5 * tensors[stages.attention("encoder", "self", layer, "pattern")][0].mean(
            0
        ).double() + 0.5 * torch.eye(length, dtype=torch.float64)
        total = mixed @ total
    return (last.double() @ total).numpy()


def _self_attention(bundle: Bundle, src: torch.Tensor, tensors: dict[str, torch.Tensor], rollout: bool) -> np.ndarray:
    """A decoder-only model's "attention" and "rollout" (see the module's docstring): (output pieces, prompt)."""
    layers = bundle.config.n_decoder_layers
    mean = [
        tensors[stages.attention("decoder", "self", layer, "pattern")][0].mean(0).double() for layer in range(layers)
    ]
    total = torch.eye(mean[-1].size(0), dtype=torch.float64)
    for layer in range(layers - 1 if rollout else 0):  # each later layer multiplies from the left
        total = (0.5 * mean[layer] + 0.5 * torch.eye(total.size(0), dtype=torch.float64)) @ total
    return (mean[-1] @ total)[forced.first_row(bundle, src) :, : src.size(1)].numpy()


def _gradient(
    bundle: Bundle,
    src: torch.Tensor,
    tgt: torch.Tensor,
    produced: list[int],
    rows: list[int],
    iv: Interventions,
    x: torch.Tensor,
) -> torch.Tensor:
    """(B, S, d): batch row b is d f_{rows[b]} / dx at x[b], from one batched pass."""
    inputs = x.clone().requires_grad_(True)
    f = forced.chosen_at(bundle, src, tgt, produced, rows, iv, _at_source(bundle, inputs))  # (B,)
    (grad,) = torch.autograd.grad(f.sum(), inputs)
    return grad.detach()


def _occlusion(
    bundle: Bundle,
    src: torch.Tensor,
    tgt: torch.Tensor,
    produced: list[int],
    rows: list[int],
    iv: Interventions,
    x: torch.Tensor,
    base: torch.Tensor,
) -> np.ndarray:
    length = x.size(1)
    occluded = x.expand(length, -1, -1).clone()  # batch row s: piece s's embedding set to the baseline's
    occluded[torch.arange(length), torch.arange(length)] = base[0]
    patches = _at_source(bundle, occluded)
    full = forced.chosen_at(bundle, src, tgt, produced, rows, iv)  # (R,)
    if len(rows) == 1:  # one output piece: project only its position
        without = forced.chosen_at(bundle, src, tgt, produced, rows * length, iv, patches)[:, None]  # (S, 1)
    else:
        without = forced.chosen(forced.log_probs(bundle, src, tgt, iv, patches), produced)[:, rows]  # (S, R)
    return (full[None, :] - without).T.double().numpy()


def _at_source(bundle: Bundle, value: torch.Tensor) -> dict[str, Patch]:
    """The patch that puts `value` (B, S, d) in place of the source's token embeddings: at the
    encoder's input, or at the decoder's first S positions (the prompt) of a decoder-only model."""
    return {forced.embedding_stage(bundle): Patch(value, range(value.size(1)))}
