"""Teacher-forced passes the analyses share: a sentence and a fixed output in, the log-probability
of every output piece out, with hook points patched as asked and gradients when wanted."""

from __future__ import annotations

from contextlib import contextmanager, nullcontext
from typing import Iterator, Mapping, Sequence

import torch

from ..bundle import Bundle
from ..engine.hooks import Patch, patching, recording
from ..engine.interventions import Interventions
from ..errors import InputError
from ..traces import decoder_input


def inputs(bundle: Bundle, sentence: str, output_ids: Sequence[int]) -> tuple[torch.Tensor, torch.Tensor, list[int]]:
    """(source ids (1, S), decoder input (1, T), the output pieces) for a model that translates."""
    if not bundle.capabilities.translates:
        raise InputError(f"{bundle.name} does not translate: there is no output to explain.")
    _, src_ids, _ = bundle.encode_source(sentence)
    produced = list(output_ids)[: bundle.config.max_len]
    if not produced:
        raise InputError("There is no output to explain.")
    return torch.tensor([src_ids]), torch.tensor([decoder_input(bundle.specials.bos, produced)]), produced


def log_probs(bundle: Bundle, src: torch.Tensor, tgt: torch.Tensor, iv: Interventions,
              patches: Mapping[str, Patch] | None = None) -> torch.Tensor:
    """(B, T, vocab) log-probabilities of a teacher-forced pass (batch rows repeat src and tgt to
    the patches' batch size), with gradients when a patch value requires them."""
    batch = max([1, *(p.value.size(0) for p in (patches or {}).values())])
    src, tgt = src.expand(batch, -1), tgt.expand(batch, -1)
    with _pass(patches):
        return bundle.model(src, tgt, iv).float().log_softmax(dim=-1)


def chosen_at(bundle: Bundle, src: torch.Tensor, tgt: torch.Tensor, produced: Sequence[int], rows: Sequence[int],
              iv: Interventions, patches: Mapping[str, Patch] | None = None) -> torch.Tensor:
    """(B,): batch row b's log-probability of output piece rows[b], one teacher-forced pass with the
    output projection applied at those positions only (the vocabulary may be large), with gradients
    when a patch value requires them."""
    model, batch = bundle.model, len(rows)
    if iv.causal_mask:  # no position sees a later one: the decoder input past the last row asked changes nothing
        tgt = tgt[:, :max(rows) + 1]
    src, tgt = src.expand(batch, -1), tgt.expand(batch, -1)
    where, wanted = torch.arange(batch), torch.tensor([produced[row] for row in rows])
    with _pass(patches):
        memory, src_mask = model.encode(src, iv) if bundle.capabilities.encoder else (None, None)
        states = model.decode(tgt, memory, src_mask, iv, project=False)[where, torch.tensor(list(rows))]  # (B, d)
        return model.project(states).float().log_softmax(dim=-1)[where, wanted]


@contextmanager
def _pass(patches: Mapping[str, Patch] | None) -> Iterator[None]:
    """A teacher-forced pass with `patches` active: gradients on when a patch value requires them,
    else inference mode."""
    grad = any(p.value.requires_grad for p in (patches or {}).values())
    with (torch.enable_grad() if grad else torch.inference_mode()), \
            (patching(patches) if patches else nullcontext()):
        yield


def chosen(log_probs_: torch.Tensor, produced: Sequence[int]) -> torch.Tensor:
    """(B, T): each row's log-probability of output piece t at position t."""
    index = torch.tensor(list(produced)).expand(log_probs_.size(0), -1).unsqueeze(-1)
    return log_probs_.gather(-1, index).squeeze(-1)


def recorded(bundle: Bundle, src: torch.Tensor, tgt: torch.Tensor, iv: Interventions) -> dict[str, torch.Tensor]:
    """Every hook point's tensor in one teacher-forced pass."""
    with torch.inference_mode(), recording() as recorder:
        bundle.model(src, tgt, iv)
    return recorder.tensors


def source_embedding(bundle: Bundle, src: torch.Tensor, iv: Interventions, stage: str) -> torch.Tensor:
    """The source embedding stage `stage` (a hook point's name) of `src`, from the encoder alone."""
    with torch.inference_mode(), recording() as recorder:
        bundle.model.encode(src, iv)
    return recorder.tensors[stage]


def work(bundle: Bundle, rows: int, positions: int, gradients: bool = False) -> float:
    """What a teacher-forced pass costs, in parameter x position products: `rows` batch rows of
    `positions` positions each (source and output) through every layer's weights, three times over
    with gradients (forward, then backward through activations and weights)."""
    layer_weights = sum(p.numel() for name, p in bundle.model.named_parameters() if ".layers." in name)
    return float(rows) * positions * layer_weights * (3 if gradients else 1)
