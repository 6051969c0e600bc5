"""Beam search that honours the interventions at every step, on greedy decoding's steps (decoding.py).

With the causal mask on, the beams share one KV cache, reordered after each step to follow the surviving
beams; with it off, every step recomputes the whole prefix of each beam.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from .attention import KVCache
from .decoding import _step_logits, allowed, start_tokens
from .interventions import Interventions
from .tokens import PROJECT_SPECIALS, SpecialIds
from .transformer import Transformer


@dataclass(frozen=True)
class Hypothesis:
    """One finished (or cut-off) output of beam search."""

    ids: tuple[int, ...]  # output pieces, without BOS and the piece that ended them
    log_prob: float  # sum of the log-probabilities of the pieces and of the ending piece when finished
    score: float  # log_prob / length**length_penalty, what beams are ranked by
    end: int | None  # the piece that ended the output (EOS, or another of `SpecialIds.ends`); None: cut at the limit

    @property
    def finished(self) -> bool:
        """Ended by the model (False: cut at the maximum length)."""
        return self.end is not None

    @property
    def produced(self) -> list[int]:
        """The pieces produced: the output, then the piece that ended it."""
        return [*self.ids, *([] if self.end is None else [self.end])]


def _normalized(log_prob: float, length: int, length_penalty: float) -> float:
    return log_prob / (max(length, 1) ** length_penalty)


def beam_search(
    model: Transformer,
    memory: torch.Tensor | None,
    src_mask: torch.Tensor | None,
    iv: Interventions,
    beam_size: int,
    max_len: int,
    length_penalty: float = 1.0,
    specials: SpecialIds = PROJECT_SPECIALS,
    prompt: torch.Tensor | None = None,
    on_step: Callable[[int, list[int]], None] | None = None,
) -> list[Hypothesis]:
    """Keep the `beam_size` best partial outputs of one sentence (or continuations of one `prompt`
    (1, P), memory None); return up to `beam_size` hypotheses, best first. `on_step(step, ids)` hears each
    step that leaves beams alive, with the new ids of the best of them.

    Each step ranks the 2k best continuations of all beams ((1 + e)k with e > 1 ids that end, as
    transformers does); one that ends (EOS, or another of `specials.ends`) is finished only if it
    ranks among the first k (as in transformers' beam search), and the search stops once k outputs
    are finished (its early_stopping=True).
    """
    tokens = start_tokens(specials, 1, None if memory is None else memory.device, prompt)  # (k, t)
    if tokens.size(0) != 1 or (memory is not None and memory.size(0) != 1):
        raise ValueError("beam search decodes one sentence at a time")
    first, device = tokens.size(1), tokens.device
    cache = KVCache(first + max_len - 1) if iv.causal_mask else None
    scores = torch.zeros(1, device=device)  # (k,)
    done: list[Hypothesis] = []
    candidates = max(2, 1 + len(specials.ends)) * beam_size  # enough for k live beams if the first k all end
    for step in range(max_len):
        live = tokens.size(0)
        logits = _step_logits(
            model, tokens, None if memory is None else memory.expand(live, -1, -1), src_mask, iv, cache
        )
        log_probs = allowed(logits.float().log_softmax(dim=-1), step, max_len, specials)  # (k, vocab)
        vocab = log_probs.size(-1)
        totals = (scores[:, None] + log_probs).view(-1)
        best, flat = totals.topk(min(candidates, totals.numel()))
        keep_origin: list[int] = []
        keep_piece: list[int] = []
        keep_score: list[float] = []
        for rank, (total, index) in enumerate(zip(best.tolist(), flat.tolist(), strict=True)):
            origin, piece = divmod(index, vocab)
            if piece in specials.ends:
                if rank < beam_size:
                    ids = tuple(tokens[origin, first:].tolist())
                    done.append(Hypothesis(ids, total, _normalized(total, len(ids) + 1, length_penalty), piece))
            elif len(keep_origin) < beam_size:
                keep_origin.append(origin)
                keep_piece.append(piece)
                keep_score.append(total)
        if len(done) >= beam_size or not keep_origin:
            break
        origin_index = torch.tensor(keep_origin, device=device)
        tokens = torch.cat([tokens[origin_index], torch.tensor(keep_piece, device=device)[:, None]], dim=1)
        scores = torch.tensor(keep_score, device=device)
        if cache is not None:
            cache.reorder(origin_index)
        if on_step is not None:
            on_step(step, tokens[0, first:].tolist())  # kept in rank order: the first row is the best
    if len(done) < beam_size:  # cut at max_len: the live beams compete as they are
        for row, total in zip(tokens[:, first:].tolist(), scores.tolist(), strict=True):
            done.append(Hypothesis(tuple(row), total, _normalized(total, len(row), length_penalty), None))
    done.sort(key=lambda h: h.score, reverse=True)
    return done[:beam_size]
