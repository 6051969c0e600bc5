"""Attention sinks drawn: the share of attention each head puts on the first piece, and the size of the
residual stream at every position."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from i18n import _

from .labels import axis_labels
from .style import Style


def sink_shares(shares: np.ndarray, style: Style, title: str, threshold: float) -> go.Figure:
    """(layers, heads) share of each head's attention on the first piece (0 to 1); the heads at or above
    `threshold` (tagged "sink") carry their figure in the cell. A last column, after a gap, is each layer's
    mean over its heads, every figure written."""
    layers, heads = shares.shape
    means = shares.mean(axis=1)
    z = np.full((layers, heads + 2), np.nan, dtype=np.float32)
    z[:, :heads], z[:, -1] = shares, means
    text = [
        [f"{v:.2f}" if v >= threshold else "" for v in row] + ["", f"{mean:.0%}"]
        for row, mean in zip(shares, means, strict=True)
    ]
    written = layers * heads <= 400
    x = [f"H{h + 1}" for h in range(heads)] + ["\u200b", _("layer mean")]
    heatmap = dict(
        type="heatmap",
        z=z,
        x=x,
        y=[f"L{layer + 1}" for layer in range(layers)],
        zmin=0,
        zmax=1,
        colorscale=style.weights,
        text=text if written else [["" for _cell in row[:-1]] + [row[-1]] for row in text],
        texttemplate="%{text}",
        hoverongaps=False,
        colorbar=dict(title=dict(text=_("share on<br>first piece")), thickness=14),
        hovertemplate=_("%{y} %{x}<br>%{z:.2f} of its attention on the first piece<extra></extra>"),
    )
    cell = 22 if not style.presentation else 30
    return style.drawing(
        [heatmap],
        title,
        int(min(1100, max(280, 110 + layers * cell))),
        # no grid line down the gap before the layers' means
        xaxis=dict(side="top", type="category", tickmode="array", tickvals=x[:heads] + x[-1:], showgrid=False),
        yaxis=dict(title=dict(text=_("layer")), autorange="reversed", showgrid=False),
    )


def residual_norms(norms: np.ndarray, pieces: list[str], style: Style, title: str) -> go.Figure:
    """(layers + 1, positions) length of the residual stream: rows the embeddings then each layer's output,
    columns the positions; coloured by log₁₀ of the length, so that one huge position does not blank the
    rest (the hover gives the length)."""
    rows, positions = norms.shape
    labels = axis_labels(pieces[:positions])
    heatmap = dict(
        type="heatmap",
        z=np.log10(np.maximum(norms, 1e-6)).astype(np.float32),
        x=labels,
        y=[_("embeddings")] + [_("after L{layer}", layer=layer) for layer in range(1, rows)],
        customdata=norms.astype(np.float32),
        colorscale=style.weights,
        colorbar=dict(title=dict(text="log₁₀ ‖x‖"), thickness=14),
        hovertemplate="%{x}<br>%{y}<br>‖x‖ = %{customdata:.1f}<extra></extra>",
    )
    cell = 20 if not style.presentation else 28
    return style.drawing(
        [heatmap],
        title,
        int(min(1000, max(280, 140 + rows * cell))),
        xaxis=dict(type="category", title=dict(text=_("position")), showticklabels=positions <= 60),
        yaxis=dict(autorange="reversed", type="category"),
    )
