"""Attention sinks: how much attention lands on the first piece, per layer and head, and how large the
residual stream is at each position (the first piece's usually stands out)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..engine import stages
from ..results import Trace

SINK = 0.5  # a head whose queries put at least this share on the first piece, on average, is a sink


@dataclass(frozen=True)
class Sinks:
    """One block's sink figures on one text."""

    stack: str
    shares: np.ndarray  # (layers, heads) mean over queries after the first of the weight on key 0
    norms: np.ndarray  # (layers + 1, positions) residual stream norm: the embeddings', then each layer's output
    first_norm_ratio: float  # the first piece's norm over the median of the others, at the last layer (NaN: one piece)

    @property
    def sink_heads(self) -> int:
        """Heads whose mean share is at least SINK."""
        return int((self.shares >= SINK).sum())

    @property
    def mean_share(self) -> float:
        """Share of all attention (every head, every query after the first) on the first piece."""
        return float(self.shares.mean())


def first_shares(patterns: list[np.ndarray]) -> np.ndarray:
    """(layers, heads): each head's weight on key 0, averaged over its queries after the first (the first
    query of a causal block can only see itself); over every query when there is one."""
    out = []
    for pattern in patterns:  # (heads, queries, keys)
        rows = pattern[:, 1:, 0] if pattern.shape[1] > 1 else pattern[:, :, 0]
        out.append(rows.mean(axis=1))
    return np.stack(out).astype(np.float64)


def residual_norms(trace: Trace, stack: str, norm_first: bool) -> np.ndarray:
    """(layers + 1, positions) the length of the residual stream at every position: the stack's input
    (the embeddings) and then each layer's output."""
    side = "source" if stack == "encoder" else "target"
    rows = [trace.tensor(stages.embedding("sum", side))[0]]
    layers = trace.n_layers(stack)
    rows += [trace.tensor(stages.layer_output(stack, layer, norm_first))[0] for layer in range(layers)]
    return np.stack([np.linalg.norm(r.astype(np.float32), axis=-1) for r in rows]).astype(np.float64)


def sinks(trace: Trace, stack: str, norm_first: bool) -> Sinks:
    """Sink shares of `stack`'s self-attention and the residual norms of its positions on `trace`."""
    patterns = [trace.pattern(stack, "self", layer) for layer in range(trace.n_layers(stack))]
    norms = residual_norms(trace, stack, norm_first)
    last = norms[-1]
    ratio = float(last[0] / np.median(last[1:])) if last.size > 1 else float("nan")
    return Sinks(stack, first_shares(patterns), norms, ratio)
