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
    fig = style.figure()
    fig.add_trace(
        go.Heatmap(
            z=z,
            x=x,
            y=[f"L{layer + 1}" for layer in range(layers)],
            zmin=0,
            zmax=1,
            colorscale=style.weights,
            text=text if written else [["" for _cell in row[:-1]] + [row[-1]] for row in text],
            texttemplate="%{text}",
            hoverongaps=False,
            colorbar=dict(title=_("share on<br>first piece"), thickness=14),
            hovertemplate=_("%{y} %{x}<br>%{z:.2f} of its attention on the first piece<extra></extra>"),
        )
    )
    fig.update_xaxes(side="top", type="category", tickmode="array", tickvals=x[:heads] + x[-1:])
    fig.update_yaxes(title_text=_("layer"), autorange="reversed")
    cell = 22 if not style.presentation else 30
    fig = style.apply(fig, title, height=int(min(1100, max(280, 110 + layers * cell))))
    fig.update_xaxes(showgrid=False)  # no line down the gap before the layers' means
    fig.update_yaxes(showgrid=False)
    return fig


def residual_norms(norms: np.ndarray, pieces: list[str], style: Style, title: str) -> go.Figure:
    """(layers + 1, positions) length of the residual stream: rows the embeddings then each layer's output,
    columns the positions; coloured by log₁₀ of the length, so that one huge position does not blank the
    rest (the hover gives the length)."""
    rows, positions = norms.shape
    labels = axis_labels(pieces[:positions])
    fig = style.figure()
    fig.add_trace(
        go.Heatmap(
            z=np.log10(np.maximum(norms, 1e-6)).astype(np.float32),
            x=labels,
            y=[_("embeddings")] + [_("after L{layer}", layer=layer) for layer in range(1, rows)],
            customdata=norms.astype(np.float32),
            colorscale=style.weights,
            colorbar=dict(title="log₁₀ ‖x‖", thickness=14),
            hovertemplate="%{x}<br>%{y}<br>‖x‖ = %{customdata:.1f}<extra></extra>",
        )
    )
    fig.update_xaxes(type="category", title_text=_("position"), showticklabels=positions <= 60)
    fig.update_yaxes(autorange="reversed", type="category")
    cell = 20 if not style.presentation else 28
    return style.apply(fig, title, height=int(min(1000, max(280, 140 + rows * cell))))
