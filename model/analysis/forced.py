"""Teacher-forced passes the analyses share: a sentence and a fixed output in, the log-probability
of every output piece out, with hook points patched as asked and gradients when wanted.

The "source" is what the model reads before it writes: an encoder-decoder's source sentence (the
encoder's input; T5's task prefix included), or a decoder-only model's prompt, which is fed to the
decoder ahead of the output; an instruct model's prompt may be a chat message (`chat`: the sentence
wrapped by its chat template, as `Bundle.generate(chat=True)` reads it). Output piece t is then
predicted at decoder row `first_row + t`: row t after the start piece, row P - 1 + t after a prompt
of P pieces."""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext

import torch

from i18n import later

from ..bundle import Bundle
from ..engine import stages
from ..engine.hooks import Patch, patching, recording
from ..engine.interventions import Interventions
from ..errors import InputError
from ..results import Trace


def inputs(
    bundle: Bundle, sentence: str, output_ids: Sequence[int], chat: bool = False
) -> tuple[torch.Tensor, torch.Tensor, list[int]]:
    """(source or prompt ids (1, S), decoder input (1, T'), the output pieces) for a model that
    writes pieces: an encoder-decoder's decoder input is the start piece and the output but its
    last piece; a decoder-only model's is the prompt (with `chat`, the sentence as a user's chat
    message wrapped by the checkpoint's chat template), then the output but its last piece."""
    if not bundle.capabilities.decoder:
        raise InputError(later("{name} does not translate: there is no output to explain.", name=bundle.name))
    produced = list(output_ids)[: bundle.config.max_len]
    if not produced:
        raise InputError(later("There is no output to explain."))
    src_ids = bundle.read_input(sentence, len(produced), chat)  # as Bundle.teacher_forced and Bundle.score read it
    return torch.tensor([src_ids]), torch.tensor([bundle.decoder_input_ids(src_ids, produced)]), produced


def first_row(bundle: Bundle, src: torch.Tensor) -> int:
    """The decoder row that predicts output piece 0: 0 after an encoder-decoder's start piece, the
    prompt's last position for a decoder-only model (`src` is then the prompt)."""
    return 0 if bundle.capabilities.encoder else src.size(1) - 1


def embedding_stage(bundle: Bundle, stage: str = "scaled") -> str:
    """The hook point of an embedding stage of the source: the encoder's input, or for a
    decoder-only model the decoder's (whose first positions are the prompt)."""
    return stages.embedding(stage, "source" if bundle.capabilities.encoder else "target")


def log_probs(
    bundle: Bundle, src: torch.Tensor, tgt: torch.Tensor, iv: Interventions, patches: Mapping[str, Patch] | None = None
) -> torch.Tensor:
    """(B, T, vocab) log-probabilities of the output pieces in a teacher-forced pass (batch rows
    repeat src and tgt to the patches' batch size), with gradients when a patch value requires them."""
    batch = max([1, *(p.value.size(0) for p in (patches or {}).values())])
    first = first_row(bundle, src)
    src, tgt = src.expand(batch, -1), tgt.expand(batch, -1)
    with _pass(patches):
        return bundle.model(src, tgt, iv)[:, first:].float().log_softmax(dim=-1)


def decoder_rows(
    bundle: Bundle, src: torch.Tensor, tgt: torch.Tensor, rows: Sequence[int], iv: Interventions
) -> torch.Tensor:
    """The decoder input a pass needs for output pieces `rows`: with the causal mask on no position
    sees a later one, so the input past the last row asked changes nothing and is left out."""
    return tgt[:, : first_row(bundle, src) + max(rows) + 1] if iv.causal_mask else tgt


def chosen_at(
    bundle: Bundle,
    src: torch.Tensor,
    tgt: torch.Tensor,
    produced: Sequence[int],
    rows: Sequence[int],
    iv: Interventions,
    patches: Mapping[str, Patch] | None = None,
) -> torch.Tensor:
    """(B,): batch row b's log-probability of output piece rows[b], one teacher-forced pass with the
    output projection applied at those positions only (the vocabulary may be large), with gradients
    when a patch value requires them."""
    model, batch = bundle.model, len(rows)
    tgt = decoder_rows(bundle, src, tgt, rows, iv)
    at = torch.tensor([first_row(bundle, src) + row for row in rows])
    src, tgt = src.expand(batch, -1), tgt.expand(batch, -1)
    where, wanted = torch.arange(batch), torch.tensor([produced[row] for row in rows])
    with _pass(patches):
        memory, src_mask = model.encode(src, iv) if bundle.capabilities.encoder else (None, None)
        states = model.decode(tgt, memory, src_mask, iv, project=False)[where, at]  # (B, d)
        return model.project(states).float().log_softmax(dim=-1)[where, wanted]


