"""Attention sinks: how much attention lands on the first piece, per layer and head, and how large the
residual stream is at each position (the first piece's usually stands out)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..engine import stages
from ..results import Trace

SINK = 0.5  # a head whose queries put at least this share on the first piece, on average, is a sink
QUIET = 0.15  # a layer whose heads put less than this share there, on average, barely uses the first piece


@dataclass(frozen=True)
class Sinks:
    """One block's sink figures on one text."""

    stack: str
    shares: np.ndarray  # (layers, heads) mean of the weight on key 0 over the queries after the first that see it
    norms: np.ndarray  # (layers + 1, positions) residual stream norm: the embeddings', then each layer's output
    first_norm_ratio: float  # the first piece's norm over the median of the others, at the last layer (NaN: one piece)
    seeing: np.ndarray  # (layers,) how many queries after the first can see the first piece (a window hides it)

    @property
    def sink_heads(self) -> int:
        """Heads whose mean share is at least SINK."""
        return int((self.shares >= SINK).sum())

    @property
    def mean_share(self) -> float:
        """Share of all attention (every head, every query after the first) on the first piece."""
        return float(self.shares.mean())

    @property
    def layer_shares(self) -> np.ndarray:
        """(layers,) each layer's share on the first piece: the mean over its heads."""
        return self.shares.mean(axis=1)

    @property
    def norm_ratios(self) -> np.ndarray:
        """(layers + 1,) the first position's residual norm over the median of the others', row by row (the
        embeddings, then after each layer); NaN with one piece."""
        if self.norms.shape[1] < 2:
            return np.full(self.norms.shape[0], np.nan)
        return self.norms[:, 0] / np.median(self.norms[:, 1:], axis=1)

    @property
    def windowed(self) -> tuple[int, ...]:
        """Layers (from 0) where a sliding window hides the first piece from some of the queries."""
        after_first = max(self.norms.shape[1] - 1, 1)  # the queries after the first, one per position
        return tuple(int(layer) for layer in np.flatnonzero(self.seeing < after_first))


def first_seen(queries: int, window: int = 0) -> slice:
    """The queries whose weight on the first piece a share averages: every query after the first (the
    first query of a causal block can only see itself) that a sliding window of `window` pieces (0: none)
    lets see it (query q sees key 0 while q < window); the one query when there is only one."""
    if queries <= 1:
        return slice(0, queries)
    stop = min(queries, window) if window else queries
    return slice(1, max(stop, 1))


def first_share(pattern: np.ndarray, window: int = 0) -> np.ndarray:
    """(heads,) one layer's (heads, queries, keys) pattern: each head's weight on key 0 averaged over the
    queries of `first_seen`; NaN for a head none of whose queries can see it."""
    rows = pattern[:, first_seen(pattern.shape[1], window), 0]
    if rows.shape[1] == 0:
        return np.full(pattern.shape[0], np.nan)
    return rows.mean(axis=1)


def first_shares(patterns: list[np.ndarray], windows: Sequence[int] = ()) -> np.ndarray:
    """(layers, heads): each head's weight on key 0, averaged over its queries after the first (the first
    query of a causal block can only see itself) that can see it (`windows`: a sliding window per layer,
    0 for none; Gemma 3's); over every query when there is one."""
    return np.stack(
        [first_share(pattern, windows[layer] if windows else 0) for layer, pattern in enumerate(patterns)]
    ).astype(np.float64)


def residual_norms(trace: Trace, stack: str, norm_first: bool) -> np.ndarray:
    """(layers + 1, positions) the length of the residual stream at every position: the stack's input
    (the embeddings) and then each layer's output."""
    side = "source" if stack == "encoder" else "target"
    rows = [trace.tensor(stages.embedding("sum", side))[0]]
    layers = trace.n_layers(stack)
    rows += [trace.tensor(stages.layer_output(stack, layer, norm_first))[0] for layer in range(layers)]
    return np.stack([np.linalg.norm(r.astype(np.float32), axis=-1) for r in rows]).astype(np.float64)


def sinks(trace: Trace, stack: str, norm_first: bool, windows: Sequence[int] = ()) -> Sinks:
    """Sink shares of `stack`'s self-attention and the residual norms of its positions on `trace`
    (`windows`: the decoder's sliding window per layer, whose queries past it cannot see the first piece)."""
    patterns = [trace.pattern(stack, "self", layer) for layer in range(trace.n_layers(stack))]
    norms = residual_norms(trace, stack, norm_first)
    last = norms[-1]
    ratio = float(last[0] / np.median(last[1:])) if last.size > 1 else float("nan")
    seen = [first_seen(p.shape[1], windows[layer] if windows else 0) for layer, p in enumerate(patterns)]
    seeing = np.array([rows.stop - rows.start for rows in seen])
    return Sinks(stack, first_shares(patterns, windows), norms, ratio, seeing)


@dataclass(frozen=True)
class LayerSummary:
    """What a sink chart says layer by layer, for a paragraph to quote."""

    weakest: int  # the layer (from 0) whose heads put the least on the first piece
    strongest: int  # the one that puts the most
    later: tuple[int, int]  # the later half of the layers: (first, last), from 0
    later_range: tuple[float, float]  # their shares' lowest and highest
    quiet: tuple[tuple[int, int], ...]  # runs of layers (first, last) whose share is under QUIET
    peak_ratio: (
        int  # the row of norm_ratios (0: the embeddings, l: after layer l) where the first piece stands out most
    )


def summary(found: Sinks) -> LayerSummary:
    """The layers to name in a sentence about `found`: the weakest and strongest, the later half's range, the
    quiet runs and where the first position's residual vector stands out most."""
    shares = np.nan_to_num(found.layer_shares, nan=0.0)
    layers = len(shares)
    half = layers // 2
    later = shares[half:] if layers > 1 else shares
    quiet: list[tuple[int, int]] = []
    for layer in np.flatnonzero(shares < QUIET).tolist():
        if quiet and quiet[-1][1] == layer - 1:
            quiet[-1] = (quiet[-1][0], layer)
        else:
            quiet.append((layer, layer))
    ratios = np.nan_to_num(found.norm_ratios, nan=0.0)
    return LayerSummary(
        int(shares.argmin()),
        int(shares.argmax()),
        (half if layers > 1 else 0, layers - 1),
        (float(later.min()), float(later.max())),
        tuple(quiet),
        int(ratios.argmax()),
    )
