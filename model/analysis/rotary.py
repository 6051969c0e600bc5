"""Rotary positions (RoPE) as plain data, computed with the engine's own rotation code
(`positional.RotaryPositions`, `positional.rotate`): each base's frequencies θ_i, the angle of every
position and pair, and the property that makes it relative: a query at m and a key at n meet with a
score that depends only on m − n, so moving both by k changes nothing."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..engine import stages
from ..engine.config import ModelConfig
from ..engine.positional import RotaryPositions, rotate
from ..results import Trace


@dataclass(frozen=True)
class RotaryBase:
    """One base θ of a model's rotation and what turns by it."""

    base: float  # the model's own (before any what-if factor)
    layers: tuple[int, ...]  # decoder (or encoder) layers that turn by it, from 0
    kind: str  # "every layer", "sliding-window layers" or "full-attention layers"
    window: int  # the sliding window of its layers (0: none)
    frequencies: np.ndarray  # (dims / 2,) θ_i = base^(−2i/dims), radians per position, of base × factor


@dataclass(frozen=True)
class RelativeDemo:
    """One query and one key of the typed text, their rotation taken off, then turned to other positions."""

    layer: int
    head: int
    query_position: int
    key_position: int
    shift: int  # k: both moved by it
    offsets: np.ndarray  # (D,) m − n
    scores: np.ndarray  # (D,) the score with the key at 0 and the query at the offset (negative: a later key)
    shifted: np.ndarray  # (D,) the same with the key at k and the query at k + offset
    grid: np.ndarray  # (G, G) score with the query at row m and the key at column n
    at_text: float  # the score at the positions of the text
    at_shifted: float  # the score with both moved by k
    unrotated: float  # the score with no rotation at all (q · k of the raw projections)


def _stack(cfg: ModelConfig) -> str:
    return "decoder" if cfg.n_decoder_layers else "encoder"


def _table(cfg: ModelConfig, base: float) -> RotaryPositions:
    return RotaryPositions(cfg.rotary_dims, base)


def bases(cfg: ModelConfig, factor: float = 1.0) -> list[RotaryBase]:
    """The model's rotary bases, one entry per base (Gemma 3: its sliding layers' and its full layers');
    empty for a model that does not rotate."""
    if cfg.positional != "rotary":
        return []
    layers = cfg.n_decoder_layers or cfg.n_encoder_layers
    by_base: dict[float, list[int]] = {}
    for layer in range(layers):
        base = cfg.rotary_base_of(layer) if cfg.n_decoder_layers else cfg.rotary_base
        by_base.setdefault(base, []).append(layer)
    out = []
    for base, members in by_base.items():
        window = cfg.window(members[0]) if cfg.n_decoder_layers else 0
        kind = "every layer" if len(by_base) == 1 else "sliding-window layers" if window else "full-attention layers"
        freqs = _table(cfg, base).frequencies(factor).numpy().astype(np.float64)
        out.append(RotaryBase(base, tuple(members), kind, window, freqs))
    return out


def angles(frequencies: np.ndarray, positions: int) -> np.ndarray:
    """(positions, pairs) the angle, in radians, by which each pair turns at each position."""
    return np.arange(positions, dtype=np.float64)[:, None] * frequencies[None, :]


def _turn(vector: torch.Tensor, table: RotaryPositions, positions: torch.Tensor, factor: float) -> torch.Tensor:
    """(d_k,) -> (P, d_k): the vector turned to each of `positions` by the engine's rotation."""
    out = []
    for position in positions.tolist():
        cos, sin = table(int(position), 1, factor)  # (1, dims)
        out.append(rotate(vector[None, None, None, :], cos, sin)[0, 0, 0])
    return torch.stack(out)


def relative_demo(
    cfg: ModelConfig,
    trace: Trace,
    layer: int,
    head: int,
    query_position: int,
    key_position: int,
    shift: int,
    factor: float = 1.0,
    reach: int = 24,
    grid: int = 24,
    what_if: float | None = None,
) -> RelativeDemo:
    """The query of `query_position` and the key of `key_position` (self-attention of `layer`, `head`, as
    recorded in `trace`, a run with the rotation on at base × `factor`), their rotation undone, then turned
    to every offset from −reach to reach (the key at 0, then at `shift`), and on a grid of positions, by
    base × `what_if` (default: `factor`)."""
    stack = _stack(cfg)
    base = cfg.rotary_base_of(layer) if stack == "decoder" else cfg.rotary_base
    table = _table(cfg, base)
    q_rec = torch.tensor(np.array(trace.tensor(stages.attention(stack, "self", layer, "q"))[0, head]))
    k_rec = torch.tensor(np.array(trace.tensor(stages.attention(stack, "self", layer, "k"))[0, head]))
    q_rec, k_rec = q_rec.float(), k_rec.float()
    cos_q, sin_q = table(query_position, 1, factor)
    cos_k, sin_k = table(key_position, 1, factor)
    # the rotation is orthogonal: turning back by the same angle (sin negated) gives the raw projection
    q = rotate(q_rec[query_position][None, None, None, :], cos_q, -sin_q)[0, 0, 0]
    k = rotate(k_rec[key_position][None, None, None, :], cos_k, -sin_k)[0, 0, 0]
    factor = factor if what_if is None else what_if  # from here on: the turns shown
    scale = 1.0 / float(np.sqrt(cfg.score_scale_width or cfg.d_k)) if cfg.scale_scores else 1.0

    def score(m: torch.Tensor, n: torch.Tensor) -> np.ndarray:
        turned_q, turned_k = _turn(q, table, m, factor), _turn(k, table, n, factor)
        return ((turned_q * turned_k).sum(-1) * scale).double().numpy()

    offsets = torch.arange(-reach, reach + 1)
    # negative offsets put the query first: both start far enough that every position is >= 0
    origin = torch.full_like(offsets, reach)
    near = score(origin + offsets, origin)
    moved = score(origin + shift + offsets, origin + shift)
    points = torch.arange(grid)
    table_q = _turn(q, table, points, factor)
    table_k = _turn(k, table, points, factor)
    grid_scores = (table_q @ table_k.T * scale).double().numpy()
    pair = score(
        torch.tensor([query_position, query_position + shift]), torch.tensor([key_position, key_position + shift])
    )
    return RelativeDemo(
        layer,
        head,
        query_position,
        key_position,
        shift,
        offsets.numpy(),
        near,
        moved,
        grid_scores,
        float(pair[0]),
        float(pair[1]),
        float((q * k).sum() * scale),
    )
