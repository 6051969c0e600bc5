"""The logit lens: what each decoder layer would have the model write, if the layers after it were gone."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ..bundle import Bundle
from ..engine import stages
from ..engine.interventions import Interventions
from ..results import Trace
from . import forced


def logit_lens(
    bundle: Bundle,
    sentence: str,
    output_ids: Sequence[int],
    interventions: Interventions = Interventions(),
    trace: Trace | None = None,
    pieces: Sequence[int] | None = None,
    chat: bool = False,
) -> np.ndarray:
    """(decoder layers, output pieces, vocabulary) log-probabilities under teacher forcing on
    `output_ids`: each decoder layer's output put through what the model applies after its last
    layer (its final norm, if any, and `Transformer.project`: T5's d_model^-0.5 rescale, the output
    projection and its bias). The last layer's are the model's own log-probabilities. For a
    decoder-only model `sentence` is the prompt, and the rows are the positions that chose each
    output piece (the prompt's last, then every output piece's but the last). `trace`: the output's own
    trace, read instead of a pass when it is this input's (`forced.recorded`). `pieces`: those output
    pieces' rows alone, in that order (the whole lens's rows there, up to float rounding: every row is
    normalized and projected on its own). `chat`: the prompt is the sentence as a chat message
    (`forced.inputs`)."""
    bundle.check_interventions(interventions)
    src, tgt, _ = forced.inputs(bundle, sentence, output_ids, chat)
    tensors = forced.recorded(bundle, src, tgt, interventions, trace)
    model, cfg = bundle.model, bundle.config
    first = forced.first_row(bundle, src)
    rows = torch.arange(first, tgt.size(1)) if pieces is None else torch.tensor([first + p for p in pieces])
    layers = [
        tensors[stages.layer_output("decoder", layer, cfg.norm_first)][0, rows] for layer in range(cfg.n_decoder_layers)
    ]
    with torch.inference_mode():
        logits = model.project(model.decoder.final_norm(torch.stack(layers)))  # (L, T, vocab)
        return logits.float().log_softmax(dim=-1).numpy()
