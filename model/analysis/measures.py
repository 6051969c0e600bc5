"""Numbers the Design choices page measures on a trace or on random vectors (numpy only)."""

from __future__ import annotations

import numpy as np

from ..engine import stages
from ..results import Trace


def raw_dot_variance(trace: Trace, stack: str = "encoder", kind: str = "self") -> np.ndarray:
    """[layers, heads] variance of the raw q·k over every (query, key) pair of each head: what the
    softmax would get without the 1/sqrt(d_k). Read from the recorded queries and keys, so the
    scaling switch does not change it."""
    rows = []
    for layer in range(trace.n_layers(stack)):
        q = trace.tensor(stages.attention(stack, kind, layer, "q"))[0]  # (h, T, d_k)
        k = trace.tensor(stages.attention(stack, kind, layer, "k"))[0]  # (h, S, d_k)
        rows.append((q @ k.transpose(0, 2, 1)).reshape(q.shape[0], -1).var(axis=1))
    return np.stack(rows)


def random_dot_variance(dims: list[int], samples: int = 4000, seed: int = 0) -> np.ndarray:
    """Variance of q·k for q, k with independent unit-variance entries, for each width in `dims`
    (the paper's footnote: it is d_k)."""
    rng = np.random.default_rng(seed)
    return np.array(
        [float((rng.standard_normal((samples, d)) * rng.standard_normal((samples, d))).sum(1).var()) for d in dims]
    )


def softmax_sharpness(
    dims: list[int], n_keys: int = 10, samples: int = 2000, scaled: bool = False, seed: int = 0
) -> dict[str, np.ndarray]:
    """For random unit-variance q, k of each width: the mean largest softmax weight, the mean
    entropy (nats) and the mean size of the softmax's gradient (Frobenius norm of its Jacobian
    diag(p) - p pᵀ), with the scores raw or divided by sqrt(d_k)."""
    rng = np.random.default_rng(seed)
    largest, entropy, gradient = [], [], []
    for d in dims:
        q = rng.standard_normal((samples, 1, d))
        k = rng.standard_normal((samples, n_keys, d))
        scores = (q * k).sum(-1) / (np.sqrt(d) if scaled else 1.0)  # (samples, n_keys)
        p = np.exp(scores - scores.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        largest.append(p.max(axis=1).mean())
        entropy.append(float(-(p * np.log(np.clip(p, 1e-30, 1.0))).sum(axis=1).mean()))
        jacobian = p[:, :, None] * (np.eye(n_keys)[None] - p[:, None, :])
        gradient.append(float(np.sqrt((jacobian**2).sum(axis=(1, 2))).mean()))
    return {"largest": np.array(largest), "entropy": np.array(entropy), "gradient": np.array(gradient)}


def mean_entropy(pattern: np.ndarray) -> float:
    """Mean entropy (nats) of the rows of an attention pattern [..., keys]; masked zeros add 0."""
    p = np.asarray(pattern, dtype=np.float64)
    return float(-(p * np.log(np.clip(p, 1e-30, 1.0))).sum(axis=-1).mean())


def nan_share(trace: Trace) -> list[tuple[str, float]]:
    """Each recorded stage with the share of its entries that are NaN, in execution order."""
    return [
        (name, float(np.isnan(array).mean()) if np.issubdtype(array.dtype, np.floating) else 0.0)
        for name, array in trace.tensors.items()
    ]
