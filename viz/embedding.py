"""Sentence embeddings of an encoder-only model: the vectors side by side, and their similarity."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from i18n import _

from .labels import escape_plotly
from .style import Style


def embedding_strips(vectors: list[np.ndarray], names: list[str], style: Style, title: str) -> go.Figure:
    """One row per sentence, one column per dimension, coloured by value on a shared signed scale."""
    if not vectors or len(vectors) != len(names):
        raise ValueError("give one name per vector")
    widths = {v.shape for v in vectors}
    if len(widths) != 1 or len(next(iter(widths))) != 1:
        raise ValueError(f"vectors must be 1-D and of one width, got shapes {sorted(widths)}")
    matrix = np.stack(vectors)
    bound = float(np.abs(matrix).max()) or 1.0
    labels = [escape_plotly(n if len(n) <= 40 else n[:39] + "…") for n in names]
    fig = style.figure(
        xaxis=dict(title=_("dimension")), yaxis=dict(autorange="reversed", tickfont=dict(size=style.tick))
    )
    fig.add_trace(
        go.Heatmap(
            z=matrix,
            y=labels,
            colorscale=style.diverging,
            zmin=-bound,
            zmax=bound,
            colorbar=dict(title=dict(text=_("value"), side="right"), thickness=10),
            hovertemplate=_("%{y}<br>dimension %{x}<br>value %{z:.4f}<extra></extra>"),
        )
    )
    return style.apply(fig, title, height=(140 if style.presentation else 110) + 60 * len(vectors))
