"""Positions: an absolute table (sinusoidal or learned) with its frequencies, similarities and sizes (T5's
relative-position bias: viz.relative_bias)."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from i18n import _

from .labels import axis_labels, thin_ticks
from .style import RIGHT_LEGEND, Style


def wavelength(dim: int, d_model: int) -> float:
    """Period, in positions, of encoding dimension `dim`: 2*pi * 10000^(2i/d_model) with i = dim // 2."""
    return 2 * math.pi * 10000 ** (2 * (dim // 2) / d_model)


def _signed_heatmap(
    z: np.ndarray, style: Style, title: str, x_title: str, value: str, hover: str, height: int, bound: float = 1.0
) -> go.Figure:
    """Rows are positions; values in [-bound, bound] on the diverging scale."""
    fig = style.figure(
        xaxis=dict(title=x_title, showgrid=False), yaxis=dict(title=_("position"), autorange="reversed", showgrid=False)
    )
    fig.add_trace(
        go.Heatmap(
            z=z,
            colorscale=style.diverging,
            zmin=-bound,
            zmax=bound,
            colorbar=dict(title=value, thickness=14),
            hovertemplate=hover + "<extra></extra>",
        )
    )
    return style.apply(fig, title, height=height if not style.presentation else 560)


def encoding_heatmap(table: np.ndarray, style: Style, title: str | None = None, learned: bool = False) -> go.Figure:
    """Positions (rows) x dimensions (columns); a sinusoidal table lies in [-1, 1]. A learned one gets
    a scale symmetric around 0 that ends at the 99th percentile of its sizes, so that a few large
    entries (GPT-2 has some) do not wash out the rest; the hover shows every real value."""
    if learned and table.size:
        bound = float(np.quantile(np.abs(table), 0.99)) or 1.0
    else:
        bound = max(1.0, float(np.abs(table).max())) if table.size else 1.0
    return _signed_heatmap(
        table,
        style,
        title or _("The positional encoding matrix"),
        _("dimension"),
        _("value"),
        _("position %{y}<br>dimension %{x}<br>value %{z:.3f}"),
        440,
        bound,
    )


def encoding_curves(table: np.ndarray, dims: list[int], style: Style, title: str | None = None) -> go.Figure:
    """One curve per chosen dimension: low dimensions oscillate fast, high ones slowly."""
    d_model = table.shape[1]
    fig = style.figure(
        legend=RIGHT_LEGEND,
        xaxis=dict(title=_("position")),
        yaxis=dict(title=_("value"), range=[-1.1, 1.1] if np.abs(table).max() <= 1.0 else None),
    )
    positions = np.arange(table.shape[0])
    for dim in dims:
        if not 0 <= dim < d_model:
            raise ValueError(f"dimension {dim} is outside 0..{d_model - 1}")
        kind = "sin" if dim % 2 == 0 else "cos"
        fig.add_trace(
            go.Scatter(
                x=positions,
                y=table[:, dim],
                mode="lines",
                line=dict(width=style.line_width),
                name=_("dim {dim} ({kind}, period {period:.1f})", dim=dim, kind=kind, period=wavelength(dim, d_model)),
            )
        )
    title = title or _("Chosen dimensions against position")
    return style.apply(fig, title, height=420 if not style.presentation else 540)


def similarity_matrix(table: np.ndarray, style: Style, title: str | None = None) -> go.Figure:
    """Cosine similarity between the encodings of every pair of positions."""
    norms = np.linalg.norm(table, axis=1, keepdims=True)
    unit = table / np.where(norms == 0, 1.0, norms)
    return _signed_heatmap(
        unit @ unit.T,
        style,
        title or _("How similar the encodings of two positions are"),
        _("position"),
        _("cosine"),
        _("positions %{y} and %{x}<br>cosine %{z:.3f}"),
        460,
    )


def vector_sizes(
    token: np.ndarray,
    scaled: np.ndarray,
    position: np.ndarray,
    pieces: list[str],
    style: Style,
    title: str | None = None,
) -> go.Figure:
    """Per position: the raw token embedding, the same times sqrt(d_model), and the encoding."""
    if not (token.shape == scaled.shape == position.shape) or token.shape[0] != len(pieces):
        raise ValueError("token, scaled and position must be [positions, d_model] with one piece per position")
    labels = axis_labels(pieces)
    _ticks, shown = thin_ticks(labels, 1000, style.tick)
    fig = style.figure(
        barmode="group",
        legend=RIGHT_LEGEND,
        yaxis=dict(title=_("L2 norm")),
        xaxis=dict(type="category", tickmode="array", tickvals=shown, ticktext=shown, tickangle=-60),
    )
    for name, values in ((_("token embedding"), token), ("× √d_model", scaled), (_("positional encoding"), position)):
        fig.add_trace(
            go.Bar(
                x=labels,
                y=np.linalg.norm(values, axis=1),
                name=name,
                hovertemplate=f"%{{x}}<br>{name}: %{{y:.2f}}<extra></extra>",
            )
        )
    return style.apply(
        fig,
        title or _("Sizes (L2 norm) of what is added at each position"),
        height=420 if not style.presentation else 540,
    )


def mean_norms(token: np.ndarray, scaled: np.ndarray, position: np.ndarray) -> tuple[float, float, float]:
    """Mean L2 norm over positions of the token embedding, the scaled embedding and the encoding."""
    token_norm, scaled_norm, position_norm = (
        float(np.linalg.norm(values, axis=-1).mean()) for values in (token, scaled, position)
    )
    return token_norm, scaled_norm, position_norm