@contextmanager
def _pass(patches: Mapping[str, Patch] | None) -> Iterator[None]:
    """A teacher-forced pass with `patches` active: gradients on when a patch value requires them,
    else inference mode."""
    grad = any(p.value.requires_grad for p in (patches or {}).values())
    with torch.enable_grad() if grad else torch.inference_mode(), patching(patches) if patches else nullcontext():
        yield


def chosen(log_probs_: torch.Tensor, produced: Sequence[int]) -> torch.Tensor:
    """(B, T): each row's log-probability of output piece t at position t."""
    index = torch.tensor(list(produced)).expand(log_probs_.size(0), -1).unsqueeze(-1)
    return log_probs_.gather(-1, index).squeeze(-1)


def recorded(
    bundle: Bundle, src: torch.Tensor, tgt: torch.Tensor, iv: Interventions, trace: Trace | None = None
) -> dict[str, torch.Tensor]:
    """Every hook point's tensor in one teacher-forced pass; read from `trace` instead when it is a
    recording of this very input under the same switches with the causal mask on (a translation's or
    continuation's own trace: its rows are then that pass's)."""
    if trace is not None and iv.causal_mask and trace.interventions == iv and _same_input(bundle, trace, src, tgt):
        with warnings.catch_warnings():  # a cached trace's arrays are read-only, and these are only read
            warnings.simplefilter("ignore", UserWarning)
            return {name: torch.from_numpy(array) for name, array in trace.tensors.items()}
    with torch.inference_mode(), recording() as recorder:
        bundle.model(src, tgt, iv)
    return recorder.tensors


def recorded_piece(
    bundle: Bundle,
    sentence: str,
    output_ids: Sequence[int],
    piece: int,
    iv: Interventions,
    chat: bool = False,
    trace: Trace | None = None,
) -> tuple[dict[str, torch.Tensor], int, int]:
    """(every hook point's tensor, the decoder row that predicts output piece `piece`, its id): one teacher-forced
    pass on `output_ids` under `iv` (`trace`, the output's own, read instead when it is this input's)."""
    bundle.check_interventions(iv)
    src, tgt, produced = inputs(bundle, sentence, output_ids, chat)
    if not 0 <= piece < len(produced):
        raise InputError(later("There is no piece {n} in an output of {total}.", n=piece + 1, total=len(produced)))
    return recorded(bundle, src, tgt, iv, trace), first_row(bundle, src) + piece, produced[piece]


def _same_input(bundle: Bundle, trace: Trace, src: torch.Tensor, tgt: torch.Tensor) -> bool:
    fed = list(trace.tgt_ids) == tgt[0].tolist()
    return fed and (list(trace.src_ids) == src[0].tolist() if bundle.capabilities.encoder else True)


def source_embedding(bundle: Bundle, src: torch.Tensor, iv: Interventions, stage: str) -> torch.Tensor:
    """The embedding stage `stage` (a hook point's name) of the source or prompt `src`, from the
    embedding layer alone (the encoder's, or a decoder-only model's)."""
    model = bundle.model
    embed = model.src_embed if bundle.capabilities.encoder else model.tgt_embed
    with torch.inference_mode(), recording() as recorder:
        embed(src, iv.positional_encoding, use_scale=iv.scale_embeddings)
    return recorder.tensors[stage]


def work(bundle: Bundle, rows: int, positions: int, gradients: bool = False) -> float:
    """What a teacher-forced pass costs, in parameter x position products: `rows` batch rows of
    `positions` positions each (source and output) through every layer's weights, three times over
    with gradients (forward, then backward through activations and weights)."""
    layer_weights = sum(p.numel() for name, p in bundle.model.named_parameters() if ".layers." in name)
    return float(rows) * positions * layer_weights * (3 if gradients else 1)
