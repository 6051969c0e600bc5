"""Sampling the next piece instead of taking the most likely one: temperature, top-k and top-p, applied in that
order, then one draw from what is left, with a random generator of the run's own (never torch's global one,
which another session's run would move between two of this run's draws).

The three act on one ranking of the vocabulary: by score, highest first, pieces of equal score in the order of
their ids (as greedy's argmax takes the first of equal maxima). Top-k keeps the ranking's first k pieces; top-p
keeps the shortest start of what top-k kept whose probability, renormalized over it, reaches p: the piece that
crosses p is kept, and of pieces tied in probability only those the id order puts first, so the set is always
a start of the one ranking, and top-k = 1 is greedy decoding. The draw is the inverse of the cumulative
distribution over the ranking: a uniform number u in [0, 1) picks the first kept piece whose cumulative
probability exceeds u, so a drawn number can be shown on the bars it fell on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .draws import SHOWN_PIECES, Draw, Sampling

PREFIX = 256  # the ranking's first pieces found without sorting the whole vocabulary (a real one: 49,152)


@dataclass(frozen=True)
class Cut:
    """One step's distribution through the three, for one row of scores (vocab,): the start of the ranking (ids,
    best first: every piece kept by the cuts, or when nothing is cut at least PREFIX of them, or all), the
    probabilities of the model (softmax of the scores) and after temperature, both over the whole vocabulary, how
    many pieces top-k keeps, then top-p, and whether every piece that may come is kept (nothing cut)."""

    ranking: torch.Tensor
    model: torch.Tensor
    tempered: torch.Tensor
    after_top_k: int
    kept: int
    uncut: bool

    def sampled(self) -> torch.Tensor:
        """The distribution drawn from (vocab,): the tempered probabilities of the kept pieces, renormalized."""
        if self.uncut:
            return self.tempered
        kept = self.ranking[: self.kept]
        probs = torch.zeros_like(self.tempered)
        probs[kept] = self.tempered[kept] / self.tempered[kept].sum()
        return probs

    def kept_mass(self) -> float:
        """The probability after temperature of the kept pieces."""
        if self.uncut:
            return float(self.tempered.double().sum())
        return float(self.tempered[self.ranking[: self.kept]].double().sum())


def ranking(scores: torch.Tensor, first: int | None = None) -> torch.Tensor:
    """The ids by score, highest first, equal scores the lower id first; with `first`, the start of it that holds
    the first `first` and every piece tied with the last of them (no sort of the whole vocabulary)."""
    if first is None or first >= scores.numel():
        return torch.sort(scores, descending=True, stable=True).indices
    least = torch.topk(scores, first).values[-1]
    candidates = torch.nonzero(scores >= least).squeeze(1)  # ids in order, those tied at the least all in
    return candidates[torch.sort(scores[candidates], descending=True, stable=True).indices]


def cut(scores: torch.Tensor, sampling: Sampling, whole: bool = False) -> Cut:
    """Temperature, then top-k, then top-p on one row of scores (vocab,), banned pieces at -inf (never kept);
    `whole`: the whole ranking, else its start (the kept pieces, PREFIX at least when the cuts keep more)."""
    scores = scores.float()
    tempered = torch.softmax(scores / sampling.temperature, dim=-1)
    possible = max(1, int(torch.isfinite(scores).sum()))
    after_top_k = min(sampling.top_k or possible, possible)
    ranked = ranking(scores, None if whole else max(PREFIX, sampling.top_k))
    kept = _top_p(tempered, ranked, after_top_k, sampling)
    if kept is None:  # top-p keeps more than the start of the ranking holds
        ranked = ranking(scores)
        kept = _top_p(tempered, ranked, after_top_k, sampling)
    assert kept is not None
    model = torch.softmax(scores, dim=-1)
    return Cut(ranked, model, tempered, after_top_k, kept, uncut=kept == possible and not sampling.top_k)


def _top_p(tempered: torch.Tensor, ranked: torch.Tensor, after_top_k: int, sampling: Sampling) -> int | None:
    """How many pieces top-p keeps of the ranking's first `after_top_k` (top-k's), renormalized over them (over the
    whole distribution without top-k); None when that is more than `ranked`, the start of the ranking, holds."""
    if sampling.top_p >= 1.0:
        return after_top_k
    probs = tempered[ranked[:after_top_k]].double()
    if sampling.top_k:
        probs = probs / probs.sum()
    before = torch.cumsum(probs, dim=0) - probs  # the probability ranked above each piece
    kept = int((before < sampling.top_p).sum())
    if kept == len(probs) and after_top_k > len(ranked):
        return None
    return max(1, kept)


@dataclass
class Sampler:
    """Draws the next piece of each row from its scores (B, vocab), with its own generator seeded by
    `sampling.seed`: one seed, one answer, whatever else runs. Each draw of the first row is kept in `draws`."""

    sampling: Sampling
    draws: list[Draw] = field(default_factory=list)
    generator: torch.Generator = field(init=False)

    def __post_init__(self) -> None:
        self.generator = torch.Generator().manual_seed(self.sampling.seed)

    @classmethod
    def of(cls, sampling: Sampling | None) -> Sampler | None:
        """A sampler of its own for one decoding that samples (None: one that does not)."""
        return None if sampling is None else cls(sampling)

    def __call__(self, scores: torch.Tensor) -> torch.Tensor:
        chosen = []
        for row, row_scores in enumerate(scores):
            uniform = float(torch.rand((), generator=self.generator, dtype=torch.float64))
            step = cut(row_scores, self.sampling)
            rank = drawn_rank(step, uniform)
            if rank is None:  # drawn past the start of the ranking found: the whole of it
                step = cut(row_scores, self.sampling, whole=True)
                rank = drawn_rank(step, uniform)
            assert rank is not None
            chosen.append(int(step.ranking[rank]))
            if row == 0:
                self.draws.append(_draw(step, uniform, rank))
        return torch.tensor(chosen, dtype=torch.long, device=scores.device)


def drawn_ranks(step: Cut, uniforms: torch.Tensor) -> torch.Tensor:
    """The rank drawn by each uniform number in [0, 1) of `uniforms` (float64): the first kept piece whose
    cumulative probability exceeds it, most likely first; -1 for one drawn past the start of the ranking `step`
    holds (it holds every kept piece unless nothing is cut)."""
    known = step.ranking if step.uncut else step.ranking[: step.kept]
    cumulative = torch.cumsum(step.sampled()[known].double(), dim=0)
    total = step.kept_mass() if step.uncut else float(cumulative[-1])
    ranks = torch.searchsorted(cumulative, uniforms * total, right=True)
    if step.uncut and len(known) < step.kept:
        return torch.where(ranks < len(known), ranks, -1)
    return ranks.clamp(max=len(known) - 1)


def drawn_rank(step: Cut, uniform: float) -> int | None:
    """`drawn_ranks` of one number; None for one drawn past the start of the ranking `step` holds."""
    rank = int(drawn_ranks(step, torch.tensor([uniform], dtype=torch.float64))[0])
    return None if rank < 0 else rank


def _draw(step: Cut, uniform: float, rank: int) -> Draw:
    shown = list(range(min(SHOWN_PIECES, step.ranking.numel())))
    if rank not in shown:
        shown.append(rank)
    ids = step.ranking[shown]
    sampled = step.sampled()
    return Draw(
        uniform=uniform,
        rank=rank,
        after_top_k=step.after_top_k,
        kept=step.kept,
        kept_mass=step.kept_mass(),
        ids=tuple(ids.tolist()),
        model=tuple(step.model[ids].tolist()),
        tempered=tuple(step.tempered[ids].tolist()),
        sampled=tuple(sampled[ids].tolist()),
    )
