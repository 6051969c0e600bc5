"""Direct logit attribution: an output piece's logit split into what each attention head, each feed-forward block,
the embeddings and the biases wrote into the residual stream at the position that predicts it.

The stream there is a sum of parts (`model.analysis.stream`); with every norm's divisor frozen at that position,
each part's image through the rest of the decoder, the final norm and the output projection is its share of the
logit, and the shares add up to the model's own logit. An encoder-decoder's encoder reaches the decoder only
through cross-attention: its work is in the cross-attention heads' shares."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from i18n import later

from ..bundle import Bundle
from ..engine import stages
from ..engine.interventions import Interventions
from ..engine.transformer import layers_of
from ..errors import InputError
from ..results import Trace
from . import forced
from .stream import (
    DTYPE,
    FrozenNorm,
    attention_block,
    embeddings,
    final_norm,
    head_writes,
    layer_events,
    output_bias,
    unembedding,
    unembedding_row,
)

EMBEDDINGS, BIAS = "embeddings", "bias"
WRITES_TOP = 10  # the pieces a head most promotes, and most suppresses


@dataclass(frozen=True)
class Parts:
    """The stream at one decoder position as a sum: `vectors` (parts, d) labelled by `labels`, and `bias`, what no
    part owns (output biases, the norms' shifts); each as it reaches the output projection."""

    labels: list[Hashable]
    vectors: torch.Tensor
    bias: torch.Tensor


def _carry(blocks: list[torch.Tensor], bias: torch.Tensor, norm: FrozenNorm | None, row: int) -> torch.Tensor:
    """Every part so far (`blocks` of (parts, d), in place) through a frozen norm of the stream; returns the bias
    through it."""
    if norm is None:
        return bias
    blocks[:] = [norm.at(block, row) for block in blocks]
    bias = norm.at(bias, row)
    return bias if norm.shift is None else bias + norm.shift


def stream_parts(bundle: Bundle, tensors: Mapping[str, torch.Tensor], row: int) -> Parts:
    """The decoder stream at `row` as the output projection reads it (after the final norm), split into its parts,
    from a recorded pass's `tensors`. A knocked-out head's part is zero: its context was recorded after the
    knock-out."""
    cfg = bundle.config
    labels: list[Hashable] = [EMBEDDINGS]
    blocks = [embeddings(bundle, tensors)[row][None]]
    bias = torch.zeros(cfg.d_model, dtype=DTYPE)
    for layer, module in enumerate(layers_of(bundle.model.decoder)):
        for event in layer_events(bundle, tensors, layer):
            if event.write is None:
                bias = _carry(blocks, bias, event.norm, row)
                continue
            kind, post = event.write.kind, event.write.post
            if kind == "ffn":
                written = tensors[stages.ffn("decoder", layer, "out")][0, row][None].to(DTYPE)
                labels.append(("decoder", "ffn", layer))
                extra = torch.zeros(cfg.d_model, dtype=DTYPE)
            else:
                block = attention_block(module, kind)
                context = tensors[stages.attention("decoder", kind, layer, "context")][0, :, row]  # (h, d_head)
                written = head_writes(context[:, None], block)[:, 0]
                labels.extend(("decoder", kind, layer, head) for head in range(len(written)))
                extra = output_bias(block, cfg.d_model)
            if post is not None:
                written, extra = post.at(written, row), post.at(extra, row)
            blocks.append(written)
            bias = bias + extra
    bias = _carry(blocks, bias, final_norm(bundle, tensors), row)
    return Parts(labels, torch.cat(blocks), bias)


@dataclass(frozen=True)
class LogitShares:
    """One output piece's logit split into shares (`shares`, indexed as `logit_contributions` says), the model's
    own logit, and the stream's parts, which `writes` reads."""

    shares: pd.Series
    logit: float
    parts: Parts
    piece_id: int

    def writes(self, bundle: Bundle, component: Hashable, top: int = WRITES_TOP) -> pd.DataFrame:
        """What one part (a head or a feed-forward block, as the shares' index names it) writes at this position:
        its vector through the frozen final norm and the output projection, as a change to every piece's logit;
        the `top` pieces it most promotes, then the `top` it most suppresses (columns piece, id, change)."""
        if component not in self.parts.labels:
            raise InputError(later("{part} is no part of this model.", part=repr(component)))
        change = unembedding(bundle, self.parts.vectors[self.parts.labels.index(component)])
        order = torch.argsort(change, descending=True)
        ids = [*order[:top].tolist(), *reversed(order[-top:].tolist())]
        return pd.DataFrame(
            {"piece": bundle.tokenizer.pieces(ids), "id": ids, "change": change[ids].float().numpy()},
        )


def shares_at(bundle: Bundle, tensors: Mapping[str, torch.Tensor], row: int, piece_id: int) -> LogitShares:
    """Piece `piece_id`'s logit at decoder `row` of a recorded pass, split into shares."""
    parts = stream_parts(bundle, tensors, row)
    direction, logits_bias = unembedding_row(bundle, piece_id)
    values = (parts.vectors @ direction).numpy()
    rest = float(parts.bias @ direction) + logits_bias
    index = pd.Index([*parts.labels, BIAS], dtype=object, tupleize_cols=False)
    shares = pd.Series(np.append(values, rest), index=index, name="share")
    logit = float(tensors[stages.LOGITS][0, row, piece_id])
    return LogitShares(shares, logit, parts, piece_id)


def logit_shares(
    bundle: Bundle,
    text: str,
    output_ids: Sequence[int],
    piece: int,
    interventions: Interventions = Interventions(),
    chat: bool = False,
    trace: Trace | None = None,
) -> LogitShares:
    """Output piece `piece`'s (its index in `output_ids`, from 0) logit under teacher forcing on `output_ids`,
    split into shares (see `logit_contributions`). `trace`: the output's own trace, read instead of a pass when it
    is this input's (`forced.recorded`)."""
    return shares_at(bundle, *forced.recorded_piece(bundle, text, output_ids, piece, interventions, chat, trace))


def logit_contributions(
    bundle: Bundle,
    text: str,
    output_ids: Sequence[int],
    piece: int,
    interventions: Interventions = Interventions(),
    chat: bool = False,
) -> pd.Series:
    """Output piece `piece`'s logit (its index in `output_ids`, from 0, under teacher forcing on `output_ids`)
    split into the share of every part that writes into the decoder's residual stream at the position that
    predicts it; the shares add up to the model's own logit. Indexed by:

    - ("decoder", kind, layer, head): each attention head ("self", or "cross" in an encoder-decoder, whose
      encoder's work reaches the decoder this way), as `Interventions.ablate` names heads (0-based);
    - ("decoder", "ffn", layer): each feed-forward block;
    - "embeddings": the token and position embeddings, as the model adds them (and normalizes them, BERT's way);
    - "bias": what is no part's (the attention blocks' output biases, the norms' shifts, the logits' bias).

    Every norm's divisor is frozen at its value for that position: the final norm's, a post-LN layer's three,
    Gemma 3's norms on each sublayer's output."""
    return logit_shares(bundle, text, output_ids, piece, interventions, chat).shares
