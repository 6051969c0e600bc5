"""Which source piece made the model write each output piece: five attribution methods, each defined
exactly so it can be checked.

f_t is the log-probability of output piece t under teacher forcing on the given output; x is the
source's token embeddings as the encoder receives them (`src_embed.hook_scaled`: scaled when the
model scales them, positions not included); a row of the result is one output piece, a column one
source piece.

    attention             the last decoder layer's cross-attention row, mean over heads
    rollout               attention rollout (Abnar and Zuidema, 2020): R = Â_{L-1} ... Â_0 over the
                          encoder layers with Â_l = 0.5 mean_heads(A_l) + 0.5 I; row t is the
                          "attention" row times R
    gradient              input x gradient: x_s . df_t/dx_s, summed over the embedding dimension
    integrated-gradients  x_s . mean over k of df_t/dx_s at (k + 1/2)/steps of the way from the
                          baseline x = 0 (positions kept) to x, summed over the embedding dimension;
                          a row sums to f_t(x) - f_t(0) within the midpoint rule's error
    occlusion             f_t(x) - f_t(x with x_s set to 0)
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from ..bundle import Bundle
from ..engine import stages
from ..engine.hooks import Patch
from ..engine.interventions import Interventions
from ..errors import InputError
from . import forced

METHODS = ("attention", "rollout", "gradient", "integrated-gradients", "occlusion")
EMBEDDING = stages.embedding("scaled")


def attribute(bundle: Bundle, sentence: str, output_ids: Sequence[int], method: str,
              interventions: Interventions = Interventions(), steps: int = 32) -> np.ndarray:
    """(output pieces, source pieces): how much each source piece contributed to each output piece's
    log-probability, by `method` (one of METHODS, defined in this module's docstring)."""
    if method not in METHODS:
        raise InputError(f"Unknown attribution method {method!r}: use one of {', '.join(METHODS)}.")
    bundle.check_interventions(interventions)
    src, tgt, produced = forced.inputs(bundle, sentence, output_ids)
    if method in ("attention", "rollout"):
        return _attention(bundle, src, tgt, interventions, rollout=method == "rollout")
    x = forced.recorded(bundle, src, tgt, interventions)[EMBEDDING].clone()  # (1, S, d)
    if method == "occlusion":
        return _occlusion(bundle, src, tgt, produced, interventions, x)
    if method == "gradient":
        return (_gradient(bundle, src, tgt, produced, interventions, x) * x).sum(-1).numpy()
    if steps < 1:
        raise InputError("Integrated gradients needs at least one step.")
    total = torch.zeros(len(produced), *x.shape[1:])
    for k in range(steps):
        total += _gradient(bundle, src, tgt, produced, interventions, x * ((k + 0.5) / steps))
    return (total / steps * x).sum(-1).numpy()


def _attention(bundle: Bundle, src: torch.Tensor, tgt: torch.Tensor, iv: Interventions, rollout: bool) -> np.ndarray:
    tensors = forced.recorded(bundle, src, tgt, iv)
    cfg = bundle.config
    last = tensors[stages.attention("decoder", "cross", cfg.n_decoder_layers - 1, "pattern")][0].mean(0)  # (T, S)
    if not rollout:
        return last.double().numpy()
    length = src.size(1)
    total = torch.eye(length, dtype=torch.float64)
    for layer in range(cfg.n_encoder_layers):  # each later layer multiplies from the left
        mixed = 0.5 * tensors[stages.attention("encoder", "self", layer, "pattern")][0].mean(0).double() \
            + 0.5 * torch.eye(length, dtype=torch.float64)
        total = mixed @ total
    return (last.double() @ total).numpy()


def _gradient(bundle: Bundle, src: torch.Tensor, tgt: torch.Tensor, produced: list[int], iv: Interventions,
              x: torch.Tensor) -> torch.Tensor:
    """(T, S, d): row t is df_t/dx at x, from one batched pass (row t of the batch is output piece t's)."""
    rows = x.expand(len(produced), -1, -1).clone().requires_grad_(True)
    f = forced.chosen(forced.log_probs(bundle, src, tgt, iv, {EMBEDDING: Patch(rows)}), produced)  # (T, T)
    (grad,) = torch.autograd.grad(f.diagonal().sum(), rows)
    return grad.detach()


def _occlusion(bundle: Bundle, src: torch.Tensor, tgt: torch.Tensor, produced: list[int], iv: Interventions,
               x: torch.Tensor) -> np.ndarray:
    length = x.size(1)
    occluded = x.expand(length, -1, -1).clone()  # batch row s: piece s's embedding set to zero
    occluded[torch.arange(length), torch.arange(length)] = 0.0
    full = forced.chosen(forced.log_probs(bundle, src, tgt, iv), produced)[0]  # (T,)
    without = forced.chosen(forced.log_probs(bundle, src, tgt, iv, {EMBEDDING: Patch(occluded)}), produced)  # (S, T)
    return (full[None, :] - without).T.double().numpy()
